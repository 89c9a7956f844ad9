//! Everything after the root failure: the host errors it caused and the
//! later assertions, in log order.

use super::rank_list::{ranks_max, ranks_total, ranks_uncounted, RANKS_LISTED};
use super::root::Root;
use crate::errors::HostKind;
use crate::reader::{Facts, Pos};
use devassert_core::Fallout;

pub(super) fn fallout(facts: &Facts, order: &[usize], roots: &[Root<'_>]) -> Vec<Fallout> {
    let mut items: Vec<(Pos, Fallout)> = Vec::new();
    let ima_root = roots.iter().any(|r| matches!(r, Root::IllegalAccess(_)));
    let rocm_root = roots.iter().any(|r| matches!(r, Root::RocmAbort(_)));
    for e in &facts.host {
        let mut count = e.count;
        match e.kind {
            HostKind::IllegalAccess if ima_root => count -= 1,
            // The ROCm abort's own lines are the root, their repeats fallout.
            HostKind::LaunchFailure | HostKind::HsaAbort if rocm_root => count -= 1,
            _ => {}
        }
        if count == 0 {
            continue;
        }
        let fo = Fallout {
            kind: e.kind.fallout_kind().to_string(),
            message: e.message.clone(),
            count,
            ranks: e.ranks.iter().take(RANKS_LISTED).collect(),
            ranks_total: ranks_total(&e.ranks),
            ranks_max: ranks_max(&e.ranks),
            ranks_uncounted: ranks_uncounted(&e.ranks),
            ranks_total_at_least: e.ranks.untracked() > 0,
            line: Some(e.first.line),
        };
        items.push((e.first, fo));
    }
    for &i in order.iter().skip(1) {
        let g = &facts.groups[i];
        let mut message = match &g.kernel {
            Some(k) => format!("{k}: `{}`", g.assertion),
            None => format!("`{}`", g.assertion),
        };
        if let Some(s) = g.source() {
            message.push_str(&format!(" ({s})"));
        }
        let fo = Fallout {
            kind: "later_assert".into(),
            message,
            count: g.lines,
            ranks: g.ranks.iter().take(RANKS_LISTED).collect(),
            ranks_total: ranks_total(&g.ranks),
            ranks_max: ranks_max(&g.ranks),
            ranks_uncounted: ranks_uncounted(&g.ranks),
            ranks_total_at_least: g.ranks.untracked() > 0,
            line: Some(g.first.line),
        };
        items.push((g.first, fo));
    }
    items.sort_by_key(|(p, _)| *p);
    items.into_iter().map(|(_, f)| f).collect()
}
