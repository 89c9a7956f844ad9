//! GitHub Actions workflow commands: one `::error` (or `::warning`,
//! `::notice`) line per finding, anchored at the user's source line, the data
//! file or the model file it is about, when there is one; a finding whose
//! places are in several data files gets one line per file. Never at
//! `noticed_at`: that line only surfaced the error, and an annotation there
//! would blame a line that did nothing wrong.
use crate::finding::{Finding, Report};
use crate::place::Scalar;
use crate::vocabulary::Severity;

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_prop(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn message(f: &Finding, values: &[Scalar]) -> String {
    let mut m = f.summary.clone();
    if !values.is_empty() {
        let vals: Vec<String> = values.iter().take(8).map(|v| v.to_string()).collect();
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

/// The data files a finding's places are in, each once, in order, with the
/// values found in each: a scan finding spans every file that holds bad
/// values, and each of them gets its own annotation.
fn data_files(f: &Finding) -> Vec<(&str, Vec<Scalar>)> {
    let mut files: Vec<(&str, Vec<Scalar>)> = Vec::new();
    for l in &f.locations {
        let Some(file) = l.file.as_deref() else {
            continue;
        };
        let at = match files.iter().position(|(name, _)| *name == file) {
            Some(at) => at,
            None => {
                files.push((file, Vec::new()));
                files.len() - 1
            }
        };
        if let Some(v) = l.value.filter(|v| !files[at].1.contains(v)) {
            files[at].1.push(v);
        }
    }
    files
}

pub(super) fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let level = match f.shown_severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let title = format!("title={}", escape_prop(&format!("{} {}", f.rule, f.name)));
        let mut line = |props: Vec<String>, values: &[Scalar]| {
            out.push_str(&format!(
                "::{level} {}::{}\n",
                props.join(","),
                escape_data(&message(f, values))
            ));
        };
        // A notebook cell is no file of the repository to annotate.
        if let Some(loc) = f.location.as_ref().filter(|l| l.cell().is_none()) {
            let file = format!("file={}", escape_prop(&loc.file));
            line(vec![file, format!("line={}", loc.line), title], &f.values);
            continue;
        }
        match data_files(f).as_slice() {
            [] => {}
            // One file: the finding's own values, all of them.
            [(file, _)] => {
                line(
                    vec![format!("file={}", escape_prop(file)), title],
                    &f.values,
                );
                continue;
            }
            many => {
                for (file, values) in many {
                    let values = if values.is_empty() { &f.values } else { values };
                    line(
                        vec![format!("file={}", escape_prop(file)), title.clone()],
                        values,
                    );
                }
                continue;
            }
        }
        match model_file(report, f) {
            Some(file) => line(
                vec![format!("file={}", escape_prop(&file)), title],
                &f.values,
            ),
            None => line(vec![title], &f.values),
        }
    }
    out
}
