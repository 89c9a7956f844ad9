//! `devassert scan`: out-of-range token ids and labels in data files, and
//! `--merge` of shard reports.

use crate::global::{FormatArg, Global};
use crate::output;
use anyhow::{bail, Context};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Args;
use devassert_core::render::inert;
use devassert_core::{Command, Report};
use devassert_scan::dtype::DTYPES;
use devassert_scan::format::FORMATS;
use devassert_scan::{Bounds, Dtype, InputFormat, Progress, ScanOptions, Shard, Target};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// `--input-format`'s values and their spellings, from the formats table.
fn input_format_parser() -> impl TypedValueParser<Value = InputFormat> {
    let values = FORMATS
        .iter()
        .map(|f| PossibleValue::new(f.name).aliases(f.aliases.iter().copied()));
    PossibleValuesParser::new(values).try_map(|s| s.parse::<InputFormat>())
}

/// `--dtype`'s values from the dtype table; the numpy spellings are aliases.
fn dtype_parser() -> impl TypedValueParser<Value = Dtype> {
    let values = DTYPES
        .iter()
        .map(|d| PossibleValue::new(d.name).alias(d.numpy));
    PossibleValuesParser::new(values).try_map(|s| s.parse::<Dtype>())
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  devassert scan data/*.bin --vocab 50257\n  devassert scan ~/.cache/huggingface/datasets/… --vocab 32000 --column input_ids --max-len 4096\n  devassert scan masks/ --classes 21 --ignore 255\n  devassert scan shards/ --vocab 50257 --shard 3/8 --format json > part-3.json\n  devassert scan --merge part-*.json\n\nExit status: 0 clean, 1 findings, 2 an input could not be used (a file that cannot be read, a folder with no data file in it)."
)]
pub struct ScanArgs {
    /// Files, directories (scanned recursively) and globs; with --merge, the shard reports.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Token ids: valid range [0, N) (N >= 1).
    #[arg(long, value_name = "N", conflicts_with_all = ["classes", "range"], value_parser = crate::value_parsers::positive::<u64>)]
    pub vocab: Option<u64>,
    /// Class labels: valid range [0, N) (N >= 1); -100 is ignored unless --ignore says otherwise.
    #[arg(long, value_name = "N", conflicts_with = "range", value_parser = crate::value_parsers::positive::<u64>)]
    pub classes: Option<u64>,
    /// Valid range LO:HI (HI exclusive).
    #[arg(long, value_name = "LO:HI", allow_hyphen_values = true)]
    pub range: Option<String>,
    /// With --range: the values are labels, not token ids.
    #[arg(long, requires = "range")]
    pub labels: bool,
    /// A legal sentinel that is never out of range (repeatable: --ignore -100 --ignore 255).
    #[arg(long, value_name = "V", allow_negative_numbers = true)]
    pub ignore: Vec<i64>,
    /// Column (Arrow, Parquet, CSV: name or 0-based index) or field path (JSONL, dotted).
    #[arg(long, value_name = "NAME")]
    pub column: Option<String>,
    /// Tensor (safetensors) or member (npz) to scan; all integer ones by default.
    #[arg(long, value_name = "NAME")]
    pub tensor: Option<String>,
    /// Element type of raw token files (default u16; numpy names such as int32
    /// work too). A Megatron .bin takes it from the .idx beside it.
    #[arg(long, value_name = "TYPE", ignore_case = true, value_parser = dtype_parser())]
    pub dtype: Option<Dtype>,
    /// Format of files that neither content nor extension identify.
    #[arg(long, value_name = "FORMAT", ignore_case = true, value_parser = input_format_parser())]
    pub input_format: Option<InputFormat>,
    /// Shortest valid row (list columns, JSONL arrays).
    #[arg(long, value_name = "N")]
    pub min_len: Option<u64>,
    /// Longest valid row: max_position_embeddings (list columns, JSONL arrays).
    #[arg(long, value_name = "N", value_parser = crate::value_parsers::positive::<u64>)]
    pub max_len: Option<u64>,
    /// Locations kept per finding (N >= 1).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = crate::value_parsers::positive::<usize>)]
    pub limit: usize,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N", value_parser = crate::value_parsers::positive::<usize>)]
    pub threads: Option<usize>,
    /// Scan only shard K of N (K from 0) of the sorted file list.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Memory the scan may decode into (PNG masks, npz members, Parquet
    /// pages, the row offsets of Parquet/Arrow/JSONL rows), all files
    /// together: 512M, 2G, 1048576 (bytes). A file that needs more is refused
    /// (exit 2) and the other files are still scanned; a budget this machine
    /// cannot give is refused before anything is read.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
    pub max_decoded: u64,
    /// Merge shard reports (`--format json` output of scans) into one.
    #[arg(long, conflicts_with_all = ["vocab", "classes", "range", "shard"])]
    pub merge: bool,
}

fn parse_range(s: &str) -> anyhow::Result<Bounds> {
    let (lo, hi) = s
        .split_once(':')
        .with_context(|| format!("--range {s:?} is not LO:HI"))?;
    let lo: i64 = lo
        .trim()
        .parse()
        .with_context(|| format!("--range low {lo:?} is not an integer"))?;
    let hi: i64 = hi
        .trim()
        .parse()
        .with_context(|| format!("--range high {hi:?} is not an integer"))?;
    if hi <= lo {
        bail!("--range {s}: HI must be greater than LO");
    }
    Ok(Bounds::new(lo, hi))
}

fn options(args: &ScanArgs) -> anyhow::Result<ScanOptions> {
    let n = |v: u64| i64::try_from(v).context("the bound is too large");
    let (bounds, target) = match (args.vocab, args.classes, &args.range) {
        (Some(v), _, _) => (Bounds::new(0, n(v)?), Target::Tokens),
        (_, Some(c), _) => (Bounds::new(0, n(c)?), Target::Labels),
        (_, _, Some(r)) => (
            parse_range(r)?,
            if args.labels {
                Target::Labels
            } else {
                Target::Tokens
            },
        ),
        _ => {
            bail!("say what is valid: --vocab N (token ids), --classes N (labels) or --range LO:HI")
        }
    };
    // cross_entropy ignores -100 by default; an explicit --ignore replaces it, as ignore_index does.
    let ignore = if args.ignore.is_empty() && target == Target::Labels {
        vec![-100]
    } else {
        args.ignore.clone()
    };
    // Refused now, not aborted mid-scan by a failed allocation.
    devassert_scan::budget::affordable(args.max_decoded).map_err(anyhow::Error::msg)?;
    Ok(ScanOptions {
        bounds,
        ignore,
        column: args.column.clone(),
        tensor: args.tensor.clone(),
        dtype: args.dtype,
        input_format: args.input_format,
        min_len: args.min_len,
        max_len: args.max_len,
        limit: args.limit,
        target,
        threads: args.threads,
        shard: args.shard,
        decode_budget: args.max_decoded,
    })
}

/// `512M`, `2G`, `64KiB`, `1048576`: binary multiples, case-insensitive.
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(&t);
    let (digits, shift) = match t.char_indices().last() {
        Some((i, 'k')) => (&t[..i], 10),
        Some((i, 'm')) => (&t[..i], 20),
        Some((i, 'g')) => (&t[..i], 30),
        Some((i, 't')) => (&t[..i], 40),
        _ => (t, 0),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a size (like 512M, 2G or a number of bytes)"))?;
    if n == 0 {
        return Err("the size must be above 0".into());
    }
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// A bar on stderr by bytes, with rate and ETA, shown only on a terminal once
/// the scan has run a moment. It moves as each 1 MiB chunk is read, so one
/// large file shows progress too.
struct Bar {
    bar: OnceLock<ProgressBar>,
    since: Instant,
    shown: AtomicBool,
    enabled: bool,
}

impl Progress for Bar {
    fn start(&self, files: u64, bytes: u64) {
        let bar = ProgressBar::with_draw_target(Some(bytes), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:30} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta} {msg}",
        ) {
            bar.set_style(style);
        }
        bar.set_message(format!("{files} file{}", if files == 1 { "" } else { "s" }));
        let _ = self.bar.set(bar);
    }
    fn advance(&self, bytes: u64) {
        let Some(bar) = self.bar.get() else { return };
        bar.inc(bytes);
        if self.enabled
            && !self.shown.load(Ordering::Relaxed)
            && self.since.elapsed() > Duration::from_millis(300)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
    fn finish(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}

/// The largest shard report `--merge` reads (one lists at most a few
/// dozen values and places per finding).
const REPORT_LIMIT: u64 = 64 << 20;

pub fn run(args: ScanArgs, g: &Global) -> anyhow::Result<i32> {
    let report = if args.merge {
        let mut reports = Vec::new();
        for p in &args.paths {
            // A regular file of a report's size: a FIFO never blocks the merge.
            let text = devassert_core::regular::read(p, REPORT_LIMIT)
                .with_context(|| format!("cannot read {}", p.display()))?;
            let r: Report = serde_json::from_slice(&text).with_context(|| {
                format!(
                    "{} is not a devassert scan report (--format json)",
                    p.display()
                )
            })?;
            if r.command != Command::Scan {
                bail!(
                    "{} is a `{}` report, not a scan report",
                    p.display(),
                    r.command
                );
            }
            reports.push(r);
        }
        devassert_scan::merge_reports(&reports, args.limit)?
    } else {
        let opts = options(&args)?;
        let bar = Bar {
            bar: OnceLock::new(),
            since: Instant::now(),
            shown: AtomicBool::new(false),
            // Only for a person at a terminal: never beside machine output.
            enabled: std::io::stderr().is_terminal() && !g.quiet && g.format == FormatArg::Human,
        };
        devassert_scan::scan_paths_with(&args.paths, &opts, &bar)
    };
    for e in report.scan.iter().flat_map(|s| &s.errors) {
        output::eprint(&format!(
            "devassert: error: {}: {}\n",
            inert::line(&e.file),
            inert::line(&e.error)
        ));
    }
    output::emit(&report, g, &output::render_options(g))?;
    Ok(report.exit_code)
}
