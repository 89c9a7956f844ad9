//! Why a file could not be read. Every message names what is wrong; the
//! caller adds the file name.

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Format(String),
    /// Decoding would pass the memory budget (see [`crate::budget`]).
    #[error("{0}")]
    Budget(String),
    #[error("cannot tell the file format (pass --input-format: {0})")]
    UnknownFormat(String),
    /// A panic while scanning: a bug of devassert's, never a clean file.
    #[error("{INTERNAL}: {0}; this is a bug in devassert: please report it")]
    Internal(devassert_core::contain::Panic),
}

/// How the message of a [`ScanError::Internal`] begins (the fuzz target
/// turns it back into a panic).
pub const INTERNAL: &str = "internal error";

pub type Result<T> = std::result::Result<T, ScanError>;

/// A format error with a message.
pub fn bad(msg: impl Into<String>) -> ScanError {
    ScanError::Format(msg.into())
}

/// `e` said of a part of the file (`row group 3: …`), still an over-budget
/// error when it was one (the scan retries those with all of the budget).
pub fn within(e: ScanError, part: &str) -> ScanError {
    match e {
        ScanError::Budget(m) => ScanError::Budget(format!("{part}: {m}")),
        e => bad(format!("{part}: {e}")),
    }
}

/// Refuse a decode that needs `needed` bytes when the budget is `budget`.
pub fn within_budget(what: &str, needed: u64, budget: u64) -> Result<()> {
    if needed <= budget {
        return Ok(());
    }
    Err(ScanError::Budget(format!(
        "{what} needs {} MiB of memory, over the decode budget of {} MiB (a decompression bomb, or raise it with --max-decoded {}M)",
        mib(needed),
        mib(budget),
        mib(needed)
    )))
}

/// Whole MiB, rounded up: a budget of that many MiB holds `bytes`.
fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// A piece of the file quoted in a message (a header, a cell): escaped and
/// cut short, so a hostile or huge header neither drives the terminal nor
/// floods it.
pub fn excerpt(text: &str) -> std::borrow::Cow<'_, str> {
    devassert_core::render::inert::bounded(text, 200)
}
