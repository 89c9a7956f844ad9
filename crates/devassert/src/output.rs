//! Rendering a report to stdout with the global flags, and the one error style.

use crate::global::{ColorArg, FormatArg, Global};
use devassert_core::render::error_document;
use devassert_core::render::inert;
use devassert_core::{render, Format, RenderOptions, Report};
use std::io::{IsTerminal, Write};

pub fn format(g: &Global) -> Format {
    match g.format {
        FormatArg::Human => Format::Human,
        FormatArg::Json => Format::Json,
        FormatArg::Github => Format::Github,
    }
}

/// Colors on a terminal unless NO_COLOR (any non-empty value) is set.
pub fn use_color(g: &Global, stream_is_tty: bool) -> bool {
    match g.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            stream_is_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

pub fn render_options(g: &Global) -> RenderOptions {
    RenderOptions {
        color: use_color(g, std::io::stdout().is_terminal()),
        source_root: std::env::current_dir().ok(),
        sources: None,
        rerun_hint: None,
        quiet: g.quiet,
        under_run: false,
        verbose: g.verbose,
    }
}

/// Render `report` to stdout in the chosen format.
pub fn emit(report: &Report, g: &Global, opts: &RenderOptions) -> anyhow::Result<()> {
    print(render(report, format(g), opts).as_bytes())
}

/// Write to stdout; a closed pipe (`| head`) is not an error worth reporting.
pub fn print(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// The one error line on stderr and, with `--format json`, the error's
/// `devassert/1` document on stdout (docs/json.md): a script reading stdout
/// gets a document for every outcome.
pub fn print_error(e: &anyhow::Error, g: &Global, command: Option<&str>) {
    // Errors quote file names and file contents: inert, like every report.
    eprint(&format!(
        "devassert: error: {}\n",
        message(e, |s| inert::line(s).into_owned())
    ));
    if let (FormatArg::Json, Some(command)) = (g.format, command) {
        // The JSON keeps the exact text; its writer escapes what a terminal
        // would interpret.
        let _ = print(error_document(command, &message(e, str::to_string)).as_bytes());
    }
}

/// An error and its causes on one line, each shown by `show`.
fn message(e: &anyhow::Error, show: impl Fn(&str) -> String) -> String {
    let mut msg = show(&e.to_string());
    for cause in e.chain().skip(1) {
        // A message that already quotes its cause (`…: {source}`) is not
        // followed by it a second time.
        let cause = show(&cause.to_string());
        if !msg.ends_with(&cause) {
            msg.push_str(": ");
            msg.push_str(&cause);
        }
    }
    msg
}

/// Write to stderr; unlike `eprintln!`, a closed pipe (`2>&1 | head`) is
/// not a panic: there is no one left to tell.
pub fn eprint(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
