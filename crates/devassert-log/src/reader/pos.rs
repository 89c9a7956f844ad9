//! A place in the inputs: the leaf type every part of the reader records.

/// Where a line is: input index and 1-based line number in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub input: usize,
    pub line: u64,
}
