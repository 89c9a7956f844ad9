use crate::cli::Global;
use clap::Args;

#[derive(Args, Debug)]
pub struct ScanArgs {}

pub fn run(_args: ScanArgs, _g: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("`devassert scan` is not in this build yet")
}
