//! One module per command; each turns its flags into library calls. The
//! dispatch from the parsed command line is `main.rs`'s.

pub mod check;
pub mod completions;
pub mod explain;
pub mod rule;
pub mod run;
pub mod scan;
