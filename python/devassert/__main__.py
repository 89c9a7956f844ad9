"""`python -m devassert …` runs the devassert binary installed with this package."""

import os
import shutil
import sys
import sysconfig


def _binary():
    exe = "devassert.exe" if os.name == "nt" else "devassert"
    # The wheel puts the binary in the scripts folder of the environment it is installed in.
    for scheme in (sysconfig.get_default_scheme(), f"{os.name}_user"):
        try:
            path = os.path.join(sysconfig.get_path("scripts", scheme), exe)
        except KeyError:
            continue
        if os.path.isfile(path):
            return path
    return shutil.which(exe)


def main():
    path = _binary()
    if path is None:
        sys.stderr.write("devassert: error: the devassert binary is not installed next to this package (pip install devassert)\n")
        return 2
    if os.name == "nt":
        import subprocess

        return subprocess.call([path, *sys.argv[1:]])
    os.execv(path, [path, *sys.argv[1:]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
