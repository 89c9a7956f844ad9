//! The `devassert/1` JSON contract: field names, value encodings, round trip.

use devassert_core::*;
use serde_json::{json, Value};

fn sample() -> Report {
    let mut r = Report::new(devassert_core::Command::Explain);
    r.exit_code = 1;
    let mut f = Finding {
        rule: "DA101".into(),
        name: "embedding-index-out-of-range".into(),
        op_family: OpFamily::IndexSelect,
        summary: "an index passed to index_select / nn.Embedding is >= the table size".into(),
        severity: Severity::Error,
        evidence: Default::default(),
        location: Some(SourceLocation {
            file: "train.py".into(),
            line: 88,
            function: Some("forward".into()),
            code: None,
        }),
        noticed_at: Some(SourceLocation {
            file: "train.py".into(),
            line: 97,
            function: Some("main".into()),
            code: None,
        }),
        values: vec![Scalar::Int(50257), Scalar::Int(50260)],
        value_counts: vec![3, 1],
        count: Some(4),
        value_min: Some(Scalar::Int(50257)),
        value_max: Some(Scalar::Int(50260)),
        bound: Some(Bound::index(0, 50257)),
        locations: vec![DataLocation {
            file: Some("a.bin".into()),
            index: 7,
            ..Default::default()
        }],
        causes: vec![Cause {
            established: false,
            proof: None,
            id: "added_tokens_no_resize".into(),
            confidence: 0.6,
            why: "…".into(),
            fixes: vec!["model.resize_token_embeddings(len(tokenizer))".into()],
        }],
        fixes: vec!["model.resize_token_embeddings(len(tokenizer))".into()],
        caught: false,
        samples: Vec::new(),
        samples_certain: None,
    };
    f.evidence
        .insert("kernel".into(), json!("indexSelectLargeIndex"));
    f.evidence.insert("ranks".into(), json!([0]));
    r.findings.push(f);
    r.fallout.push(Fallout {
        kind: "cublas".into(),
        message: "CUBLAS_STATUS_EXECUTION_FAILED".into(),
        count: 2,
        ranks: vec![0],
        ranks_total: None,
        ranks_max: None,
        ranks_uncounted: None,
        ranks_total_at_least: false,
        line: Some(40),
    });
    r
}

#[test]
fn json_has_the_contract_fields() {
    let v: Value =
        serde_json::from_str(&render(&sample(), Format::Json, &RenderOptions::default())).unwrap();
    assert_eq!(v["schema"], "devassert/1");
    assert_eq!(v["command"], "explain");
    assert_eq!(v["exit_code"], 1);
    let f = &v["findings"][0];
    for key in [
        "rule",
        "name",
        "op_family",
        "summary",
        "evidence",
        "location",
        "noticed_at",
        "values",
        "bound",
        "causes",
        "fixes",
        "value_counts",
        "count",
        "value_min",
        "value_max",
        "locations",
    ] {
        assert!(f.get(key).is_some(), "finding lacks {key}: {f}");
    }
    assert_eq!(f["op_family"], "index_select");
    assert_eq!(f["values"], json!([50257, 50260]));
    assert_eq!(f["bound"], json!({"low": 0, "high": 50257}));
    assert_eq!(
        f["location"],
        json!({"file": "train.py", "line": 88, "function": "forward"})
    );
    assert_eq!(f["causes"][0]["id"], "added_tokens_no_resize");
    assert_eq!(v["fallout"][0]["kind"], "cublas");
}

#[test]
fn non_finite_values_are_strings_and_round_trip() {
    let mut r = sample();
    r.findings[0].values = vec![
        Scalar::Float(f64::NAN),
        Scalar::Float(f64::INFINITY),
        Scalar::Float(f64::NEG_INFINITY),
        Scalar::Float(1.5),
    ];
    let text = render(&r, Format::Json, &RenderOptions::default());
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["findings"][0]["values"],
        json!(["nan", "inf", "-inf", 1.5])
    );
    let back: Report = serde_json::from_str(&text).unwrap();
    assert_eq!(back.findings[0].values.len(), 4);
    assert!(back.findings[0].values[0].as_f64().is_nan());
}

#[test]
fn nll_loss2d_spelling() {
    assert_eq!(
        serde_json::to_value(OpFamily::NllLoss2d).unwrap(),
        "nll_loss2d"
    );
    assert_eq!(
        serde_json::to_value(OpFamily::CustomKernel).unwrap(),
        "custom_kernel"
    );
}

#[test]
fn github_annotations_escape_and_anchor() {
    let out = render(&sample(), Format::Github, &RenderOptions::default());
    assert!(
        out.starts_with("::error file=train.py,line=88,title=DA101 embedding-index-out-of-range::"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 1, "one line per finding: {out}");
}

#[test]
fn human_output_names_rule_location_and_next_steps() {
    let out = render(&sample(), Format::Human, &RenderOptions::default());
    assert!(out.contains("error[DA101]"), "{out}");
    assert!(out.contains("--> train.py:88 in forward"), "{out}");
    assert!(
        out.contains("noticed later at train.py:97 in main"),
        "{out}"
    );
    assert!(out.contains("valid range [0, 50257)"), "{out}");
    assert!(out.contains("next steps:"), "{out}");
    assert!(out.contains("fallout:"), "{out}");
    assert!(!out.contains('\x1b'), "no color unless asked");
}

#[test]
fn human_output_tells_the_true_extremes_and_remaining_places() {
    let mut r = sample();
    let f = &mut r.findings[0];
    f.values = (128..160).map(Scalar::Int).collect();
    f.value_counts = vec![1; 32];
    f.count = Some(72);
    f.value_min = Some(Scalar::Int(128));
    f.value_max = Some(Scalar::Int(199));
    f.locations = (0..8)
        .map(|i| DataLocation {
            index: i,
            ..Default::default()
        })
        .collect();
    let out = render(&r, Format::Human, &RenderOptions::default());
    assert!(out.contains(", … up to 199"), "{out}");
    assert!(
        out.contains("72 out of range in all (min 128, max 199)"),
        "{out}"
    );
    assert!(out.contains("… 67 more places"), "{out}");
}

/// A guard finding as `devassert run` reads it: the raise id, the DataLoader
/// worker, the dataset samples and whether the program caught it.
fn guard_finding() -> Report {
    let text = r#"{"schema": "devassert/1", "command": "run", "exit_code": 0, "fallout": [],
      "findings": [{"rule": "DA114", "name": "index-copy-out-of-range", "op_family": "index",
        "summary": "s", "evidence": {"op": "index_copy", "raise_id": "4242-1", "worker": 1, "pid": 4242},
        "location": null, "noticed_at": null, "values": [9], "bound": {"low": 0, "high": 4},
        "causes": [], "fixes": [], "caught": true,
        "samples": [{"dataset_index": 1042, "row": 2}], "samples_certain": true}]}"#;
    serde_json::from_str(text).unwrap()
}

#[test]
fn guard_fields_round_trip_and_are_absent_when_unset() {
    let r = guard_finding();
    let f = &r.findings[0];
    assert!(f.caught);
    assert_eq!(
        f.samples,
        vec![Sample {
            dataset_index: 1042,
            row: Some(2),
            split: None,
        }]
    );
    assert_eq!(f.samples_certain, Some(true));
    let v: Value =
        serde_json::from_str(&render(&r, Format::Json, &RenderOptions::default())).unwrap();
    let j = &v["findings"][0];
    assert_eq!(j["caught"], true);
    assert_eq!(j["samples"], json!([{"dataset_index": 1042, "row": 2}]));
    assert_eq!(j["samples_certain"], true);
    assert_eq!(j["evidence"]["raise_id"], "4242-1");
    assert_eq!(j["evidence"]["worker"], 1);
    // Findings of explain / scan / check do not grow the new keys.
    let plain: Value =
        serde_json::from_str(&render(&sample(), Format::Json, &RenderOptions::default())).unwrap();
    for key in ["caught", "samples", "samples_certain"] {
        assert!(plain["findings"][0].get(key).is_none(), "{key} is written");
    }
}

#[test]
fn a_caught_finding_is_a_note_with_its_samples_and_worker() {
    let r = guard_finding();
    let out = render(&r, Format::Human, &RenderOptions::default());
    assert!(
        out.starts_with("note[DA114] index-copy-out-of-range: s (caught by the program)"),
        "{out}"
    );
    assert!(!out.contains("error["), "{out}");
    assert!(
        out.contains("dataset sample 1042 (row 2 of the batch), loaded by DataLoader worker 1"),
        "{out}"
    );
    assert!(!out.contains("not certain"), "{out}");
    let gh = render(&r, Format::Github, &RenderOptions::default());
    assert!(gh.starts_with("::notice "), "{gh}");
}

#[test]
fn uncertain_samples_say_so() {
    let mut r = guard_finding();
    let f = &mut r.findings[0];
    f.caught = false;
    f.samples_certain = Some(false);
    f.samples.push(Sample {
        dataset_index: 7,
        row: Some(5),
        split: None,
    });
    f.evidence.remove("worker");
    let out = render(&r, Format::Human, &RenderOptions::default());
    assert!(out.starts_with("error[DA114]"), "{out}");
    assert!(
        out.contains("dataset samples 1042 (row 2), 7 (row 5) of the batch (not certain"),
        "{out}"
    );
    r.findings[0].samples.clear();
    let out = render(&r, Format::Human, &RenderOptions::default());
    assert!(
        out.contains("the batch could not be tied to its dataset samples"),
        "{out}"
    );
}

#[test]
fn causes_say_whether_they_are_established() {
    let mut c = Cause::new("added_tokens_no_resize", 0.6, "why");
    let v = serde_json::to_value(&c).expect("json");
    assert_eq!(v["established"], false);
    assert!(v.get("proof").is_none());
    c.established = true;
    c.proof = Some("train.py:5 adds tokens".into());
    let v = serde_json::to_value(&c).expect("json");
    assert_eq!(v["established"], true);
    assert_eq!(v["proof"], "train.py:5 adds tokens");
    // Reports written before the field existed still read.
    let old: Cause =
        serde_json::from_str(r#"{"id": "unknown", "confidence": 0.1, "why": "w"}"#).expect("old");
    assert!(!old.established && old.proof.is_none());
}
