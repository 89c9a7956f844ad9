//! `devassert run [OPTIONS] -- CMD…`: run a command under supervision with the
//! guard injected into every Python process, then print one diagnosis that
//! merges the guards' findings with what the log shows.

use crate::global::{ColorArg, FormatArg, Global};
use crate::output;
use anyhow::Context;
use clap::{Args, ValueEnum};
use devassert_core::{render, Catalog, Child, RenderOptions, Report, RunSection};
use devassert_run::{GuardDir, GuardLevel, LogSink, RunConfig};
use std::ffi::OsString;
use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(
    about = "Run a command under the guard and diagnose its failure.",
    long_about = "Run a command under supervision: its stdout and stderr pass through unchanged, the whole output is kept in a log, and every Python process it starts (torchrun / accelerate ranks, DataLoader workers, multiprocessing children) gets the devassert guard, which stops an op with an out-of-range index or an invalid probability before it launches, at the line that called it. After the command ends, devassert prints its diagnosis on stderr and exits with the command's own status (128+N for signal N).",
    after_help = "Examples:\n  devassert run -- python train.py --lr 3e-4\n  devassert run --report run.json -- torchrun --nproc_per_node 8 train.py\n  devassert run --cpu -- python train.py        # hide the GPUs: the same batch on CPU\n\nEnvironment given to the command: CUDA_LAUNCH_BLOCKING=1 (unless --no-blocking or already set), TORCH_USE_CUDA_DSA=1, PYTORCH_USE_CUDA_DSA=1, PYTHONUNBUFFERED=1, DEVASSERT_GUARD, DEVASSERT_REPORT_DIR, and PYTHONPATH with the guard first (your PYTHONPATH and sitecustomize are kept)."
)]
pub struct RunArgs {
    /// Keep the whole output here (default: output.log in a private temp dir named at the end).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Write the diagnosis as JSON (the devassert/1 contract, "command": "run").
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Do not set CUDA_LAUNCH_BLOCKING=1 (the guard does not need it; runs at full speed).
    #[arg(long)]
    pub no_blocking: bool,
    /// Hide the GPUs (CUDA_VISIBLE_DEVICES=) to rerun the failing step on CPU.
    #[arg(long)]
    pub cpu: bool,
    /// Guard level: on (default, or DEVASSERT_GUARD), strict (also ops with no device assert: take_along_dim, CTC blank targets) or off (no injection).
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
    Strict,
}

impl LevelArg {
    fn level(self) -> GuardLevel {
        match self {
            LevelArg::Off => GuardLevel::Off,
            LevelArg::On => GuardLevel::On,
            LevelArg::Strict => GuardLevel::Strict,
        }
    }
}

pub fn run(args: RunArgs, g: &Global) -> anyhow::Result<i32> {
    let dir = GuardDir::create()?;
    let level = match args.guard {
        Some(l) => l.level(),
        None => match std::env::var("DEVASSERT_GUARD")
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
            .as_str()
        {
            "off" | "0" | "false" | "no" => GuardLevel::Off,
            "strict" => GuardLevel::Strict,
            _ => GuardLevel::On,
        },
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
    let log_report = log.finish();

    let catalog = Catalog::builtin();
    let guard = devassert_run::collect_findings(&dir.reports());
    for w in &guard.warnings {
        eprintln!("devassert: warning: {w}");
    }
    let mut report = devassert_run::merge(guard.findings, log_report, catalog);
    report.exit_code = status.code();
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

    if let Some(path) = &args.report {
        let text = serde_json::to_string_pretty(&report)? + "\n";
        std::fs::write(path, text)
            .with_context(|| format!("cannot write the report {}", path.display()))?;
    }
    print_diagnosis(&report, g, &log_path);
    if args.log.is_some() {
        // The private dir only held the guard and its reports, now merged.
        let _ = std::fs::remove_dir_all(&dir.root);
    }
    Ok(status.code())
}

fn environment(args: &RunArgs, dir: &GuardDir, level: GuardLevel) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    let mut set = |k: &str, v: OsString| env.push((k.into(), v));
    if !args.no_blocking && std::env::var_os("CUDA_LAUNCH_BLOCKING").is_none() {
        set("CUDA_LAUNCH_BLOCKING", "1".into());
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
        verbose: g.verbose,
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
