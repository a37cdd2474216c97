"""Sample LCM script of the Sample VNF package (Vnflcm instantiate_start / instantiate_end).

Reads one JSON object from stdin, for example
  {"operation": "instantiate_start", "request": {...}, "vnf_instance": {...}}
and prints one JSON object to stdout. It touches nothing else: no files, no network.
For tests it fails on purpose (exit status 1) when the request's
additionalParams.sample_script_fail names the operation being run.
"""
import json
import sys


def main():
    params = json.load(sys.stdin)
    operation = params.get("operation", "")
    request = params.get("request") or {}
    additional = request.get("additionalParams") or {}
    instance = params.get("vnf_instance") or {}
    if additional.get("sample_script_fail") == operation:
        print(json.dumps({"operation": operation, "result": "FAILED"}))
        sys.stderr.write("sample_script: %s failed as requested\n" % operation)
        return 1
    print(json.dumps({
        "operation": operation,
        "result": "OK",
        "vnfInstanceId": instance.get("id"),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
