//! The embedded catalog is valid, complete and unambiguous: every kernel
//! assertion compiled into the PyTorch wheels 1.4–2.15 (the reference table)
//! is owned by exactly one rule, the internal invariants by the generic one.

use devassert_core::catalog::{fallback, normalize_assertion, normalize_kernel, normalize_path};
use devassert_core::{Catalog, DeviceAssert, CAUSE_IDS};
use std::collections::HashSet;

const TSV: &str = include_str!("../../../catalog/reference/pytorch-device-asserts-lines.tsv");
const REFERENCE: &str = include_str!("../../../catalog/reference/pytorch-device-asserts.md");
const INTERNAL: &str = "DA901";

/// `(file basename, function, assertion)` of the reference's §3 table.
fn internal_rows() -> HashSet<(String, String, String)> {
    let start = REFERENCE
        .find("## 3. Internal invariants")
        .expect("reference has §3");
    let end = REFERENCE[start..]
        .find("\n## 4.")
        .map(|e| start + e)
        .expect("reference has §4");
    REFERENCE[start..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let unquote = |c: &str| {
                c.trim_matches(|ch| ch == '|' || ch == ' ')
                    .trim_matches('`')
                    .to_string()
            };
            (cells.len() >= 3).then(|| (unquote(cells[0]), unquote(cells[1]), unquote(cells[2])))
        })
        .collect()
}

#[test]
fn builtin_catalog_loads_with_its_fallbacks() {
    let c = Catalog::builtin();
    assert!(c.rules().len() >= 30, "only {} rules", c.rules().len());
    for id in [
        fallback::NO_KERNEL_LINE,
        fallback::UNRECOGNISED_ASSERT,
        fallback::INDUCTOR_ASSERT,
        fallback::CUSTOM_KERNEL,
        INTERNAL,
    ] {
        assert!(c.get(id).is_some(), "fallback rule {id} missing");
    }
    for r in c.rules() {
        assert!(
            !r.doc.what.trim().is_empty() && !r.doc.fix.trim().is_empty(),
            "{} has an empty doc page",
            r.id
        );
        assert!(
            !r.fixes.is_empty() || r.causes.iter().any(|c| !c.fixes.is_empty()),
            "{} offers no fix",
            r.id
        );
        for cause in &r.causes {
            assert!(CAUSE_IDS.contains(&cause.id.as_str()));
        }
    }
    assert_eq!(
        c.rules().iter().filter(|r| r.internal).count(),
        1,
        "exactly one internal-invariant rule"
    );
}

#[test]
fn every_reference_assertion_has_exactly_one_rule() {
    let c = Catalog::builtin();
    let internal = internal_rows();
    assert!(
        internal.len() > 40,
        "parsed only {} internal rows",
        internal.len()
    );
    let mut problems = Vec::new();
    let mut rows = 0;
    for line in TSV
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("file\t"))
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, func, assertion) = (cols[0], cols[1], cols[2]);
        rows += 1;
        if assertion == "<runtime message>" {
            continue; // the message kernel prints whatever text it is given; covered by the log tests
        }
        let path = normalize_path(file);
        let kernel = normalize_kernel(func);
        let text = normalize_assertion(assertion);
        let a = DeviceAssert {
            file: &path,
            kernel: Some(&kernel),
            assertion: &text,
        };
        let owners: Vec<&str> = c.owners(&a).iter().map(|r| r.id.as_str()).collect();
        let base = file.rsplit('/').next().unwrap_or(file).to_string();
        let is_internal = file.starts_with("caffe2/")
            || internal.contains(&(base, func.to_string(), assertion.to_string()));
        let ok = match owners.as_slice() {
            [only] => (*only == INTERNAL) == is_internal,
            _ => false,
        };
        if !ok {
            problems.push(format!(
                "{file} {func} `{assertion}` → {owners:?} (internal: {is_internal})"
            ));
        }
    }
    assert!(rows > 250, "read only {rows} rows");
    assert!(
        problems.is_empty(),
        "{} rows misplaced:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn windows_lines_without_function_still_match() {
    let c = Catalog::builtin();
    let path = normalize_path(
        r"C:\actions-runner\_work\pytorch\pytorch\pytorch\aten\src\ATen\native\cuda\IndexKernelUtils.cu",
    );
    let a = DeviceAssert {
        file: &path,
        kernel: None,
        assertion: r#"ind >=0 && ind < ind_dim_size && "vectorized gather kernel index out of bounds""#,
    };
    assert_eq!(c.match_assert(&a).id, "DA101");
}

#[test]
fn unknown_files_fall_back_by_origin() {
    let c = Catalog::builtin();
    let custom = DeviceAssert {
        file: "/home/me/ext/my_op_kernel.cu",
        kernel: Some("my_kernel"),
        assertion: "idx < n",
    };
    assert_eq!(c.match_assert(&custom).id, fallback::CUSTOM_KERNEL);
    let new_aten = DeviceAssert {
        file: "aten/src/ATen/native/cuda/Brand_New.cu",
        kernel: Some("brand_new_kernel"),
        assertion: "x < y",
    };
    assert_eq!(c.match_assert(&new_aten).id, fallback::UNRECOGNISED_ASSERT);
}

#[test]
fn every_rule_has_a_generated_id_constant_and_no_other_id_parses() {
    use devassert_core::{ids, RuleId};
    let c = Catalog::builtin();
    let generated: Vec<&str> = ids::ALL.iter().map(|r| r.as_str()).collect();
    let catalog: Vec<&str> = c.rules().iter().map(|r| r.id.as_str()).collect();
    assert_eq!(generated, catalog);
    assert_eq!(ids::EMBEDDING_INDEX_OUT_OF_RANGE.as_str(), "DA101");
    for r in c.rules() {
        let id = RuleId::parse(&r.id).expect("a catalog id parses");
        assert_eq!(Catalog::builtin_finding(id).name, r.name);
    }
    let err = RuleId::parse("DA999").expect_err("no rule DA999");
    assert!(err.to_string().contains("DA999"));
}
