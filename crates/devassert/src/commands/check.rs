use crate::cli::Global;
use clap::Args;

#[derive(Args, Debug)]
pub struct CheckArgs {}

pub fn run(_args: CheckArgs, _g: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("`devassert check` is not in this build yet")
}
