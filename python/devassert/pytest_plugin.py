"""pytest plugin: ``pytest --devassert`` runs every test under the guard.

Registered through the ``pytest11`` entry point ``devassert.pytest_plugin``
(``-p devassert.pytest_plugin`` loads it from a source checkout,
``-p no:devassert.pytest_plugin`` blocks it). Options:

- ``--devassert``: the guard at level "on" around every test;
- ``--devassert-level=on|async|strict|off``: another level (implies
  ``--devassert``; ``off`` overrides the ini value);
- ini ``devassert = on|async|strict|off`` (default off): the same from
  pytest.ini / pyproject.toml / setup.cfg.

Around each test (setup, call and teardown) the guard is on at that level,
and afterwards back where it was, so no test leaks it into the next. A test
that runs an op the guard stops fails with torch's exception (a
``DeviceAssertPrevented``, still an ``IndexError``/``RuntimeError``), and its
report gets a "devassert" section with the diagnosis: rule, op, values, the
test's line, the likely causes and the fixes. The terminal summary lists the
stopped ops per test, also those a test caught itself.

With the option off this module defines two hooks and imports nothing else:
no torch, no guard, no per-test hook.
"""

import sys

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


def _level(config):
    """The level the options ask for: --devassert-level, else the ini value,
    else "on" with --devassert, else off."""
    cli = config.getoption("devassert_level")
    if cli is not None:
        return cli
    raw = str(config.getini("devassert")).strip().lower()
    ini = _BOOL.get(raw, raw)
    if ini not in _LEVELS:
        raise pytest.UsageError(f"devassert: ini value devassert = {raw!r}: expected one of {', '.join(_LEVELS)}")
    if ini != "off":
        return ini
    return "on" if config.getoption("devassert") else "off"


def pytest_configure(config):
    level = _level(config)
    if level != "off":
        config.pluginmanager.register(_Guarded(level, str(config.rootpath)), "devassert-guard")


class _Guarded:
    """The hooks that exist only while the option is on."""

    def __init__(self, level, root):
        self.level = level
        self.root = root  # files under it are named relative to it, as pytest names tests
        self.tests = 0
        self.current = []  # the findings the guard raised in the running test
        self.reported = 0  # how many of them a phase's report already holds
        self.stopped = []  # (nodeid, outcome, entries) per test that had any

    # --- the guard around each test ------------------------------------------------

    def pytest_configure(self, config):
        from . import _report

        _report.listeners.append(self.current_append)

    def pytest_unconfigure(self, config):
        from . import _report

        if self.current_append in _report.listeners:
            _report.listeners.remove(self.current_append)

    def current_append(self, finding):
        self.current.append(finding)

    def pytest_report_header(self, config):
        return f"devassert: guard level {self.level!r} around every test"

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.current.clear()
        self.reported = 0
        self.tests += 1
        previous = self._on()
        try:
            return (yield)
        finally:
            self._off(previous)

    def _on(self):
        """Guard now when torch is imported; else from the moment the test
        imports it (a test that never does pays nothing). Returns the level
        to restore."""
        if "torch" in sys.modules:
            from . import _intercept

            previous = _intercept.current_level()
            _intercept.set_level(self.level)
            return previous
        from . import _hook

        _hook.install(self.level)
        return "off"

    def _off(self, previous):
        from . import _hook

        _hook.remove()
        intercept = sys.modules.get("devassert._intercept")
        if intercept is not None:
            intercept.set_level(previous)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        result = yield
        # At "async" a violation on a CUDA tensor is raised at a later guarded
        # op: one still queued when the test returns belongs to this test.
        if self.level == "async":
            pending = sys.modules.get("devassert._async")
            if pending is not None and pending.armed:
                pending.poll(wait=True)
        return result

    # --- the diagnosis in the report ---------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        from . import _diagnosis

        new = self.current[self.reported :]
        self.reported = len(self.current)
        raised = _diagnosis.finding_of(call.excinfo.value) if call.excinfo is not None else None
        raised_id = _raise_id(raised)
        if raised is not None and all(_raise_id(f) != raised_id for f in new):
            new.append(raised)  # raised in a DataLoader worker, or before the listener saw it
        if raised is not None:
            report.sections.append(("devassert: op stopped by the guard", _diagnosis.render(raised, root=self.root)))
        if new:
            # A plain attribute of JSON values: it survives xdist's report serialisation.
            report.devassert = [{"summary": _diagnosis.one_line(f, self.root), "raised": raised_id is not None and _raise_id(f) == raised_id} for f in new]
        return report

    def pytest_runtest_logreport(self, report):
        entries = getattr(report, "devassert", None)
        if entries:
            outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
            if outcome == "failed" and report.when != "call":
                outcome = "error"  # as pytest counts a failed setup or teardown
            self.stopped.append((report.nodeid, report.when, outcome, entries))

    def pytest_terminal_summary(self, terminalreporter):
        tr = terminalreporter
        if not self.stopped:
            tr.write_line(f"devassert: guard level {self.level!r}: no op stopped")
            return
        ops = sum(len(e) for _, _, _, e in self.stopped)
        tests = len({nodeid for nodeid, _, _, _ in self.stopped})
        tr.write_sep("=", f"devassert: {ops} op{'s' if ops != 1 else ''} stopped by the guard in {tests} test{'s' if tests != 1 else ''}")
        for nodeid, when, outcome, entries in self.stopped:
            phase = "" if when == "call" else f" ({when})"
            for e in entries:
                how = outcome.upper() if e["raised"] else "CAUGHT"
                tr.write_line(f"{how} {nodeid}{phase}: {e['summary']}" + ("" if e["raised"] else " (the test caught the exception)"))


def _raise_id(finding):
    if finding is None:
        return None
    return (finding.get("evidence") or {}).get("raise_id")
