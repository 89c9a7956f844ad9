//! Sibling renderers of one [`Report`]: human (terminal), JSON (the
//! `devassert/1` contract) and GitHub Actions annotations.

mod github;
mod human;
pub mod inert;
mod json;
mod model_summary;
mod scan_table;

use crate::finding::Report;
use crate::source::SourceRoot;
use std::path::PathBuf;
use std::rc::Rc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Human,
    Json,
    Github,
}

#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// ANSI colors (the CLI decides: a TTY and no `NO_COLOR`).
    pub color: bool,
    /// Where relative source paths of findings are looked up for snippets;
    /// `None` disables snippets.
    pub source_root: Option<PathBuf>,
    /// The source root already opened for this run (explain reads the
    /// scripts before rendering): shared, so each file is read and counted
    /// against the budget once. Without it, one is made from `source_root`.
    pub sources: Option<Rc<SourceRoot>>,
    /// The command line to suggest for `devassert run`, when known.
    pub rerun_hint: Option<String>,
    /// `-q`, findings only: each finding with its place and values; no
    /// causes, no next steps, no fallout details, no model summary, no scan table.
    pub quiet: bool,
    /// The report is `devassert run`'s: its findings carry their own rerun
    /// advice, so no generic "devassert run -- …" step is added.
    pub under_run: bool,
    /// `-v`, more: every cause, every place kept, the whole evidence of each
    /// finding, every row of a scan's table and its timing.
    pub verbose: bool,
}

pub fn render(report: &Report, format: Format, opts: &RenderOptions) -> String {
    // Every format shows the same ranking and the same next steps.
    let mut report = report.clone();
    crate::advice::settle(
        &mut report,
        &crate::advice::Context {
            rerun_hint: opts.rerun_hint.as_deref(),
            under_run: opts.under_run,
        },
    );
    let report = &report;
    match format {
        // Every string quoted from an input passes through `inert::line`.
        Format::Human => human::render(&inert::report(report), opts),
        Format::Json => json::render(report),
        Format::Github => github::render(&inert::report(report)),
    }
}

/// Ranks as a reader takes them in: `rank 3`, `ranks 0, 1, 4-7`, or for many
/// scattered ranks, their count and span (a log from 1M ranks would make a
/// list megabytes long). `ranks` must be sorted and without duplicates;
/// `total`, when more, is how many ranks there were in all (at least that
/// many with `at_least`).
pub fn rank_list(ranks: &[i64], total: Option<u64>, at_least: bool) -> String {
    let listed = listed_ranks(ranks);
    let more = total.map_or(0, |t| t.saturating_sub(ranks.len() as u64));
    match (ranks.is_empty(), more, at_least) {
        (true, _, _) => listed,
        (false, 0, false) => listed,
        (false, 0, true) => format!("{listed}, and more"),
        (false, n, false) => format!("{listed}, and {n} more"),
        (false, n, true) => format!("{listed}, and at least {n} more"),
    }
}

fn listed_ranks(ranks: &[i64]) -> String {
    const RUNS_SHOWN: usize = 8;
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for &r in ranks {
        match runs.last_mut() {
            Some((_, hi)) if hi.checked_add(1) == Some(r) => *hi = r,
            _ => runs.push((r, r)),
        }
    }
    match (ranks, runs.len()) {
        ([], _) => String::new(),
        ([one], _) => format!("rank {one}"),
        (all, n) if n > RUNS_SHOWN => format!(
            "{} ranks from {} to {}",
            all.len(),
            all[0],
            all[all.len() - 1]
        ),
        _ => {
            let parts: Vec<String> = runs
                .iter()
                .map(|&(lo, hi)| match hi - lo {
                    0 => lo.to_string(),
                    1 => format!("{lo}, {hi}"),
                    _ => format!("{lo}-{hi}"),
                })
                .collect();
            format!("ranks {}", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rank_list;

    #[test]
    fn ranks_as_ranges_or_a_count() {
        let first: Vec<i64> = (0..256).collect();
        assert_eq!(
            rank_list(&first, Some(1_000_000), false),
            "ranks 0-255, and 999744 more"
        );
        assert_eq!(
            rank_list(&first, Some(300), true),
            "ranks 0-255, and at least 44 more"
        );
        assert_eq!(rank_list(&[], None, false), "");
        assert_eq!(rank_list(&[3], None, false), "rank 3");
        assert_eq!(rank_list(&[0, 1], None, false), "ranks 0, 1");
        assert_eq!(
            rank_list(&[0, 1, 2, 3, 7, 9, 10], None, false),
            "ranks 0-3, 7, 9, 10"
        );
        let many: Vec<i64> = (0..1_000_000).collect();
        assert_eq!(rank_list(&many, None, false), "ranks 0-999999");
        let scattered: Vec<i64> = (0..1000).map(|r| r * 2).collect();
        assert_eq!(
            rank_list(&scattered, None, false),
            "1000 ranks from 0 to 1998"
        );
    }
}
