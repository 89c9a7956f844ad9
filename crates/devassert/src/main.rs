//! The devassert binary: turns flags into calls to the library crates and
//! renders what they return. Exit codes follow DESIGN.md; errors that stop a
//! command print one `devassert: error: …` line (and with `--format json`,
//! one error document on stdout) and exit 2.

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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => std::process::exit(bad_command_line(e)),
    };
    let global = cli.global.clone();
    let command = cli.command.contract_name();
    // A panic is a bug of devassert's, never a result: caught (the readers
    // name their input and line themselves), it is an internal error, 2.
    let code = match devassert_core::contain::catch(|| dispatch(cli)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            output::print_error(&e, &global, command);
            2
        }
        Err(p) => {
            output::print_error(
                &anyhow::anyhow!(
                    "internal error: {p}; this is a bug in devassert: please report it"
                ),
                &global,
                command,
            );
            2
        }
    };
    std::process::exit(code);
}

/// Print clap's message (help and version too, which are no errors) and
/// return the exit code; with `--format json`, a bad flag or value is an
/// error document on stdout like any other error of the command.
fn bad_command_line(e: clap::Error) -> i32 {
    let _ = e.print();
    if !e.use_stderr() {
        return 0;
    }
    if let Some(command) = json_requested() {
        // clap's message up to its usage and hints, on one line.
        let text = e.render().to_string();
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
            .collect();
        let message = lines.join(" ");
        let message = message.strip_prefix("error: ").unwrap_or(&message);
        let _ = output::print(devassert_core::render::error_document(command, message).as_bytes());
    }
    2
}

/// The command of a command line that asks for `--format json`, read from
/// the raw arguments (they did not parse); those after `--` are the child's
/// (`devassert run -- CMD …`) and say nothing.
fn json_requested() -> Option<&'static str> {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .take_while(|a| a != "--")
        .collect();
    let json = args
        .windows(2)
        .any(|w| w[0] == "--format" && w[1] == "json")
        || args.iter().any(|a| a == "--format=json");
    let command = args.iter().find_map(|a| {
        ["explain", "run", "scan", "check", "rule"]
            .into_iter()
            .find(|c| a == c)
    });
    command.filter(|_| json)
}
