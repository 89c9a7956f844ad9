//! `devassert check MODEL_DIR`: config vs tokenizer vs safetensors shapes,
//! and with `--data`, the data against the model's real bounds.

use crate::global::Global;
use crate::output;
use clap::Args;
use devassert_core::{Command, Report, Severity};
use devassert_model::{DataOptions, ModelDir};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// A Hugging Face model directory (config.json, tokenizer files, *.safetensors),
    /// or a Hub id (org/name[@rev]) or cache folder, read from the local cache only.
    pub model_dir: PathBuf,
    /// Data files or folders to scan against the model's bounds: ids < embedding rows, lengths <= usable positions.
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub data: Vec<PathBuf>,
    /// Column (Arrow, Parquet, CSV) or field (JSONL) holding the token ids.
    #[arg(long, value_name = "C", requires = "data")]
    pub column: Option<String>,
    /// Column holding class labels, checked against the classifier's classes (-100 is ignored).
    #[arg(long, value_name = "L", requires = "data")]
    pub labels_column: Option<String>,
}

pub fn run(args: CheckArgs, g: &Global) -> anyhow::Result<i32> {
    let model = ModelDir::read(&args.model_dir)?;
    let mut report = Report::new(Command::Check);
    report.findings = devassert_model::check(&model);
    report.model = Some(devassert_model::summary(&model));

    let mut could_not_read = false;
    if !args.data.is_empty() {
        let data = devassert_model::check_data(
            &model,
            &DataOptions {
                paths: args.data,
                column: args.column,
                labels_column: args.labels_column,
            },
        )?;
        report.findings.extend(data.findings);
        report.data = Some(data.scans);
        could_not_read = data.unreadable;
    }

    let real = report.findings.iter().any(|f| f.severity > Severity::Note);
    report.exit_code = if real {
        1
    } else if could_not_read {
        2
    } else {
        0
    };
    output::emit(&report, g, &output::render_options(g))?;
    Ok(report.exit_code)
}
