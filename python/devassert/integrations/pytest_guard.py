"""The hooks of `pytest --devassert` (see `pytest_plugin.py`): the guard
around each test, the diagnosis in the report of a test it stopped, and the
stopped ops in the terminal summary. Imported only when the option is on.

Old-style hook wrappers (`hookwrapper=True`) and `trylast`: every pluggy that
pytest 7 and later use knows them.
"""

import sys

import pytest

from .._checks import report as _report
from .._findings import diagnosis as _diagnosis
from .._guard import hook as _hook
from .._guard.level import env_level as _env_level


def session_on(level):
    """The guard at `level` for the session, from before collection: (what
    to restore at its end, the warning naming entry points bound before it
    was installed, or None)."""
    before = _on(level)
    line = None
    if before[0] == "level":
        from .._guard import captured as _captured
        from .._guard import intercept as _intercept

        line = _captured.warning(_intercept._installed)
    return before, line


def _on(level):
    """Guard now when torch is imported; else from the moment the code
    imports it (a suite that never does pays nothing). Returns what to
    restore: ("level", L), or ("hook", whether a hook was waiting for torch,
    its level): `devassert run -- pytest` leaves one waiting."""
    if "torch" in sys.modules:
        from .._guard import intercept as _intercept

        previous = _intercept.current_level()
        _intercept.set_level(level)
        return ("level", previous)
    before = ("hook", _hook._HOOK in sys.meta_path, _hook._level)
    _hook.install(level)
    return before


def _off(before):
    """Back to what `_on` returned."""
    if before[0] == "hook":
        _, waiting, level = before
        if "torch" not in sys.modules:
            # Torch was never imported: the hook as it was.
            if waiting:
                _hook.install(level)
            else:
                _hook.remove()
            return
        # Torch was imported: the guard the waiting hook would have installed.
        _hook._level = level
        previous = (level or _env_level()) if waiting else "off"
    else:
        previous = before[1]
    intercept = sys.modules.get("devassert._guard.intercept")
    if intercept is not None:
        intercept.set_level(previous)


class Guarded:
    """The hooks that exist only while the option is on."""

    def __init__(self, level, root, session):
        self.level = level
        self.session = session  # session_on's answer: undone at the end
        self.root = root  # files under it are named relative to it, as pytest names tests
        self.current = []  # the findings the guard raised in the running test
        self.reported = 0  # how many of them a phase's report already holds
        self.stopped = []  # (nodeid, phase, outcome, entries) per report that had any

    # --- the guard around each test ------------------------------------------------

    def pytest_configure(self, config):
        _report.listeners.append(self.current_append)

    def pytest_unconfigure(self, config):
        if self.current_append in _report.listeners:
            _report.listeners.remove(self.current_append)
        _off(self.session[0])

    def current_append(self, finding):
        self.current.append(finding)

    def pytest_report_header(self, config):
        lines = [f"devassert: guard level {self.level!r} around every test"]
        if self.session[1]:
            lines.append(self.session[1])
        return lines

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.current.clear()
        self.reported = 0
        before = _on(self.level)
        try:
            yield
        finally:
            _off(before)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_call(self, item):
        """After the test body returned (not called when it raised): at
        "async" a violation on a CUDA tensor is raised at a later guarded op,
        so one still queued belongs to this test and fails it."""
        if self.level == "async":
            pending = sys.modules.get("devassert._checks.deferred")
            if pending is not None and pending.armed:
                pending.poll(wait=True)

    # --- the diagnosis in the report ---------------------------------------------------

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
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
