"""The agentvcr command: runs the binary with the arguments given."""

import os
import subprocess
import sys

from agentvcr import binary_path


def main():
    try:
        exe = binary_path()
    except FileNotFoundError as err:
        sys.stderr.write("%s\n" % err)
        return 2
    args = [exe] + sys.argv[1:]
    if sys.platform != "win32":
        os.execv(exe, args)
    return subprocess.call(args)


if __name__ == "__main__":
    sys.exit(main())
