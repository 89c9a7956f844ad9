//! Containing panics of third-party decoders.
//!
//! arrow-ipc and tokenizers panic on some malformed inputs (an unsupported
//! type width in a schema, a validity buffer shorter than its array, a JSON
//! error inside a tokenizer's decoder; all found by fuzzing). A corrupt file
//! must end as an error naming it, so calls into them run under [`contain`],
//! which turns a panic into its message. The process-wide hook stays silent
//! only for panics inside `contain`; any other panic reports as usual.
//! [`catch`] does the same for devassert's own readers, keeping the panic's
//! place: a crash is reported as an internal error, never as a clean result.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static CONTAINED: Cell<u32> = const { Cell::new(0) };
    /// Where the last contained panic of this thread happened.
    static PLACE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A caught panic: its message, and where it happened when the panic was
/// raised on the thread that caught it (a panic resumed from another thread
/// carries no place).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panic {
    pub message: String,
    pub place: Option<String>,
}

/// The message, then where it happened when known: "msg (at file:line)".
impl std::fmt::Display for Panic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        match &self.place {
            Some(place) => write!(f, " (at {place})"),
            None => Ok(()),
        }
    }
}

/// Run `f`; a panic inside it becomes `Err(message)`.
pub fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch(f).map_err(|p| p.message)
}

/// Run `f`; a panic inside it becomes `Err` with its message and place,
/// and the process-wide hook stays silent about it.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Panic> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CONTAINED.with(Cell::get) == 0 {
                previous(info);
            } else {
                let place = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                PLACE.with(|p| *p.borrow_mut() = place);
            }
        }));
    });
    CONTAINED.with(|c| c.set(c.get() + 1));
    PLACE.with(|p| p.borrow_mut().take());
    // The decoder's state is dropped with the panic; nothing outlives it.
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CONTAINED.with(|c| c.set(c.get() - 1));
    result.map_err(|payload| Panic {
        message: payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".to_string()),
        place: PLACE.with(|p| p.borrow_mut().take()),
    })
}

#[cfg(test)]
mod tests {
    use super::contain;

    #[test]
    fn a_panic_becomes_its_message() {
        let r: Result<(), String> = contain(|| panic!("bit width {} not supported", 9175072));
        assert_eq!(r, Err("bit width 9175072 not supported".to_string()));
        assert_eq!(contain(|| 7), Ok(7));
    }

    #[test]
    fn a_caught_panic_names_its_place() {
        let line = line!() + 1;
        let p = super::catch(|| panic!("{}", "at a place")).unwrap_err();
        assert_eq!(p.message, "at a place");
        assert_eq!(p.place, Some(format!("{}:{line}", file!())));
        assert_eq!(p.to_string(), format!("at a place (at {}:{line})", file!()));
        // Resumed from another thread: the message, no place.
        let p = super::catch(|| {
            if let Err(e) = std::thread::spawn(|| panic!("elsewhere")).join() {
                std::panic::resume_unwind(e)
            }
        })
        .unwrap_err();
        assert_eq!(p.to_string(), "elsewhere");
        assert_eq!((p.message.as_str(), p.place), ("elsewhere", None));
    }
}
