//! What the caller chooses about a rendering: the format and its options.

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
