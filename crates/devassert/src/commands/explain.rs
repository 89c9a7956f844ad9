use crate::cli::Global;
use clap::Args;

#[derive(Args, Debug)]
pub struct ExplainArgs {}

pub fn run(_args: ExplainArgs, _g: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("`devassert explain` is not in this build yet")
}
