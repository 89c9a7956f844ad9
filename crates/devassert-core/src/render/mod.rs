//! Sibling renderers of one [`Report`]: human (terminal), JSON (the
//! `devassert/1` contract) and GitHub Actions annotations.

mod github;
mod human;
pub mod inert;
mod json;
mod model_summary;
mod options;
mod ranks;
mod ruled_out;
mod scan_table;
mod values_line;

use crate::finding::Report;

pub use json::error_document;
pub use options::{Format, RenderOptions};
pub use ranks::{rank_list, RanksBeyond};

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
