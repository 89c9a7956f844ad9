use crate::cli::{Cli, Global};
use crate::output;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to write completions for (bash, zsh, fish, elvish, powershell).
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs, _g: &Global) -> anyhow::Result<i32> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "devassert", &mut buf);
    output::print(&buf)?;
    Ok(0)
}
