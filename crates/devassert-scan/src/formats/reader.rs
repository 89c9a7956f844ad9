//! The one interface every format's reader implements.

use crate::error::{bad, Result};
use crate::mapped::Bytes;
use crate::options::ScanOptions;
use crate::values::Part;
use std::path::Path;
use std::sync::Arc;

/// An opened input: its path and all its bytes (memory-mapped).
pub struct Input<'a> {
    pub path: &'a Path,
    pub bytes: Arc<Bytes>,
}

impl Input<'_> {
    pub fn data(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

/// A format's reader: the integer arrays it finds in one input.
pub trait Reader: Sync {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>>;
}

/// Product of dims, or an error when it overflows.
pub(crate) fn element_count(dims: &[u64]) -> Result<u64> {
    dims.iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| bad(format!("shape {dims:?} overflows")))
}
