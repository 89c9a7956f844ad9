//! `devassert check MODEL_DIR`: config vs tokenizer vs safetensors shapes,
//! and with `--data`, the data against the model's real bounds.

use crate::global::Global;
use crate::output;
use clap::Args;
use devassert_core::render::inert;
use devassert_core::{Command, Report, SkippedInput};
use devassert_model::{DataOptions, LeftOut, ModelDir};
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  devassert check ./my-model\n  devassert check ./my-model --data train.arrow --column input_ids --labels-column label\n\nExit status: 1 findings, 0 none (notes only), 2 an input could not be used."
)]
pub struct CheckArgs {
    /// A Hugging Face model directory (config.json, tokenizer files, *.safetensors),
    /// or a Hub id (org/name[@rev]) or cache folder, read from the local cache only.
    pub model_dir: PathBuf,
    /// A data file or folder to scan against the model's bounds: ids < embedding rows, lengths <= usable positions. One path per flag; repeat it for more.
    #[arg(long, value_name = "PATH")]
    pub data: Vec<PathBuf>,
    /// Column (Arrow, Parquet, CSV) or field (JSONL) holding the token ids.
    #[arg(long, value_name = "C", requires = "data")]
    pub column: Option<String>,
    /// Column holding class labels, checked against the classifier's classes (-100 is ignored).
    #[arg(long, value_name = "L", requires = "data")]
    pub labels_column: Option<String>,
}

pub fn run(args: CheckArgs, g: &Global) -> anyhow::Result<i32> {
    let dir = args.model_dir.display().to_string();
    // A panic reading or checking the directory is an error naming it.
    let checked = devassert_core::contain::catch(|| {
        ModelDir::read(&args.model_dir).map(|model| {
            let findings = devassert_model::check(&model);
            (findings, model)
        })
    })
    .map_err(|p| {
        anyhow::anyhow!(
            "internal error checking {dir}: {p}; this is a bug in devassert: please report it"
        )
    })?;
    let (findings, model) = checked?;
    let mut report = Report::new(Command::Check);
    report.findings = findings;
    report.model = Some(devassert_model::summary(&model));
    // A file left out makes the check incomplete: said, and exit 2, the
    // rest of the folder checked.
    report.skipped = skipped(&model.left_out);
    let mut could_not_read = !report.skipped.is_empty();
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
        could_not_read |= data.unreadable;
    }

    report.exit_code = devassert_core::exit_code(&report.findings, could_not_read);
    output::emit(&report, g, &output::render_options(g))?;
    Ok(report.exit_code)
}

/// The files of the model folder left out, each said on stderr, as the
/// report's `skipped[]`.
pub(crate) fn skipped(left_out: &[LeftOut]) -> Vec<SkippedInput> {
    left_out
        .iter()
        .map(|l| {
            let path = l.path.display().to_string();
            output::eprint(&format!(
                "devassert: warning: {}: {}\n",
                inert::line(&path),
                inert::line(&l.why)
            ));
            SkippedInput {
                path,
                why: l.why.clone(),
            }
        })
        .collect()
}
