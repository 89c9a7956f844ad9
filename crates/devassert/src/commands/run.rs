//! `devassert run [OPTIONS] -- CMD…`: run a command under supervision with the
//! guard injected into every Python process, then print one diagnosis that
//! merges the guards' findings with what the log shows.

use crate::cli::{ColorArg, FormatArg, Global};
use crate::output;
use anyhow::Context;
use clap::{Args, ValueEnum};
use devassert_core::{render, Catalog, Finding, RenderOptions, Report};
use devassert_log::LogAnalyzer;
use devassert_run::{GuardDir, GuardLevel, RunConfig, Stream};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(
    about = "Run a command under the guard and diagnose its failure.",
    long_about = "Run a command under supervision: its stdout and stderr pass through unchanged, the whole output is kept in a log, and every Python process it starts (torchrun / accelerate ranks, DataLoader workers, multiprocessing children) gets the devassert guard, which stops an op with an out-of-range index or an invalid probability before it launches, at the line that called it. After the command ends, devassert prints its diagnosis on stderr and exits with the command's own status (128+N for signal N).",
    after_help = "Examples:\n  devassert run -- python train.py --lr 3e-4\n  devassert run --report run.json -- torchrun --nproc_per_node 8 train.py\n  devassert run --cpu -- python train.py        # hide the GPUs: the same batch on CPU\n  devassert run --blocking --eager -- python train.py  # the line of an unguarded assert\n\nEnvironment given to the command: CUDA_LAUNCH_BLOCKING=1 (only with --blocking), TORCHDYNAMO_DISABLE=1 and TORCH_COMPILE_DISABLE=1 (only with --eager), TORCH_USE_CUDA_DSA=1, PYTORCH_USE_CUDA_DSA=1, PYTHONUNBUFFERED=1, DEVASSERT_GUARD, DEVASSERT_REPORT_DIR, and PYTHONPATH with the guard first (your PYTHONPATH and sitecustomize are kept).\n\nEach run gets a folder under $DEVASSERT_RUNS_DIR, else $XDG_CACHE_HOME/devassert/runs, else ~/.cache/devassert/runs, named <UTC time>-<pid>: the log and the guard reports stay there (the newest 20 runs are kept); the guard's own copy is removed when the run ends."
)]
pub struct RunArgs {
    /// Keep the whole output here (default: output.log in the run's folder, ~/.cache/devassert/runs/<time>-<pid>, named at the end).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Write the diagnosis as JSON (the devassert/1 contract, "command": "run").
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Set CUDA_LAUNCH_BLOCKING=1: every kernel launch waits for its kernel, so a device assert the guard did not stop is reported at the line that launched it. Slow; the guard does not need it.
    #[arg(long)]
    pub blocking: bool,
    /// No effect (kept for old scripts): CUDA_LAUNCH_BLOCKING is only set with --blocking.
    #[arg(long, hide = true, conflicts_with = "blocking")]
    pub no_blocking: bool,
    /// Disable torch.compile (TORCHDYNAMO_DISABLE=1, TORCH_COMPILE_DISABLE=1) so the guard checks every op, compiled regions included.
    #[arg(long)]
    pub eager: bool,
    /// Hide the GPUs (CUDA_VISIBLE_DEVICES=) to rerun the failing step on CPU.
    #[arg(long)]
    pub cpu: bool,
    /// Guard level: on (default, or DEVASSERT_GUARD), async (no host sync on the happy path: CUDA checks are queued and read back at a later guarded op or at exit), strict (also ops with no device assert: take_along_dim, CTC blank targets) or off (no injection).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub guard: Option<LevelArg>,
    /// The command and its arguments (run directly, no shell).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelArg {
    Off,
    On,
    Async,
    Strict,
}

impl LevelArg {
    fn level(self) -> GuardLevel {
        match self {
            LevelArg::Off => GuardLevel::Off,
            LevelArg::On => GuardLevel::On,
            LevelArg::Async => GuardLevel::Async,
            LevelArg::Strict => GuardLevel::Strict,
        }
    }
}

pub fn run(args: RunArgs, g: &Global) -> anyhow::Result<i32> {
    let dir = GuardDir::create()?;
    let level = match args.guard {
        Some(l) => l.level(),
        None => GuardLevel::from_env_value(&std::env::var("DEVASSERT_GUARD").unwrap_or_default()),
    };
    let cfg = RunConfig {
        argv: args.command.clone(),
        set_env: environment(&args, &dir, level),
    };
    let log_path = args
        .log
        .clone()
        .unwrap_or_else(|| dir.root.join("output.log"));
    let file = File::create(&log_path)
        .with_context(|| format!("cannot create the log file {}", log_path.display()))?;
    let mut log = LogSink::new(file, log_path.display().to_string());

    let status = devassert_run::run(&cfg, |stream, bytes| log.feed(stream, bytes))?;
    let mut log_report = log.finish();

    let catalog = Catalog::builtin();
    let guard_findings = devassert_run::collect_findings(&dir.reports(), status.code() == 0);
    devassert_run::rerun::annotate_unstopped(
        &mut log_report,
        &guard_findings,
        &devassert_run::rerun::RunFlags {
            argv: &args.command,
            exit_code: status.code(),
            blocking: args.blocking,
            eager: args.eager,
            level,
        },
    );
    let mut report = merge(guard_findings, log_report, catalog);
    report.exit_code = status.code();
    if status.code() == 0 {
        // The program went on and succeeded: whatever failed, it handled.
        for f in &mut report.findings {
            f.caught = true;
        }
    }
    let mut child = json!({"argv": args.command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(), "exit_code": status.code()});
    if let devassert_run::ExitStatus::Signal(s) = status {
        child["signal"] = json!(s);
    }
    report.extra.insert("child".into(), child);
    report
        .extra
        .insert("log".into(), json!(log_path.display().to_string()));
    report.extra.insert("guard".into(), json!(level.as_str()));
    relativize(&mut report);

    if let Some(path) = &args.report {
        let text = serde_json::to_string_pretty(&report)? + "\n";
        std::fs::write(path, text)
            .with_context(|| format!("cannot write the report {}", path.display()))?;
    }
    print_diagnosis(&report, g, &log_path);
    // Dropping the run folder removes the guard's copy; the log and the
    // guard reports stay until the folder is pruned.
    drop(dir);
    Ok(status.code())
}

fn environment(args: &RunArgs, dir: &GuardDir, level: GuardLevel) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    let mut set = |k: &str, v: OsString| env.push((k.into(), v));
    // Not by default: it serialises every kernel, and the guard stops bad ops
    // before they launch without it.
    if args.blocking {
        set("CUDA_LAUNCH_BLOCKING", "1".into());
    }
    if args.eager {
        // Dynamo reads the first at compile time, its config the second.
        set("TORCHDYNAMO_DISABLE", "1".into());
        set("TORCH_COMPILE_DISABLE", "1".into());
    }
    set("TORCH_USE_CUDA_DSA", "1".into());
    set("PYTORCH_USE_CUDA_DSA", "1".into());
    set("PYTHONUNBUFFERED", "1".into());
    if args.cpu {
        set("CUDA_VISIBLE_DEVICES", "".into());
    }
    set("DEVASSERT_GUARD", level.as_str().into());
    set("DEVASSERT_REPORT_DIR", dir.reports().into_os_string());
    if level != GuardLevel::Off {
        let mut path = dir.site().into_os_string();
        if let Some(user) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
            path.push(":");
            path.push(user);
        }
        set("PYTHONPATH", path);
    }
    env
}

/// The log file and the log reader, fed whole lines per stream so that the
/// two streams never cut into each other's lines.
struct LogSink {
    file: File,
    name: String,
    analyzer: LogAnalyzer,
    pending: [Vec<u8>; 2],
    write_failed: bool,
}

/// A line longer than this (progress bars with `\r`) is written as it is.
const MAX_PENDING: usize = 64 * 1024;

impl LogSink {
    fn new(file: File, name: String) -> Self {
        let mut analyzer = LogAnalyzer::new(Catalog::builtin());
        analyzer.begin_input(&name);
        LogSink {
            file,
            name,
            analyzer,
            pending: [Vec::new(), Vec::new()],
            write_failed: false,
        }
    }

    fn feed(&mut self, stream: Stream, bytes: &[u8]) {
        let i = usize::from(stream == Stream::Stderr);
        let mut buf = std::mem::take(&mut self.pending[i]);
        buf.extend_from_slice(bytes);
        let cut = match memchr_last(&buf) {
            Some(p) => p + 1,
            None if buf.len() > MAX_PENDING => buf.len(),
            None => 0,
        };
        if cut > 0 {
            self.write(&buf[..cut]);
            buf.drain(..cut);
        }
        self.pending[i] = buf;
    }

    fn write(&mut self, bytes: &[u8]) {
        self.analyzer.feed(bytes);
        if !self.write_failed && self.file.write_all(bytes).is_err() {
            self.write_failed = true;
            eprintln!("devassert: cannot write the log file {}", self.name);
        }
    }

    fn finish(mut self) -> Report {
        for i in 0..2 {
            let mut rest = std::mem::take(&mut self.pending[i]);
            if !rest.is_empty() {
                rest.push(b'\n');
                self.write(&rest);
            }
        }
        let _ = self.file.flush();
        self.analyzer.finish()
    }
}

fn memchr_last(buf: &[u8]) -> Option<usize> {
    buf.iter().rposition(|&b| b == b'\n')
}

/// Guard findings first (they carry the real line and values); the log's
/// findings are kept for rules the guard did not see (custom kernels,
/// compiled regions, ops the guard does not cover); the log's fallout is kept.
fn merge(guard: Vec<Finding>, log: Report, catalog: &Catalog) -> Report {
    let mut report = Report::new("run");
    for mut f in guard {
        // The guard's fixes already fit the program (its libraries, labels
        // or ids); the catalog's generic ones would contradict them.
        if let Some(rule) = catalog.get(&f.rule) {
            let base = catalog.finding(rule);
            f.name = base.name;
            f.summary = base.summary;
        }
        report.findings.push(f);
    }
    // A finding the program caught did not end it: the log's failure stands.
    let seen: Vec<String> = report
        .findings
        .iter()
        .filter(|f| !f.caught)
        .map(|f| f.rule.clone())
        .collect();
    let from_guard = !report.findings.is_empty();
    for mut f in log.findings {
        if seen.contains(&f.rule) {
            continue;
        }
        // Once the guard stopped an op, host-side errors are its own traceback.
        if from_guard && !f.evidence.contains_key("kernel") && !f.evidence.contains_key("assertion")
        {
            continue;
        }
        f.evidence.insert("source".into(), json!("log"));
        report.findings.push(f);
    }
    report.fallout = log.fallout;
    report
}

/// Paths under the working directory are shown relative to it.
fn relativize(report: &mut Report) {
    let Ok(cwd) = std::env::current_dir() else {
        return;
    };
    let rel = |file: &mut String| {
        if let Ok(p) = Path::new(file.as_str()).strip_prefix(&cwd) {
            *file = p.display().to_string();
        }
    };
    for f in &mut report.findings {
        if let Some(l) = f.location.as_mut() {
            rel(&mut l.file);
        }
        if let Some(Value::Object(inner)) = f.evidence.get_mut("inner_frame") {
            if let Some(Value::String(file)) = inner.get_mut("file") {
                rel(file);
            }
        }
    }
}

/// The diagnosis goes to stderr: stdout and stderr carried the child's output.
fn print_diagnosis(report: &Report, g: &Global, log_path: &Path) {
    let tty = std::io::stderr().is_terminal();
    let color = match g.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => output::use_color(g, tty),
    };
    let opts = RenderOptions {
        color,
        source_root: std::env::current_dir().ok(),
        rerun_hint: None,
        quiet: g.quiet,
        under_run: true,
    };
    let mut text = String::new();
    let quiet_success = report.findings.is_empty() && report.exit_code == 0;
    if g.format != FormatArg::Human || !quiet_success {
        text.push_str(&render(report, output::format(g), &opts));
    }
    if g.format == FormatArg::Human {
        if report.findings.is_empty() && report.exit_code != 0 {
            text.push_str(&format!(
                "the command exited with status {}\n",
                report.exit_code
            ));
        } else if !report.findings.is_empty() && report.exit_code == 0 {
            text.push_str(
                "\nthe command exited 0: the program caught the errors above and went on\n",
            );
        }
        if !text.is_empty() {
            text.insert(0, '\n');
        }
        text.push_str(&format!(
            "devassert: full output in {}\n",
            log_path.display()
        ));
    }
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
