"""pytest plugin: ``pytest --devassert`` runs every test under the guard.

Registered through the ``pytest11`` entry point ``devassert.pytest_plugin``,
the module that re-exports these hooks (``-p devassert.pytest_plugin`` loads
it from a source checkout, ``-p no:devassert.pytest_plugin`` blocks it).
Options:

- ``--devassert``: the guard at level "on" around every test;
- ``--devassert-level=on|async|strict|off``: another level (implies
  ``--devassert``; ``off`` overrides the ini value);
- ini ``devassert = on|async|strict|off`` (default off): the same from
  pytest.ini / pyproject.toml / setup.cfg.

The guard goes on before the conftest files and test modules are imported
(``pytest_load_initial_conftests``) and stays on until the session ends: a
name bound at import (``from torch import gather``) is the guarded op, and a
``__torch_function__`` table keyed by ``torch.gather`` matches what the guard
hands over. Names bound earlier still (a plugin that imported torch first)
are named in a one-line warning in the report header. Around each test
(setup, call and teardown) the guard is at that level, and afterwards back
where it was, so no test leaks a level of its own into the next. A test
that runs an op the guard stops fails with torch's exception (a
``DeviceAssertPrevented``, still an ``IndexError``/``RuntimeError``), and its
report gets a "devassert" section with the diagnosis: rule, op, values, the
test's line, the likely causes and the fixes. The terminal summary lists the
stopped ops per test, also those a test caught itself.

With the option off this module declares the options and imports nothing
else: no torch, no guard, no per-test hook (those are in `pytest_guard.py`,
imported only when the option is on).
"""

import pytest

_BOOL = {"": "off", "0": "off", "false": "off", "no": "off", "none": "off", "1": "on", "true": "on", "yes": "on"}
_LEVELS = ("on", "async", "strict", "off")


def pytest_addoption(parser):
    group = parser.getgroup("devassert", "devassert: stop ops that would fail a CUDA device-side assert")
    group.addoption(
        "--devassert",
        action="store_true",
        default=False,
        help="run every test under the devassert guard: an op whose values would fail a device-side assert fails the test, with the diagnosis",
    )
    group.addoption(
        "--devassert-level",
        choices=_LEVELS,
        default=None,
        help="the guard's level around every test (implies --devassert; off overrides the ini value): on, async, strict or off",
    )
    parser.addini("devassert", "the devassert guard's level around every test: on, async, strict or off (default)", default="off")


def _level(config, options=None):
    """The level the options ask for: --devassert-level, else the ini value,
    else "on" with --devassert, else off. `options`: the namespace parsed so
    far, before pytest_configure."""

    def option(name):
        return getattr(options, name, None) if options is not None else config.getoption(name)

    cli = option("devassert_level")
    if cli is not None:
        return cli
    raw = str(config.getini("devassert")).strip().lower()
    ini = _BOOL.get(raw, raw)
    if ini not in _LEVELS:
        raise pytest.UsageError(f"devassert: ini value devassert = {raw!r}: expected one of {', '.join(_LEVELS)}")
    if ini != "off":
        return ini
    return "on" if option("devassert") else "off"


# What the guard was before the session turned it on, and the warning.
_SESSION = pytest.StashKey()


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """The guard on before the conftest files and test modules are imported."""
    level = _level(early_config, early_config.known_args_namespace)
    if level != "off":
        from .pytest_guard import session_on

        early_config.stash[_SESSION] = session_on(level)


def pytest_configure(config):
    level = _level(config)
    if level != "off":
        from .pytest_guard import Guarded, session_on

        # A plugin registered after the conftest files were loaded: from now.
        session = config.stash.get(_SESSION, None) or session_on(level)
        config.pluginmanager.register(Guarded(level, str(config.rootpath), session), "devassert-guard")
