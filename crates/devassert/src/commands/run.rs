use crate::cli::Global;
use clap::Args;

#[derive(Args, Debug)]
pub struct RunArgs {}

pub fn run(_args: RunArgs, _g: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("`devassert run` is not in this build yet")
}
