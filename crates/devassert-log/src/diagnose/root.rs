//! The root failure: how it showed itself (an assertion group, the
//! device-side assert error alone, a ROCm abort, an illegal access, a CPU
//! message) and which came first.

use crate::errors::HostKind;
use crate::reader::{AssertGroup, Facts, HostEvent, Pos};
use crate::traceback::Traceback;

/// How the root failure showed itself.
pub(super) enum Root<'a> {
    Assert(&'a AssertGroup),
    /// The device-side assert error with no kernel line.
    NoKernelLine(&'a HostEvent),
    /// ROCm's kernel `abort()`: `HIP error: unspecified launch failure` / HSA queue abort.
    RocmAbort(&'a HostEvent),
    IllegalAccess(&'a HostEvent),
    Cpu(usize),
    /// Nothing else, and the log ends inside a traceback: its frames, no
    /// error line (a paste or a tail cut short).
    CutTraceback(&'a Traceback),
}

/// Assertion groups, earliest first: by their timestamps when every group has
/// one of the same clock, else by position in the inputs.
pub(super) fn group_order(facts: &Facts) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..facts.groups.len()).collect();
    let g = &facts.groups;
    let kinds: Vec<_> = g.iter().map(|x| x.first_time.map(|t| t.kind)).collect();
    let timed = !g.is_empty() && kinds.iter().all(|k| k.is_some() && *k == kinds[0]);
    if timed {
        idx.sort_by_key(|&i| (g[i].first_time, g[i].first));
    } else {
        idx.sort_by_key(|&i| g[i].first);
    }
    idx
}

pub(super) fn host(facts: &Facts, kind: HostKind) -> Option<&HostEvent> {
    facts.host.iter().find(|e| e.kind == kind)
}

pub(super) fn roots<'a>(facts: &'a Facts, order: &[usize]) -> Vec<Root<'a>> {
    let first_assert: Option<Pos> = order.first().map(|&i| facts.groups[i].first);
    let device_err = facts.device_error.as_ref();
    let assert_pos = [first_assert, device_err.map(|e| e.first)]
        .into_iter()
        .flatten()
        .min();
    let mut out = Vec::new();
    if let Some(ima) = host(facts, HostKind::IllegalAccess) {
        // An illegal access before any assert is its own root cause; after one it is fallout.
        if assert_pos.is_none_or(|p| ima.first < p) {
            out.push(Root::IllegalAccess(ima));
        }
    }
    if let Some(&i) = order.first() {
        out.push(Root::Assert(&facts.groups[i]));
    } else if let Some(e) = device_err {
        out.push(Root::NoKernelLine(e));
    } else if let Some(e) = rocm_abort(facts) {
        out.push(Root::RocmAbort(e));
    }
    if out.is_empty() && !facts.cpu.is_empty() {
        out.push(Root::Cpu(0));
    }
    if out.is_empty() {
        out.extend(cut_traceback(facts).map(Root::CutTraceback));
    }
    out
}

/// The log's last traceback, when it has frames but no error line. A stack
/// dumped innermost first (faulthandler's) has none by design: not cut.
fn cut_traceback(facts: &Facts) -> Option<&Traceback> {
    facts
        .tracebacks
        .iter()
        .max_by_key(|t| (t.input, t.line))
        .filter(|t| t.exception.is_none() && !t.frames.is_empty() && !t.innermost_first)
}

pub(super) fn rocm_abort(facts: &Facts) -> Option<&HostEvent> {
    let launch = host(facts, HostKind::LaunchFailure)
        .filter(|e| e.message.contains("HIP") || e.message.contains("hip"));
    launch.or_else(|| host(facts, HostKind::HsaAbort))
}

pub(super) fn first_input(root: &Root<'_>, facts: &Facts) -> usize {
    match root {
        Root::Assert(g) => g.first.input,
        Root::NoKernelLine(e) | Root::RocmAbort(e) | Root::IllegalAccess(e) => e.first.input,
        Root::Cpu(i) => facts.cpu[*i].pos.input,
        Root::CutTraceback(tb) => tb.input,
    }
}
