//! `devassert run [OPTIONS] -- CMD…`: run a command under supervision with the
//! guard injected into every Python process, then print one diagnosis that
//! merges the guards' findings with what the log shows.

use crate::global::{ColorArg, FormatArg, Global};
use crate::output;
use anyhow::Context;
use clap::{Args, ValueEnum};
use devassert_core::{render, Catalog, Child, Format, RenderOptions, Report, RunSection};
use devassert_run::{GuardDir, GuardLevel, LogSink, RunConfig};
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(
    about = "Run a command under the guard and diagnose its failure.",
    long_about = "Run a command under supervision: its stdout and stderr pass through unchanged, the whole output is kept in a log, and every Python process it starts (torchrun / accelerate ranks, DataLoader workers, multiprocessing children) gets the devassert guard, which stops an op with an out-of-range index or an invalid probability before it launches, at the line that called it. After the command ends, devassert prints its diagnosis on stderr and exits with the command's own status (128+N for signal N), or with --exit-code diagnosis the diagnosis' (1 a failure found, 0 none). With --format json or github, the diagnosis is the only thing on stdout, written after the command ends; the command's stdout then goes to stderr.",
    after_help = "Examples:\n  devassert run -- python train.py --lr 3e-4\n  devassert run --report run.json -- torchrun --nproc_per_node 8 train.py\n  devassert run --cpu -- python train.py        # hide the GPUs: the same batch on CPU\n  devassert run --blocking --eager -- python train.py  # the line of an unguarded assert\n  devassert run --on-bad-batch skip --quarantine bad.jsonl -- torchrun --nproc_per_node 8 train.py\n\nEnvironment given to the command: CUDA_LAUNCH_BLOCKING=1 (only with --blocking), TORCHDYNAMO_DISABLE=1 and TORCH_COMPILE_DISABLE=1 (only with --eager), TORCH_USE_CUDA_DSA=1, PYTORCH_USE_CUDA_DSA=1, PYTHONUNBUFFERED=1, DEVASSERT_GUARD, DEVASSERT_REPORT_DIR, DEVASSERT_ON_BAD_BATCH / DEVASSERT_QUARANTINE / DEVASSERT_MAX_SKIPS (with --on-bad-batch, --quarantine, --max-skips), and PYTHONPATH with the guard first (your PYTHONPATH and sitecustomize are kept).\n\nEach run gets a folder under $DEVASSERT_RUNS_DIR, else $XDG_CACHE_HOME/devassert/runs, else ~/.cache/devassert/runs, named <UTC time>-<pid>: the log and the guard reports stay there (the newest 20 runs are kept); the guard's own copy is removed when the run ends."
)]
pub struct RunArgs {
    /// Keep the whole output here (default: output.log in the run's folder, ~/.cache/devassert/runs/<time>-<pid>, named at the end).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Write the diagnosis as JSON (the devassert/1 contract, "command": "run"). Checked before the command starts.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Which exit code devassert ends with: the command's own (child, the default; 128+N for signal N) or the diagnosis' (diagnosis: 1 when an uncaught failure was found, 0 when none, as explain, scan and check).
    #[arg(long, value_enum, value_name = "FROM", default_value_t = ExitFrom::Child)]
    pub exit_code: ExitFrom,
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
    /// What a violation in training does: raise (default, or DEVASSERT_ON_BAD_BATCH) or skip (the op runs on values made valid, the optimizer step that follows changes no parameter or optimizer state, on every rank, and the run goes on; see docs/skip.md).
    #[arg(long, value_enum, value_name = "POLICY")]
    pub on_bad_batch: Option<BadBatchArg>,
    /// With --on-bad-batch skip: append each skipped sample to FILE as one JSON line (devassert.quarantine.exclude reads it for the resumed run).
    #[arg(long, value_name = "FILE")]
    pub quarantine: Option<PathBuf>,
    /// With --on-bad-batch skip: raise once more than N optimizer steps were skipped (default 10): that many bad batches is a bug, not bad samples.
    #[arg(long, value_name = "N")]
    pub max_skips: Option<u32>,
    /// The command and its arguments (run directly, no shell).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

/// Where `run`'s exit code comes from.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitFrom {
    /// The command's own status, as if devassert were not there.
    Child,
    /// The contract's code: 1 an uncaught failure found, 0 none.
    Diagnosis,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelArg {
    Off,
    On,
    Async,
    Strict,
}

/// `--on-bad-batch`: the guard's policy for a violation in training.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadBatchArg {
    Raise,
    Skip,
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
    // Opened before the command starts: a report that cannot be written
    // fails now (exit 2), not after a job of hours.
    let mut report_file = match &args.report {
        Some(path) => Some(PendingReport::create(path)?),
        None => None,
    };
    let quarantine = quarantine_path(&args)?;
    let (dir, unrecorded) = GuardDir::create_or_temporary()?;
    if let Some(e) = unrecorded {
        // The job runs anyway: a record is no reason to stop it.
        output::eprint(&format!(
            "devassert: warning: no run record could be written ({}); this run's log and guard reports are in {} instead\n",
            devassert_core::render::inert::line(&e.to_string()),
            devassert_core::render::inert::line(&dir.root.display().to_string())
        ));
    }
    let level = match args.guard {
        Some(l) => l.level(),
        None => GuardLevel::from_env_value(&std::env::var("DEVASSERT_GUARD").unwrap_or_default()),
    };
    let cfg = RunConfig {
        argv: args.command.clone(),
        set_env: environment(&args, &dir, level, quarantine),
        // Machine output owns stdout; the command's lines go to stderr.
        stdout_to_stderr: g.format != FormatArg::Human,
    };
    let log_path = args
        .log
        .clone()
        .unwrap_or_else(|| dir.root.join("output.log"));
    // The log holds everything the program printed: 0600 whatever the umask.
    let file = devassert_run::private::create_file(&log_path)
        .with_context(|| format!("cannot create the log file {}", log_path.display()))?;
    let mut log = LogSink::new(file, log_path.display().to_string());

    let ended = devassert_run::run(&cfg, |stream, bytes| log.feed(stream, bytes))?;
    let status = ended.status;
    let log_end = log.finish();
    let mut log_report = log_end.report;
    let log_state = LogState {
        path: &log_path,
        write_error: log_end.write_error,
        skipped: log_end.skipped,
        undrained: ended.undrained,
        crash: log_end.crash,
    };

    let catalog = Catalog::builtin();
    let guard = devassert_run::collect_findings(&dir.reports(), status.code() == 0);
    for w in &guard.warnings {
        output::eprint(&format!(
            "devassert: warning: {}\n",
            devassert_core::render::inert::line(w)
        ));
    }
    devassert_run::rerun::annotate_unstopped(
        &mut log_report,
        &guard.findings,
        &devassert_run::rerun::RunFlags {
            argv: &args.command,
            exit_code: status.code(),
            blocking: args.blocking,
            eager: args.eager,
            level,
        },
    );
    let mut report = devassert_run::merge(guard.findings, log_report, catalog);
    if status.code() == 0 {
        // The program went on and succeeded: whatever failed, it handled.
        for f in &mut report.findings {
            f.caught = true;
        }
    }
    report.exit_code = match args.exit_code {
        // A crashed log reader left the log unread: an internal error, 2
        // (never 0, never the child's status alone), whichever code was asked.
        _ if log_state.crash.is_some() => 2,
        ExitFrom::Child => status.code(),
        ExitFrom::Diagnosis => devassert_core::exit_code(&report.findings, false),
    };
    report.run = Some(RunSection {
        child: Child {
            argv: args
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            exit_code: status.code(),
            signal: match status {
                devassert_run::ExitStatus::Signal(s) => Some(s),
                devassert_run::ExitStatus::Code(_) => None,
            },
        },
        guard: level.as_str().to_string(),
        log: log_path.display().to_string(),
    });
    if let Ok(cwd) = std::env::current_dir() {
        devassert_run::relativize(&mut report, &cwd);
    }

    // The file holds what every format shows: causes ranked, next steps derived.
    devassert_core::advice::settle(
        &mut report,
        &devassert_core::advice::Context {
            rerun_hint: None,
            under_run: true,
        },
    );
    if let Some(file) = report_file.as_mut() {
        file.write(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    }
    print_diagnosis(&report, g, &log_state)?;
    // Dropping the run folder removes the guard's copy; the log and the
    // guard reports stay until the folder is pruned.
    drop(dir);
    Ok(report.exit_code)
}

/// The `--report` file, created before the command starts and removed again
/// if the run ends without a report in it (the command could not start):
/// an empty file would read as a broken report.
struct PendingReport<'a> {
    path: &'a Path,
    file: std::fs::File,
    written: bool,
}

impl<'a> PendingReport<'a> {
    fn create(path: &'a Path) -> anyhow::Result<Self> {
        let file = devassert_run::private::create_file(path)
            .with_context(|| format!("cannot write the report {}", path.display()))?;
        Ok(PendingReport {
            path,
            file,
            written: false,
        })
    }

    fn write(&mut self, text: &str) -> anyhow::Result<()> {
        self.file
            .write_all(text.as_bytes())
            .with_context(|| format!("cannot write the report {}", self.path.display()))?;
        self.written = true;
        Ok(())
    }
}

impl Drop for PendingReport<'_> {
    fn drop(&mut self) {
        if !self.written {
            let _ = std::fs::remove_file(self.path);
        }
    }
}

/// `--quarantine` made absolute (the command may change directory), checked
/// before the command starts: its folder must exist. Asked for without
/// `--on-bad-batch skip` it would never be written: that is an error too.
fn quarantine_path(args: &RunArgs) -> anyhow::Result<Option<PathBuf>> {
    let skip = args.on_bad_batch == Some(BadBatchArg::Skip)
        || (args.on_bad_batch.is_none()
            && std::env::var("DEVASSERT_ON_BAD_BATCH")
                .is_ok_and(|v| v.trim().eq_ignore_ascii_case("skip")));
    if !skip && (args.quarantine.is_some() || args.max_skips.is_some()) {
        anyhow::bail!("--quarantine and --max-skips apply to --on-bad-batch skip only");
    }
    let Some(path) = &args.quarantine else {
        return Ok(None);
    };
    let path = std::path::absolute(path)
        .with_context(|| format!("cannot resolve the quarantine file {}", path.display()))?;
    let parent = path.parent().unwrap_or(Path::new("/"));
    if !parent.is_dir() {
        anyhow::bail!(
            "the quarantine file's folder {} does not exist",
            parent.display()
        );
    }
    Ok(Some(path))
}

fn environment(
    args: &RunArgs,
    dir: &GuardDir,
    level: GuardLevel,
    quarantine: Option<PathBuf>,
) -> Vec<(OsString, OsString)> {
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
    // Unset, the user's own DEVASSERT_ON_BAD_BATCH (and the rest) reach the guard.
    match args.on_bad_batch {
        Some(BadBatchArg::Skip) => set("DEVASSERT_ON_BAD_BATCH", "skip".into()),
        Some(BadBatchArg::Raise) => set("DEVASSERT_ON_BAD_BATCH", "raise".into()),
        None => {}
    }
    if let Some(path) = quarantine {
        set("DEVASSERT_QUARANTINE", path.into_os_string());
    }
    if let Some(n) = args.max_skips {
        set("DEVASSERT_MAX_SKIPS", n.to_string().into());
    }
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

/// What became of the log file and of the output the log reader saw.
struct LogState<'a> {
    path: &'a Path,
    write_error: Option<std::io::Error>,
    skipped: u64,
    undrained: bool,
    crash: Option<devassert_log::InternalError>,
}

impl LogState<'_> {
    /// The closing lines: where the output is, and what is missing from it.
    fn lines(&self) -> String {
        let mut out = String::new();
        if let Some(e) = &self.crash {
            out.push_str(&format!(
                "devassert: error: {}\n",
                devassert_core::render::inert::line(&e.to_string())
            ));
        }
        if self.undrained {
            out.push_str(&format!(
                "devassert: the command exited, but a process it started still held its output open after {} s; \
                 output written after that is not in the log\n",
                devassert_run::supervise::DRAIN.as_secs()
            ));
        }
        if self.skipped > 0 {
            out.push_str(&format!(
                "devassert: the log reader fell behind and skipped {} bytes of output; \
                 the log has them: devassert explain {}\n",
                self.skipped,
                self.path.display()
            ));
        }
        match &self.write_error {
            Some(e) => out.push_str(&format!(
                "devassert: the log {} is incomplete (a write failed: {e})\n",
                self.path.display()
            )),
            None => out.push_str(&format!(
                "devassert: full output in {}\n",
                self.path.display()
            )),
        }
        out
    }
}

/// The human diagnosis goes to stderr: stdout and stderr carried the
/// child's output. JSON and GitHub annotations go to stdout, which carried
/// nothing else (the child's stdout went to stderr): one document a program
/// can read whole.
fn print_diagnosis(report: &Report, g: &Global, log: &LogState) -> anyhow::Result<()> {
    if g.format != FormatArg::Human {
        output::eprint(&log.lines());
        let mut opts = output::render_options(g);
        opts.under_run = true;
        return output::emit(report, g, &opts);
    }
    let tty = std::io::stderr().is_terminal();
    let color = match g.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => output::use_color(g, tty),
    };
    let opts = RenderOptions {
        color,
        source_root: std::env::current_dir().ok(),
        sources: None,
        rerun_hint: None,
        quiet: g.quiet,
        under_run: true,
        verbose: g.verbose,
    };
    let mut text = String::new();
    let child = report
        .run
        .as_ref()
        .map_or(report.exit_code, |r| r.child.exit_code);
    let quiet_success = report.findings.is_empty() && child == 0;
    // Nothing found in a log that was not read is no "no failure found".
    let unread = report.findings.is_empty() && log.crash.is_some();
    if !quiet_success && !unread {
        text.push_str(&render(report, Format::Human, &opts));
    }
    if report.findings.is_empty() && child != 0 {
        text.push_str(&format!("the command exited with status {child}\n"));
    } else if !report.findings.is_empty() && child == 0 {
        text.push_str("\nthe command exited 0: the program caught the errors above and went on\n");
    }
    if !text.is_empty() {
        text.insert(0, '\n');
    }
    text.push_str(&log.lines());
    output::eprint(&text);
    Ok(())
}
