//! A panic while reading a log, caught: an internal error that names the
//! input and the line, so that a crash is never reported as a clean log.

use devassert_core::contain::Panic;

/// The reader stopped on a bug of its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "internal error reading {input}{}: {message}{}; this is a bug in devassert: please report it with the input",
    line.map_or(String::new(), |l| format!(" at line {l}")),
    place.as_ref().map_or(String::new(), |p| format!(" (at {p})"))
)]
pub struct InternalError {
    /// The input being read, as it was named to the reader.
    pub input: String,
    /// The line being read, when the panic happened reading one.
    pub line: Option<u64>,
    pub message: String,
    /// Where in devassert's source the panic was raised, when known.
    pub place: Option<String>,
}

impl InternalError {
    pub fn new(input: String, line: Option<u64>, panic: Panic) -> Self {
        InternalError {
            input,
            line,
            message: panic.message,
            place: panic.place,
        }
    }
}

/// A test hook, compiled only with the `test-hooks` feature (never in a
/// release build): the reader panics on a line holding the text of
/// `DEVASSERT_TEST_PANIC_ON`, so that the tests can check that a crashed
/// reader is reported, not taken for a clean log.
#[cfg(feature = "test-hooks")]
pub fn injected_panic(raw: &[u8]) {
    static ON: std::sync::LazyLock<Option<Vec<u8>>> = std::sync::LazyLock::new(|| {
        std::env::var_os("DEVASSERT_TEST_PANIC_ON")
            .filter(|v| !v.is_empty())
            .map(|v| v.into_encoded_bytes())
    });
    if let Some(on) = ON.as_deref() {
        if memchr::memmem::find(raw, on).is_some() {
            panic!("injected by DEVASSERT_TEST_PANIC_ON (a test hook)");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_input_the_line_and_the_place() {
        let p = Panic {
            message: "start byte index 9 is not a char boundary".into(),
            place: Some("crates/devassert-log/src/device_line.rs:402".into()),
        };
        let e = InternalError::new("run.log".into(), Some(12), p.clone());
        assert_eq!(
            e.to_string(),
            "internal error reading run.log at line 12: start byte index 9 is not a char boundary (at crates/devassert-log/src/device_line.rs:402); this is a bug in devassert: please report it with the input"
        );
        let e = InternalError::new("-".into(), None, Panic { place: None, ..p });
        assert_eq!(
            e.to_string(),
            "internal error reading -: start byte index 9 is not a char boundary; this is a bug in devassert: please report it with the input"
        );
    }
}
