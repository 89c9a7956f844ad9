//! The catalog's files as embedded by `build.rs`: the rules, the op guesses
//! and `causes.toml`. A leaf of its own so that `facts` can read
//! `causes.toml` without depending on the loader that reads `facts`.

include!(concat!(env!("OUT_DIR"), "/catalog_files.rs"));
