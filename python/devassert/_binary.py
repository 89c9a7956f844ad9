"""The devassert binary installed with this package, and how to get it when
it is not: `python -m devassert`, preflight's scans and the notebook's
explain run it."""

import os
import shlex
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


def _how_to_get_binary():
    """How to get the binary, as indented lines: devassert is not on a package
    index; its wheel is built from the repository."""
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isfile(os.path.join(checkout, "scripts", "build-wheel")):
        # Running from a checkout (python/ on sys.path): name its paths.
        build = shlex.quote(os.path.join(checkout, "scripts", "build-wheel"))
        wheel = shlex.quote(os.path.join(checkout, "dist", "")) + "devassert-*.whl"
        crate = shlex.quote(os.path.join(checkout, "crates", "devassert"))
        where = "this checkout"
    else:
        build, wheel, crate, where = "scripts/build-wheel", "dist/devassert-*.whl", "crates/devassert", "a checkout of the devassert repository"
    return (
        f"  build it from {where} (it is not on PyPI):\n"
        f"    {build}    # once: the manylinux wheel (needs Rust to build, not to install)\n"
        f"    {shlex.quote(sys.executable)} -m pip install {wheel}    # the binary and this package, in this environment\n"
        f"  or: cargo install --path {crate}\n"
    )


def _no_binary_message():
    return "devassert: error: the devassert binary is not installed next to this package\n" + _how_to_get_binary()
