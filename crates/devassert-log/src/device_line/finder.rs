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

/// A searcher for a needle that may hold a byte most lines lack (`=`, `_`,
/// `[`, `^`, `<`, `\`): a line without it is turned away by one `memchr`,
/// about a third of a short line's search, before the search itself.
pub struct Gated {
    /// The needle's first such byte; without one, every line is searched.
    rare: Option<u8>,
    finder: Finder<'static>,
}

/// A [`Gated`] searcher built once.
pub type GatedSearcher = LazyLock<Gated>;

impl Gated {
    pub fn new(needle: &'static [u8]) -> Self {
        const RARE: &[u8] = b"=_[^<\\";
        Gated {
            rare: needle.iter().copied().find(|b| RARE.contains(b)),
            finder: Finder::new(needle),
        }
    }

    /// Where the needle first is in `hay`, as `Finder::find` says.
    pub fn find(&self, hay: &[u8]) -> Option<usize> {
        if let Some(r) = self.rare {
            memchr::memchr(r, hay)?;
        }
        self.finder.find(hay)
    }
}

/// `static S: GatedSearcher = gated!(b"…");`
macro_rules! gated {
    ($needle:expr) => {
        std::sync::LazyLock::new(|| $crate::device_line::Gated::new($needle))
    };
}
pub(crate) use gated;

#[cfg(test)]
mod tests {
    use super::Gated;

    proptest::proptest! {
        /// The gate turns away no line that holds the needle: each needle,
        /// with its byte or without one, in lines of its pieces.
        #[test]
        fn a_gated_search_finds_what_a_search_finds(
            needle in proptest::sample::select(vec![
                &b" = "[..], &b"CUDA_LAUNCH_BLOCKING"[..], &b"ESC["[..], &b"^M"[..], &b"ssertion"[..],
            ]),
            parts in proptest::collection::vec(proptest::sample::select(vec![
                " ", "=", " = ", "CUDA", "_", "LAUNCH_BLOCKING", "ESC", "[", "^", "M", "ssertion", "x",
            ]), 0..8),
        ) {
            let hay = parts.concat();
            let gated = Gated::new(needle);
            proptest::prop_assert_eq!(gated.find(hay.as_bytes()), memchr::memmem::find(hay.as_bytes(), needle));
        }
    }
}
