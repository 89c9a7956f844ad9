//! Containing panics of third-party decoders.
//!
//! arrow-ipc and tokenizers panic on some malformed inputs (an unsupported
//! type width in a schema, a validity buffer shorter than its array, a JSON
//! error inside a tokenizer's decoder; all found by fuzzing). A corrupt file
//! must end as an error naming it, so calls into them run under [`contain`],
//! which turns a panic into its message. The process-wide hook stays silent
//! only for panics inside `contain`; any other panic reports as usual.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static CONTAINED: Cell<u32> = const { Cell::new(0) };
}

/// Run `f`; a panic inside it becomes `Err(message)`.
pub fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CONTAINED.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
    CONTAINED.with(|c| c.set(c.get() + 1));
    // The decoder's state is dropped with the panic; nothing outlives it.
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CONTAINED.with(|c| c.set(c.get() - 1));
    result.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".to_string())
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
}
