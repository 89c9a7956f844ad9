//! `check --data`: the data scanned against the model's real bounds: token
//! ids below the embedding rows, rows no longer than the usable positions,
//! labels below the classifier's classes.

use crate::error::ModelError;
use crate::model_dir::ModelDir;
use devassert_core::{DataScans, Finding, Report};
use devassert_scan::{scan_paths, Bounds, ScanOptions, Target};
use std::path::PathBuf;

/// What to scan and which columns hold what.
#[derive(Debug, Clone, Default)]
pub struct DataOptions {
    pub paths: Vec<PathBuf>,
    /// Column (Arrow, Parquet, CSV) or field (JSONL) of the token ids.
    pub column: Option<String>,
    /// Column of class labels; scanned only when given.
    pub labels_column: Option<String>,
}

/// The scans' findings and sections.
#[derive(Debug, Clone, Default)]
pub struct DataCheck {
    pub findings: Vec<Finding>,
    pub scans: DataScans,
    /// Some file could not be read.
    pub unreadable: bool,
}

pub fn check_data(model: &ModelDir, opts: &DataOptions) -> Result<DataCheck, ModelError> {
    let mut out = DataCheck::default();
    let Some(rows) = model.embedding_rows() else {
        return Err(ModelError::NoEmbeddingSize(model.path.clone()));
    };
    let tokens = ScanOptions {
        bounds: Bounds::new(0, rows.value as i64),
        column: opts.column.clone(),
        max_len: model.usable_positions().map(|u| u.value),
        target: Target::Tokens,
        ..Default::default()
    };
    out.scans.tokens = add(&mut out, scan_paths(&opts.paths, &tokens));
    if let Some(col) = &opts.labels_column {
        let Some(classes) = model.num_classes() else {
            return Err(ModelError::NoClasses(model.path.clone()));
        };
        let labels = ScanOptions {
            bounds: Bounds::new(0, classes.value as i64),
            column: Some(col.clone()),
            ignore: vec![-100],
            target: Target::Labels,
            ..Default::default()
        };
        out.scans.labels = add(&mut out, scan_paths(&opts.paths, &labels));
    }
    Ok(out)
}

/// Keep a scan's findings; return its section.
fn add(out: &mut DataCheck, scan: Report) -> Option<devassert_core::ScanSection> {
    out.findings.extend(scan.findings);
    out.unreadable |= scan.exit_code == 2;
    scan.scan
}
