"""Coordination script of the Sample VNF package (Vnflcm change_current_package).

Reads one JSON object from stdin, for example
  {"operation": "change_current_package", "is_rollback": false,
   "vnfc": {"id": "...", "vduId": "VDU1"}, "request": {...}}
and prints one JSON object saying the VNFC was coordinated. It touches nothing else.
For tests it fails on purpose (exit status 1) when the request's
additionalParams.coordinate_vnf_fail is true.
"""
import json
import sys


def main():
    params = json.load(sys.stdin)
    request = params.get("request") or {}
    additional = request.get("additionalParams") or {}
    vnfc = params.get("vnfc") or {}
    is_rollback = bool(params.get("is_rollback", False))
    if additional.get("coordinate_vnf_fail") is True:
        print(json.dumps({"coordinated": False, "isRollback": is_rollback}))
        sys.stderr.write("coordinate_vnf: failed as requested\n")
        return 1
    print(json.dumps({
        "coordinated": True,
        "isRollback": is_rollback,
        "vnfcId": vnfc.get("id"),
        "vduId": vnfc.get("vduId"),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
