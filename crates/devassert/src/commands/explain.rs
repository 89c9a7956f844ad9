//! `devassert explain [LOG…|-]`: read one crash from files, folders of rank
//! logs or stdin, and print the diagnosis.

use crate::global::{FormatArg, Global};
use crate::output;
use anyhow::Context;
use clap::Args;
use devassert_core::render::{inert, rank_list, RanksBeyond};
use devassert_core::source::SourceRoot;
use devassert_core::{Catalog, OpFamily, Report, SkippedInput};
use devassert_model::ModelDir;
use devassert_scan::{Bounds, ScanOptions, Target};
use serde_json::Value;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  devassert explain crash.log\n  devassert explain job.out job.err      # a split Slurm log, read as one crash\n  devassert explain logs/                # a folder of per-rank logs\n  python train.py 2>&1 | devassert explain -\n\nExit status: 1 a device-side failure found, 0 none, 2 an input could not be used (missing, unreadable, empty, a folder with no log)."
)]
pub struct ExplainArgs {
    /// Log files or folders (read recursively) of one crash; `-` or nothing reads stdin.
    #[arg(value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Show source lines from `.py` files under DIR (default: the current directory); files outside it, or reached through a symlink leaving it, are never read.
    #[arg(long, value_name = "DIR", conflicts_with = "no_source")]
    pub source_root: Option<PathBuf>,
    /// Read no source file at all (for logs from someone else, e.g. in CI).
    #[arg(long)]
    pub no_source: bool,
    /// The model directory the crash used: its `check` findings can establish a cause.
    #[arg(long, value_name = "DIR")]
    pub model: Option<PathBuf>,
    /// The data the crash read: its `scan` findings can establish a cause (bounds from --vocab / --classes, else from --model). One path per flag; repeat it for more.
    #[arg(long, value_name = "PATH")]
    pub data: Vec<PathBuf>,
    /// Token ids in --data must be below N (N >= 1).
    #[arg(long, value_name = "N", requires = "data", conflicts_with = "classes", value_parser = crate::value_parsers::positive::<u64>)]
    pub vocab: Option<u64>,
    /// Labels in --data must be below N (N >= 1; -100 is ignored, as cross_entropy does).
    #[arg(long, value_name = "N", requires = "data", value_parser = crate::value_parsers::positive::<u64>)]
    pub classes: Option<u64>,
    /// Inductor's generated code for a torch.compile crash: a TORCH_COMPILE_DEBUG `torch_compile_debug/` folder or Inductor's cache (`/tmp/torchinductor_<user>`); names the op and your line behind `index out of bounds: 0 <= tmpN < ksM`. Symlinks leaving DIR are not followed.
    #[arg(long, value_name = "DIR")]
    pub inductor_dir: Option<PathBuf>,
}

pub fn run(args: ExplainArgs, g: &Global) -> anyhow::Result<i32> {
    let logs = if args.logs.is_empty() {
        if std::io::stdin().is_terminal() {
            // Waiting for a paste nobody announced helps no one.
            let usage = ExplainArgs::augment_args(clap::Command::new("explain")).render_usage();
            output::eprint(&format!("{usage}\n\ngive a log file, a folder of logs, or pipe the log in: `… 2>&1 | devassert explain -`\n"));
            return Ok(2);
        }
        vec![PathBuf::from("-")]
    } else {
        args.logs.clone()
    };
    // Checked before the log is read: a bad flag fails at once, not after a 1 GiB log.
    let source_root = match (&args.source_root, args.no_source) {
        (Some(dir), false) => {
            anyhow::ensure!(
                dir.is_dir(),
                "{}: --source-root is not a directory",
                dir.display()
            );
            Some(dir.clone())
        }
        _ => None,
    };
    for p in &args.data {
        anyhow::ensure!(
            p.exists() || p.to_string_lossy().contains(['*', '?', '[']),
            "{}: --data: no such file or directory",
            p.display()
        );
    }
    let model = match &args.model {
        Some(dir) => Some(ModelDir::read(dir).context("--model")?),
        None => None,
    };
    let mut left_out = Vec::new();
    let model_left_out = model
        .as_ref()
        .map(|m| super::check::skipped(&m.left_out))
        .unwrap_or_default();
    let generated = match &args.inductor_dir {
        Some(dir) => {
            let (code, skipped) = devassert_log::inductor::read_dir(dir)?;
            warn_skipped(&skipped);
            left_out.extend(skipped);
            Some(code)
        }
        None => None,
    };
    let started = std::time::Instant::now();
    let (mut report, skipped) =
        devassert_log::explain_paths_with(&logs, Catalog::builtin(), generated)?;
    let seconds = started.elapsed().as_secs_f64();
    // Said per entry; the rest of the folder was read.
    warn_skipped(&skipped);
    nothing_read(&report)?;
    report.skipped = skipped
        .iter()
        .chain(&left_out)
        .map(|s| SkippedInput {
            path: s.path.display().to_string(),
            why: s.why.clone(),
        })
        .chain(model_left_out)
        .collect();
    if g.format == FormatArg::Human && !g.quiet {
        let mut text = header(&report);
        if g.verbose {
            text.insert_str(text.len() - 1, &inputs_read(&report, seconds));
        }
        output::print(text.as_bytes())?;
    }
    let mut opts = output::render_options(g);
    if args.no_source {
        opts.source_root = None;
    } else if source_root.is_some() {
        opts.source_root = source_root;
    }
    // One root for the causes and the snippets: each file read, and counted, once.
    opts.sources = opts
        .source_root
        .as_deref()
        .and_then(SourceRoot::new)
        .map(std::rc::Rc::new);
    establish(&mut report, &args, model.as_ref(), opts.sources.as_deref())?;
    output::emit(&report, g, &opts)?;
    Ok(report.exit_code)
}

/// Said per entry; the rest of the folder was read.
fn warn_skipped(skipped: &[devassert_log::Skipped]) {
    for s in skipped {
        output::eprint(&format!(
            "devassert: warning: {}: {}\n",
            inert::line(&s.path.to_string_lossy()),
            inert::line(&s.why)
        ));
    }
}

/// Establish causes from the user's own files: the scripts the frames name
/// (under the source root), `--model`, `--data`.
fn establish(
    report: &mut Report,
    args: &ExplainArgs,
    model: Option<&ModelDir>,
    sources: Option<&SourceRoot>,
) -> anyhow::Result<()> {
    let model_findings = model.map(devassert_model::check).unwrap_or_default();
    let data = if args.data.is_empty() {
        None
    } else {
        let family = report.findings.first().map(|f| f.op_family);
        Some(devassert_scan::scan_paths(
            &args.data,
            &data_options(args, model, family)?,
        ))
    };
    if let Some(scan) = data.as_ref().and_then(|d| d.scan.as_ref()) {
        said_unusable(report, scan);
    }
    crate::establish::establish(
        report,
        &crate::establish::Facts {
            sources,
            model,
            model_findings: &model_findings,
            data: data.as_ref(),
        },
    );
    Ok(())
}

/// `--data` inputs that could not be used are said, as `scan` says them,
/// and kept in the report (`data`): the result rests on less than was
/// named, so the exit code is 2, as scan's and check's are.
fn said_unusable(report: &mut Report, scan: &devassert_core::ScanSection) {
    for e in &scan.errors {
        output::eprint(&format!(
            "devassert: error: --data {}: {}\n",
            inert::line(&e.file),
            inert::line(&e.error)
        ));
    }
    let mut data = devassert_core::DataScans::default();
    match scan.scan.target.as_str() {
        "labels" => data.labels = Some(scan.clone()),
        _ => data.tokens = Some(scan.clone()),
    }
    report.data = Some(data);
    if !scan.errors.is_empty() {
        report.exit_code = 2;
    }
}

/// What the data must hold: --vocab / --classes, else the model's sizes for
/// the failed op (labels for the losses, token ids otherwise).
fn data_options(
    args: &ExplainArgs,
    model: Option<&ModelDir>,
    family: Option<OpFamily>,
) -> anyhow::Result<ScanOptions> {
    let labels = |n: u64| ScanOptions {
        bounds: Bounds::new(0, n as i64),
        ignore: vec![-100],
        target: Target::Labels,
        ..Default::default()
    };
    let tokens = |n: u64, max_len: Option<u64>| ScanOptions {
        bounds: Bounds::new(0, n as i64),
        max_len,
        target: Target::Tokens,
        ..Default::default()
    };
    if let Some(n) = args.classes {
        return Ok(labels(n));
    }
    if let Some(n) = args.vocab {
        return Ok(tokens(n, None));
    }
    let Some(m) = model else {
        anyhow::bail!("--data needs the valid range: --vocab N, --classes N, or --model DIR");
    };
    let label_op = matches!(
        family,
        Some(OpFamily::NllLoss | OpFamily::NllLoss2d | OpFamily::OneHot | OpFamily::GatherScatter)
    );
    if label_op {
        if let Some(c) = m.num_classes() {
            return Ok(labels(c.value));
        }
    }
    match m.embedding_rows() {
        Some(rows) => Ok(tokens(rows.value, m.usable_positions().map(|u| u.value))),
        None => anyhow::bail!(
            "{}: no embedding size or classes known: give --vocab N or --classes N for --data",
            m.path.display()
        ),
    }
}

/// Empty inputs (an empty stdin in CI, a log that was never written) are
/// not a clean log: "no failure found" would be a false all-clear.
fn nothing_read(report: &Report) -> anyhow::Result<()> {
    let inputs = report.inputs.as_deref().unwrap_or_default();
    if inputs.iter().any(|i| i.bytes > 0) {
        return Ok(());
    }
    let names: Vec<String> = inputs
        .iter()
        .map(|i| match i.name.as_str() {
            "-" => "stdin".to_string(),
            name => name.to_string(),
        })
        .collect();
    anyhow::bail!(
        "nothing to explain: {} {} empty (name the log file, or pipe the log in: `… 2>&1 | devassert explain -`)",
        names.join(", "),
        if names.len() == 1 { "is" } else { "are" }
    )
}

/// `-v`: each input with its size, and how long reading took.
fn inputs_read(report: &Report, seconds: f64) -> String {
    let mut out = String::new();
    let mut bytes = 0;
    for i in report.inputs.as_deref().unwrap_or_default() {
        let name = match i.name.as_str() {
            "-" => "stdin".into(),
            name => inert::line(name),
        };
        out.push_str(&format!("  {name}: {} lines, {} bytes\n", i.lines, i.bytes));
        bytes += i.bytes;
    }
    let mib = bytes as f64 / (1024.0 * 1024.0);
    out.push_str(&format!(
        "read and searched in {seconds:.2} s ({mib:.1} MiB)\n"
    ));
    out
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
                inert::line(&i.name).into_owned()
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
        .filter_map(|f| f.evidence.get("ranks").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_i64)
        .collect();
    for f in &report.fallout {
        ranks.extend(&f.ranks);
    }
    ranks.sort_unstable();
    ranks.dedup();
    // Each list holds the first ranks only; the largest count says how many.
    let beyond = report
        .findings
        .iter()
        .map(|f| RanksBeyond::of_evidence(&f.evidence))
        .chain(report.fallout.iter().map(RanksBeyond::of_fallout))
        .fold(RanksBeyond::default(), RanksBeyond::widest);
    let rank_text = if ranks.is_empty() {
        String::new()
    } else {
        format!(", {}", rank_list(&ranks, beyond))
    };
    format!(
        "read {shown}: {lines} line{}{rank_text}\n\n",
        if lines == 1 { "" } else { "s" }
    )
}
