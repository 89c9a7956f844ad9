//! The catalog's files as embedded by `build.rs`: the rules, the op guesses
//! and `causes.toml`. A leaf of its own so that `facts` can read
//! `causes.toml` without depending on the loader that reads `facts`.
//! Each file is here as written and in JSON (`NAME_JSON`, `CATALOG_JSON`),
//! which the program reads; the text as written is for the tests that
//! compare the two and for what quotes the file.
#![allow(dead_code)]

include!(concat!(env!("OUT_DIR"), "/catalog_files.rs"));
