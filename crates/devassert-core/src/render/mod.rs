//! Sibling renderers of one [`Report`]: human (terminal), JSON (the
//! `devassert/1` contract) and GitHub Actions annotations.

mod github;
mod human;
mod json;
mod model_summary;
mod scan_table;

use crate::finding::Report;
use std::path::PathBuf;

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
    /// The command line to suggest for `devassert run`, when known.
    pub rerun_hint: Option<String>,
    /// Fewer lines: no doc hints, no fallout details, no model summary.
    pub quiet: bool,
    /// The report is `devassert run`'s: its findings carry their own rerun
    /// advice, so no generic "devassert run -- …" step is added.
    pub under_run: bool,
    /// More lines: every row of a scan's table.
    pub verbose: bool,
}

pub fn render(report: &Report, format: Format, opts: &RenderOptions) -> String {
    match format {
        Format::Human => human::render(report, opts),
        Format::Json => json::render(report),
        Format::Github => github::render(report),
    }
}
