"""Sample LCM script of the Sample VNF package (Vnflcm instantiate_start / instantiate_end / ...).

Written for Tacker's script contract, so it runs unchanged on Tacker and on this VNFM: the VNFM
runs `python3 sample_script.py` with a pickled dict on stdin
  {'operation': 'instantiate_start', 'request': {...}, 'vnf_instance': {...},
   'grant_request': {...}, 'grant_response': {...}, 'tmp_csar_dir': '...'}
and treats exit status 0 as success; on failure the last line on stderr is the reason.
It touches nothing: no files, no network. For tests it fails on purpose when the request's
additionalParams.sample_script_fail names the operation being run, or when
additionalParams.sample_script_require names a parameter the request does not carry (the VNFM
hands a script the additionalParams as given, credentials included, while it records them
without), or when additionalParams.sample_script_require_vnfc names the operation being run and
the VNF instance it is handed has no VNFC yet (an _end hook sees the VNF as the operation left it),
or when additionalParams.sample_script_expect_vnfcs is "<operation>=<n>" for the operation being run
and the VNF instance it is handed has another number of VNFCs.
"""
import pickle
import sys


def main():
    params = pickle.load(sys.stdin.buffer)
    operation = params.get("operation", "")
    request = params.get("request") or {}
    additional = request.get("additionalParams") or {}
    if additional.get("sample_script_fail") == operation:
        sys.stderr.write("sample_script: %s failed as requested\n" % operation)
        return 1
    required = additional.get("sample_script_require")
    if required and not additional.get(required):
        sys.stderr.write("sample_script: %s needs additionalParams.%s\n" % (operation, required))
        return 1
    if additional.get("sample_script_require_vnfc") == operation:
        info = (params.get("vnf_instance") or {}).get("instantiatedVnfInfo") or {}
        if not info.get("vnfcResourceInfo"):
            sys.stderr.write("sample_script: %s was handed a VNF instance with no VNFC\n" % operation)
            return 1
    expected = str(additional.get("sample_script_expect_vnfcs") or "").split("=")
    if len(expected) == 2 and expected[0] == operation:
        info = (params.get("vnf_instance") or {}).get("instantiatedVnfInfo") or {}
        found = len(info.get("vnfcResourceInfo") or [])
        if str(found) != expected[1]:
            sys.stderr.write("sample_script: %s was handed %d VNFCs, not %s\n" % (operation, found, expected[1]))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
