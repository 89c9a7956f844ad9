//! The base vocabulary sizes of common tokenizers, from the one list in
//! `catalog/base-vocabs.toml` (the guard gets the same list, generated).

include!(concat!(env!("OUT_DIR"), "/base_vocabs.rs"));

/// Whether `n` is the size of a common base vocabulary.
pub fn is_base_vocab(n: i64) -> bool {
    BASE_VOCABS.binary_search(&n).is_ok()
}
