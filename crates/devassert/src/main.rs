//! The devassert binary: turns flags into calls to the library crates and
//! renders what they return. Exit codes follow DESIGN.md; errors that stop a
//! command print one `devassert: error: …` line and exit 2.

mod cli;
mod commands;
mod establish;
mod output;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let code = match commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            output::print_error(&e);
            2
        }
    };
    std::process::exit(code);
}
