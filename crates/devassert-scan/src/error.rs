//! Why a file could not be read. Every message names what is wrong; the
//! caller adds the file name.

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Format(String),
    #[error("cannot tell the file format (pass --input-format: {0})")]
    UnknownFormat(String),
}

pub type Result<T> = std::result::Result<T, ScanError>;

/// A format error with a message.
pub fn bad(msg: impl Into<String>) -> ScanError {
    ScanError::Format(msg.into())
}

/// A piece of the file quoted in a message (a header, a cell): escaped and
/// cut short, so a hostile or huge header neither drives the terminal nor
/// floods it.
pub fn excerpt(text: &str) -> std::borrow::Cow<'_, str> {
    devassert_core::render::inert::bounded(text, 200)
}
