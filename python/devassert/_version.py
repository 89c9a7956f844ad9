"""``devassert.__version__``: the version of the installed wheel (its
metadata, which maturin takes from the workspace's Cargo.toml), or, when this
package runs from a checkout (``python/`` on sys.path), that checkout's
Cargo.toml itself, which is the version being worked on."""

import os
import re
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed

# The [workspace.package] table's version line.
_WORKSPACE_VERSION = re.compile(r'^\[workspace\.package\]\s*$(?:(?!^\[).)*?^version\s*=\s*"([^"]+)"', re.M | re.S)


def version():
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        with open(os.path.join(checkout, "Cargo.toml"), encoding="utf-8") as f:
            found = _WORKSPACE_VERSION.search(f.read())
        if found and os.path.isfile(os.path.join(checkout, "python", "devassert", "__init__.py")):
            return found[1]
    except OSError:
        pass
    try:
        return installed("devassert")
    except PackageNotFoundError:
        return "unknown"
