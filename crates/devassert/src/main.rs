//! The devassert binary: turns flags into calls to the library crates and
//! renders what they return. Exit codes follow DESIGN.md; errors that stop a
//! command print one `devassert: error: …` line and exit 2.

mod cli;
mod commands;
mod establish;
mod global;
mod output;
mod value_parsers;

use clap::{CommandFactory, Parser};
use cli::{Cli, Command};

/// Run the chosen command; the result is the process exit code.
fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    let g = &cli.global;
    match cli.command {
        Command::Explain(a) => commands::explain::run(a, g),
        Command::Run(a) => commands::run::run(a, g),
        Command::Scan(a) => commands::scan::run(a, g),
        Command::Check(a) => commands::check::run(a, g),
        Command::Rule(a) => commands::rule::run(a, g),
        Command::Completions(a) => commands::completions::run(a, g, Cli::command()),
    }
}

fn main() {
    let cli = Cli::parse();
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            output::print_error(&e);
            2
        }
    };
    std::process::exit(code);
}
