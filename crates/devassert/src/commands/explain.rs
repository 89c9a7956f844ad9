//! `devassert explain [LOG…|-]`: read one crash from files, folders of rank
//! logs or stdin, and print the diagnosis.

use crate::global::{FormatArg, Global};
use crate::output;
use clap::Args;
use devassert_core::{Catalog, Report};
use serde_json::Value;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  devassert explain crash.log\n  devassert explain job.out job.err      # a split Slurm log, read as one crash\n  devassert explain logs/                # a folder of per-rank logs\n  python train.py 2>&1 | devassert explain -"
)]
pub struct ExplainArgs {
    /// Log files or folders (read recursively) of one crash; `-` or nothing reads stdin.
    #[arg(value_name = "LOG")]
    pub logs: Vec<PathBuf>,
}

pub fn run(args: ExplainArgs, g: &Global) -> anyhow::Result<i32> {
    let logs = if args.logs.is_empty() {
        if std::io::stdin().is_terminal() {
            // Waiting for a paste nobody announced helps no one.
            let usage = ExplainArgs::augment_args(clap::Command::new("explain")).render_usage();
            eprintln!("{usage}\n\ngive a log file, a folder of logs, or pipe the log in: `… 2>&1 | devassert explain -`");
            return Ok(2);
        }
        vec![PathBuf::from("-")]
    } else {
        args.logs
    };
    let report = devassert_log::explain_paths(&logs, Catalog::builtin())?;
    if g.format == FormatArg::Human && !g.quiet {
        print!("{}", header(&report));
    }
    output::emit(&report, g, &output::render_options(g))?;
    Ok(report.exit_code)
}

/// One line naming what was read: files, lines, ranks.
fn header(report: &Report) -> String {
    let inputs = report.inputs.as_deref().unwrap_or_default();
    let names: Vec<String> = inputs
        .iter()
        .map(|i| {
            if i.name == "-" {
                "stdin".to_string()
            } else {
                i.name.clone()
            }
        })
        .collect();
    let lines: u64 = inputs.iter().map(|i| i.lines).sum();
    let shown = if names.len() > 3 {
        format!("{}, … ({} files)", names[..3].join(", "), names.len())
    } else {
        names.join(", ")
    };
    let mut ranks: Vec<i64> = report
        .findings
        .iter()
        .flat_map(|f| {
            f.evidence
                .get("ranks")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|v| v.as_i64())
        .collect();
    for f in &report.fallout {
        ranks.extend(&f.ranks);
    }
    ranks.sort_unstable();
    ranks.dedup();
    let rank_text = match ranks.len() {
        0 => String::new(),
        1 => format!(", rank {}", ranks[0]),
        _ => format!(
            ", ranks {}",
            ranks
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "read {shown}: {lines} line{}{rank_text}\n\n",
        if lines == 1 { "" } else { "s" }
    )
}
