//! The command line: the global flags (`global.rs`) and one subcommand per
//! command, whose own flags live beside its code in `commands/<name>.rs`.
//! Commands never look back here: the dependency runs one way.

use crate::commands;
use crate::global::Global;
use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "devassert",
    version,
    about = "Make PyTorch's `CUDA error: device-side assert triggered` easy: explain a crash log, run a program under a guard that stops the bad op at the real line, scan data and check model directories before training.",
    after_help = "Examples:\n  devassert explain crash.log\n  devassert run -- python train.py --lr 3e-4\n  devassert scan data/*.bin --vocab 50257\n  devassert check ./my-model\n  devassert rule DA101"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Diagnose a crash log (files, a folder of rank logs, or - for stdin).
    Explain(commands::explain::ExplainArgs),
    /// Run a command under the guard and diagnose its failure.
    Run(commands::run::RunArgs),
    /// Scan token / label data for values outside the valid range.
    Scan(commands::scan::ScanArgs),
    /// Check a Hugging Face model directory for mismatches that become device-side asserts.
    Check(commands::check::CheckArgs),
    /// List the rules, or print one rule's page.
    Rule(commands::rule::RuleArgs),
    /// Print shell completions: `devassert completions bash > /etc/bash_completion.d/devassert`.
    Completions(commands::completions::CompletionsArgs),
}

impl Command {
    /// The `command` of its `devassert/1` documents; `None` for a command
    /// that writes none.
    pub fn contract_name(&self) -> Option<&'static str> {
        match self {
            Command::Explain(_) => Some("explain"),
            Command::Run(_) => Some("run"),
            Command::Scan(_) => Some("scan"),
            Command::Check(_) => Some("check"),
            Command::Rule(_) => Some("rule"),
            Command::Completions(_) => None,
        }
    }
}
