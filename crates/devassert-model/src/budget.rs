//! One memory budget for everything a command reads of a model folder, and
//! the files it leaves out.
//!
//! Each reader draws what it will hold from one [`Budget`] before it holds
//! it (the JSON values kept, the vocabulary map, the weight map's names,
//! the safetensors headers, the `tokenizers` library's tokenizer), so the
//! files of a folder together stay within it, not each file on its own. A
//! file the budget cannot take, or one that is not a regular file (a FIFO,
//! a socket, a device: never opened), is left out and said ([`LeftOut`]);
//! the other files are still read.

use crate::error::ModelError;
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

/// Memory for all the files of one model folder: the 256 MiB peak of any
/// command, less the program, its buffers and the allocator's slack.
pub const MODEL_BUDGET: u64 = 160 << 20;

/// Memory a kept JSON value takes per byte of its text (a list of small
/// integers, the worst case: 8 MiB of text made ~128 MiB of values).
pub const JSON_PER_BYTE: u64 = 16;

/// Memory the `tokenizers` library takes per byte of `tokenizer.json` (a
/// 100 MB file took 1.7 GB).
pub const LIBRARY_PER_BYTE: u64 = 16;

/// Memory of one vocabulary entry (a hash and an id in a map that grows by
/// doubling).
pub const VOCAB_ENTRY: u64 = 40;

/// Memory of one name kept besides its text (a `String` and its slot).
pub const NAME_ENTRY: u64 = 48;

/// Memory a safetensors header takes per byte while it is parsed and kept.
pub const HEADER_PER_BYTE: u64 = 4;

/// The words every over-budget message holds (tests and callers match them).
pub(crate) const BUDGET_WORDS: &str = "memory budget";

/// Bytes of memory the readers of one command may still take.
#[derive(Debug)]
pub struct Budget {
    total: u64,
    left: Cell<u64>,
}

impl Budget {
    pub fn new(total: u64) -> Self {
        Budget {
            total,
            left: Cell::new(total),
        }
    }

    pub fn left(&self) -> u64 {
        self.left.get()
    }

    /// Take `bytes`, or say why not (nothing is taken then).
    pub fn take(&self, bytes: u64) -> Result<(), String> {
        let left = self.left.get();
        if bytes > left {
            return Err(self.refusal(bytes));
        }
        self.left.set(left - bytes);
        Ok(())
    }

    /// Give back what a reader held only while it read.
    pub fn give(&self, bytes: u64) {
        self.left
            .set(self.left.get().saturating_add(bytes).min(self.total));
    }

    /// Why `bytes` cannot be taken.
    pub(crate) fn refusal(&self, bytes: u64) -> String {
        format!(
            "needs more than the {} MiB left of devassert's memory budget ({} MiB for all the files of the model folder, {} MiB asked): not read",
            self.left.get() >> 20,
            self.total >> 20,
            bytes.div_ceil(1 << 20)
        )
    }
}

/// A file of the model folder that was not read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    pub path: PathBuf,
    pub why: String,
}

/// What the readers of one model folder share: the budget, and the files
/// left out so far.
#[derive(Debug)]
pub struct Reading {
    pub budget: Budget,
    left_out: RefCell<Vec<LeftOut>>,
}

impl Default for Reading {
    fn default() -> Self {
        Reading::new(MODEL_BUDGET)
    }
}

impl Reading {
    pub fn new(total: u64) -> Self {
        Reading {
            budget: Budget::new(total),
            left_out: RefCell::new(Vec::new()),
        }
    }

    /// Whether a file the folder may hold is there to read: a regular file
    /// (links followed) is; nothing, or a folder, is not; anything else (a
    /// FIFO, a socket, a device) is left out and said, never opened, since
    /// that could block.
    pub fn present(&self, path: &Path) -> bool {
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => true,
            Ok(m) if !m.is_dir() => {
                let why = devassert_core::regular::not_regular(&m.file_type()).to_string();
                self.leave_out(path, why);
                false
            }
            _ => false,
        }
    }

    /// One file's read: an over-budget file is left out (`None`), any
    /// other error stays one.
    pub fn or_left_out<T>(&self, r: Result<T, ModelError>) -> Result<Option<T>, ModelError> {
        match r {
            Ok(v) => Ok(Some(v)),
            Err(ModelError::OverBudget { path, message }) => {
                self.leave_out(&path, message);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn leave_out(&self, path: &Path, why: String) {
        self.left_out.borrow_mut().push(LeftOut {
            path: path.to_path_buf(),
            why,
        });
    }

    /// The files left out, in the order met.
    pub fn into_left_out(self) -> Vec<LeftOut> {
        self.left_out.into_inner()
    }
}

/// `bytes` times `per`, never wrapping.
pub(crate) fn cost(bytes: u64, per: u64) -> u64 {
    bytes.saturating_mul(per)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_add_up_to_the_budget_and_a_refusal_takes_nothing() {
        let b = Budget::new(10 << 20);
        b.take(6 << 20).expect("fits");
        let e = b.take(5 << 20).expect_err("over");
        assert!(e.contains(BUDGET_WORDS) && e.contains("4 MiB left"), "{e}");
        assert_eq!(b.left(), 4 << 20);
        b.give(6 << 20);
        assert_eq!(b.left(), 10 << 20);
        b.give(1);
        assert_eq!(b.left(), 10 << 20, "never more than the total");
    }
}
