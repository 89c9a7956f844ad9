use crate::global::Global;
use crate::output;
use clap::Args;
use clap_complete::Shell;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to write completions for (bash, zsh, fish, elvish, powershell).
    pub shell: Shell,
}

/// `cmd` is the whole command line, whose completions are written.
pub fn run(args: CompletionsArgs, _g: &Global, mut cmd: clap::Command) -> anyhow::Result<i32> {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "devassert", &mut buf);
    output::print(&buf)?;
    Ok(0)
}
