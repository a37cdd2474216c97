"""CoordinateVNF script of the Sample VNF package (change_current_package).

Written for Tacker's coordinate script contract: the VNFM runs `python3 coordinate_vnf.py` with
the VNFC's parameters pickled on stdin (the vdu_params entry's 'cp_name', 'username', 'password',
plus 'ssh_ip' of that CP, 'is_rollback', 'inst', 'vnfc_info_id') and treats exit status 0 as
success; on failure the last line on stderr is the reason. A real VNF's script would log in to
the VNFC (ssh_ip) and reconfigure the application; this sample only checks its input. For tests
it fails on purpose when the VNFC's username is "fail".
"""
import pickle
import sys


def main():
    vnfc_param = pickle.load(sys.stdin.buffer)
    if vnfc_param.get("username") == "fail":
        sys.stderr.write("coordinate_vnf: the VNFC refused the coordination\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
