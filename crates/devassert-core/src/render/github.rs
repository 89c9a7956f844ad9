//! GitHub Actions workflow commands: one `::error` (or `::warning`,
//! `::notice`) line per finding, anchored at the user's source line, the data
//! file or the model file it is about, when there is one. Never at
//! `noticed_at`: that line only surfaced the error, and an annotation there
//! would blame a line that did nothing wrong.
use crate::finding::{Finding, Report};
use crate::vocabulary::Severity;

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_prop(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn message(f: &Finding) -> String {
    let mut m = f.summary.clone();
    if !f.values.is_empty() {
        let vals: Vec<String> = f.values.iter().take(8).map(|v| v.to_string()).collect();
        m.push_str(&format!("; values {}", vals.join(", ")));
    }
    if let Some(b) = &f.bound {
        m.push_str(&format!(" outside {b}"));
    }
    if let Some(c) = f.causes.first() {
        m.push_str(&format!(
            "; likely cause: {} ({:.0}%)",
            c.id,
            c.confidence * 100.0
        ));
    }
    if let Some(fix) = f.fixes.first() {
        m.push_str(&format!("\nfix: {fix}"));
    }
    m
}

/// `check`: the model file the finding is about (its evidence lists the
/// files it compared, that one first), under the directory as the user named it.
fn model_file(report: &Report, f: &Finding) -> Option<String> {
    let dir = &report.model.as_ref()?.dir;
    let first = f.evidence.get("files")?.as_array()?.first()?.as_str()?;
    Some(
        std::path::Path::new(dir)
            .join(first)
            .to_string_lossy()
            .into_owned(),
    )
}

pub(super) fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let level = match f.shown_severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let mut props = Vec::new();
        // A notebook cell is no file of the repository to annotate.
        if let Some(loc) = f.location.as_ref().filter(|l| l.cell().is_none()) {
            props.push(format!("file={}", escape_prop(&loc.file)));
            props.push(format!("line={}", loc.line));
        } else if let Some(file) = f.locations.first().and_then(|l| l.file.as_deref()) {
            props.push(format!("file={}", escape_prop(file)));
        } else if let Some(file) = model_file(report, f) {
            props.push(format!("file={}", escape_prop(&file)));
        }
        props.push(format!(
            "title={}",
            escape_prop(&format!("{} {}", f.rule, f.name))
        ));
        out.push_str(&format!(
            "::{level} {}::{}\n",
            props.join(","),
            escape_data(&message(f))
        ));
    }
    out
}
