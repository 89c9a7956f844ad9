"""`python -m devassert …` runs the devassert binary installed with this package."""

import os
import sys

from ._binary import _binary, _no_binary_message


def main():
    path = _binary()
    if path is None:
        sys.stderr.write(_no_binary_message())
        return 2
    if os.name == "nt":
        import subprocess

        return subprocess.call([path, *sys.argv[1:]])
    os.execv(path, [path, *sys.argv[1:]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
