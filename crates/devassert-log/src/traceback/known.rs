//! A line the builder reads again and again, parsed once: a log that logs
//! a handled traceback per sample repeats its header, frames and code
//! lines thousands of times, and each time `Builder::step` trimmed the
//! line, asked whether it starts an IPython traceback, found its frame's
//! parts and its decoration anew (a fifth of reading such a log). A
//! [`RowStep`] holds what `step` reads of the line; `Builder::step_known`
//! does what `step` does with it. Lines whose reading needs more (IPython's
//! styles, reversed headers, chain markers, exception and message lines)
//! are left to `step`.

/// What `Builder::step` reads of one line, for `Builder::step_known`
/// (both in the parent module, which makes it: `RowStep::of`).
#[derive(Debug, Clone)]
pub struct RowStep {
    pub(super) kind: Kind,
    /// Where the trimmed line starts and ends in the line.
    pub(super) trimmed: (usize, usize),
}

#[derive(Debug, Clone)]
pub(super) enum Kind {
    /// Python's header, not a reversed one.
    Header,
    /// A frame line's parts, as `frame_parts` finds them.
    Frame {
        file: Box<str>,
        line: u64,
        function: Box<str>,
    },
    /// Nothing but spaces.
    Empty,
    /// Indented, and none of the above: a frame's code line, or its carets.
    Indented { decoration: bool },
    /// Read by `step` itself.
    Other,
}
