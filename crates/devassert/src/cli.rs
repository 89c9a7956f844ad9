//! Every flag, declared once. Each command's own flags live beside its code
//! in `commands/<name>.rs`; this file holds the global ones.

use crate::commands;
use clap::{Args, Parser, Subcommand, ValueEnum};

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

#[derive(Args, Debug, Clone)]
pub struct Global {
    /// Output format: human (terminal), json (the devassert/1 contract), github (Actions annotations).
    #[arg(long, global = true, value_enum, default_value_t = FormatArg::Human)]
    pub format: FormatArg,
    /// When to color human output (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
    /// Print less: findings only, no hints.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Print more about what was read.
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    Human,
    Json,
    Github,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
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
