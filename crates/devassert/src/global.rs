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
