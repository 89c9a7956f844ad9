//! One module per command; each turns its flags into library calls.

pub mod check;
pub mod completions;
pub mod explain;
pub mod rule;
pub mod run;
pub mod scan;

use crate::cli::{Cli, Command};

/// Run the chosen command; the result is the process exit code.
pub fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    let g = &cli.global;
    match cli.command {
        Command::Explain(a) => explain::run(a, g),
        Command::Run(a) => run::run(a, g),
        Command::Scan(a) => scan::run(a, g),
        Command::Check(a) => check::run(a, g),
        Command::Rule(a) => rule::run(a, g),
        Command::Completions(a) => completions::run(a, g),
    }
}
