//! The flags every command takes, declared once.

use clap::{Args, ValueEnum};

#[derive(Args, Debug, Clone)]
pub struct Global {
    /// Output format: human (terminal), json (the devassert/1 contract), github (Actions annotations).
    #[arg(long, global = true, value_enum, default_value_t = FormatArg::Human)]
    pub format: FormatArg,
    /// When to color human output (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
    /// Print less: findings only (their place and values), no causes, next steps or summaries.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more: every cause and place, each finding's whole evidence, what was read and how long it took.
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
