//! Fixed needles searched with a `memmem` finder built once (shared by the
//! parsers of assertion lines and of their coordinates).

use memchr::memmem::Finder;
use std::sync::LazyLock;

/// A searcher for a fixed needle, built once: building one for every
/// search cost as much as the search on the pieces of a glued line.
pub type Searcher = LazyLock<Finder<'static>>;

/// `static S: Searcher = searcher!(b"…");`
macro_rules! searcher {
    ($needle:expr) => {
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle))
    };
}
pub(crate) use searcher;
