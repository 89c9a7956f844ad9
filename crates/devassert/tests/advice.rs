//! Advice from one place (issue 28): on every fixture log and project, the
//! next steps follow the ranked causes (an established cause's fix first),
//! say each thing once, and the confidences of a finding sum to at most 1.
//! Every `devassert` command a finding suggests is run, on real data, model
//! and program fixtures put in for its placeholders, and must diagnose the
//! rule that suggested it. A notebook's log is told to guard the notebook;
//! `scan` names 65535 in uint16 data a -1 sentinel.

mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One `devassert explain` of a fixture: where it runs and its arguments.
struct Case {
    name: String,
    cwd: PathBuf,
    args: Vec<String>,
}

fn logs_under(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("log" | "out" | "err")
            )
        })
        .collect();
    v.sort();
    v
}

/// Every fixture log (read with no source), and every project with the
/// files beside it (and without them).
fn cases() -> Vec<Case> {
    let fx = common::fixtures();
    let mut out = Vec::new();
    let dirs = [
        fx.join("logs/own"),
        fx.join("logs/corpus"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/real"),
    ];
    for dir in &dirs {
        for log in logs_under(dir) {
            out.push(Case {
                name: log.display().to_string(),
                cwd: dir.clone(),
                args: vec!["--no-source".into(), log.display().to_string()],
            });
        }
    }
    let projects = fx.join("projects");
    let mut names: Vec<String> = std::fs::read_dir(&projects)
        .expect("projects")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let dir = projects.join(&name);
        let mut extra: Vec<&str> = Vec::new();
        if dir.join("model").is_dir() {
            extra.extend(["--model", "model"]);
        }
        if dir.join("mask_0042.npy").is_file() {
            extra.extend(["--data", "mask_0042.npy", "--classes", "3"]);
        }
        if dir.join("tokens.npy").is_file() {
            extra.extend(["--data", "tokens.npy", "--vocab", "1000"]);
        }
        for with in [false, true] {
            let mut args = vec!["crash.log".to_string()];
            if with {
                args.extend(extra.iter().map(|s| s.to_string()));
            } else {
                args.push("--no-source".into());
            }
            out.push(Case {
                name: format!("projects/{name} {}", args.join(" ")),
                cwd: dir.clone(),
                args,
            });
        }
    }
    out
}

fn explain(case: &Case) -> Value {
    let out = common::bin()
        .current_dir(&case.cwd)
        .args(["explain", "--format", "json"])
        .args(&case.args)
        .output()
        .expect("run devassert");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}: {}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The first `backticked` span of a step.
fn first_code(s: &str) -> Option<&str> {
    let start = s.find('`')? + 1;
    let len = s[start..].find('`')?;
    Some(s[start..start + len].trim()).filter(|c| !c.is_empty())
}

/// The ranked-advice properties of one finding; returns what went wrong.
fn advice_problems(name: &str, f: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let causes = f["causes"].as_array().cloned().unwrap_or_default();
    let steps = strs(&f["fixes"]);
    let sum: f64 = causes.iter().filter_map(|c| c["confidence"].as_f64()).sum();
    if sum > 1.0 + 1e-9
        || causes.iter().any(|c| {
            c["confidence"]
                .as_f64()
                .is_none_or(|x| !(0.0..=1.0).contains(&x))
        })
    {
        bad.push(format!("{name}: confidences sum to {sum}"));
    }
    // Each step once: no step repeats another's lead code, or extends it.
    for (i, a) in steps.iter().enumerate() {
        for b in &steps[..i] {
            let same_code = matches!((first_code(a), first_code(b)), (Some(x), Some(y)) if x == y);
            if a == b || a.starts_with(b.as_str()) || b.starts_with(a.as_str()) || same_code {
                bad.push(format!("{name}: step {a:?} repeats {b:?}"));
            }
        }
    }
    let reruns = steps
        .iter()
        .filter(|s| s.contains("devassert run") || s.contains("devassert.guard()"))
        .count();
    if reruns > 1 {
        bad.push(format!("{name}: {reruns} steps say to rerun: {steps:?}"));
    }
    // An established cause's fix comes first.
    if let Some(top) = causes.first().filter(|c| c["established"] == true) {
        if let Some(fix) = strs(&top["fixes"]).first() {
            if steps.first() != Some(fix) {
                bad.push(format!(
                    "{name}: established {} has its fix {fix:?} at {:?}",
                    top["id"],
                    steps.iter().position(|s| s == fix)
                ));
            }
        }
    }
    // Steps that are causes' fixes come in the causes' order.
    let rank_of = |s: &String| causes.iter().position(|c| strs(&c["fixes"]).contains(s));
    let ranks: Vec<usize> = steps.iter().filter_map(rank_of).collect();
    if ranks.windows(2).any(|w| w[0] > w[1]) {
        bad.push(format!(
            "{name}: steps {steps:?} are not in the causes' order"
        ));
    }
    bad
}

/// A suggested `devassert …` command in a step: from `devassert` to a
/// closing backtick, ` (`, `;` or the end.
fn suggested_command(step: &str) -> Option<String> {
    let at = step.find("devassert ")?;
    let rest = &step[at..];
    let end = [rest.find('`'), rest.find(" ("), rest.find("; ")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
    let cmd = rest[..end].trim().trim_end_matches([')', ',', '.']);
    // Prose that names the tool (`devassert run relies on ...`) is no command.
    let sub = cmd.split_whitespace().nth(1)?;
    ["scan", "check", "run", "rule", "explain"]
        .contains(&sub)
        .then(|| cmd.to_string())
}

/// The rule a suggested scan or check must diagnose for a finding of `rule`:
/// token ids (DA101) for the embedding rules, the finding's own label rule.
fn scan_rule(rule: &str) -> Option<&'static str> {
    match rule {
        "DA101" | "DA102" | "DA401" => Some("DA101"),
        "DA201" => Some("DA201"),
        "DA202" => Some("DA202"),
        _ => None,
    }
}

/// The planted-bad line of `tests/fixtures/guard/bad_ops.py` for a rule
/// the guard checks: a program that fails this rule.
fn guard_marker(rule: &str) -> Option<&'static str> {
    Some(match rule {
        "DA101" => "embedding",
        "DA102" => "embedding_bag",
        "DA103" => "embedding_bag_offsets",
        "DA111" => "getitem",
        "DA112" => "take",
        "DA113" => "index_add",
        "DA114" => "index_copy",
        "DA115" => "index_fill",
        "DA121" => "gather",
        "DA122" => "one_hot",
        "DA123" => "bincount",
        "DA201" => "nll_loss",
        "DA202" => "cross_entropy_2d",
        "DA203" => "bce_input",
        "DA204" => "bce_target",
        "DA205" => "ctc_loss",
        "DA206" => "multi_margin",
        "DA301" => "multinomial",
        "DA302" => "multinomial_zero",
        "DA303" => "bernoulli",
        "DA304" => "poisson",
        "DA501" => "repeat_interleave",
        _ => return None,
    })
}

/// Data, model and program fixtures for the placeholders of suggested commands.
struct Inputs {
    dir: tempfile::TempDir,
}

impl Inputs {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        // Written by the libraries users write them with: numpy arrays of
        // token ids and labels, a PNG mask with a 255 border and a class
        // past any range the logs state.
        let script = r#"
import os, sys
import numpy as np
from PIL import Image
out = sys.argv[1]
np.save(os.path.join(out, "tokens.npy"), np.array([[0, 1, 2, 10_000_000]], dtype=np.int64))
np.save(os.path.join(out, "labels.npy"), np.array([0, 1, 100_000, -100], dtype=np.int64))
os.makedirs(os.path.join(out, "masks"))
m = np.zeros((4, 6), dtype=np.uint8)
m[0, :] = 255
m[2, 3] = 254
Image.fromarray(m).save(os.path.join(out, "masks", "mask_0001.png"))
ids = np.full(64, 50256, dtype=np.int64)
ids[40:], ids[3] = -1, 50258
with np.errstate(all="ignore"):
    ids.astype(np.uint16).tofile(os.path.join(out, "sentinel.bin"))
"#;
        let out = std::process::Command::new(common::python())
            .args(["-c", script])
            .arg(dir.path())
            .output()
            .expect("run python");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // One program per guarded rule: bad_ops.py's line for it, uncaught.
        let bad_ops = std::fs::read_to_string(common::fixtures().join("guard/bad_ops.py"))
            .expect("bad_ops.py");
        let probe = format!(
            "import sys\nSRC = {bad_ops:?}\nmarker = sys.argv[1]\npre = []\nfor line in SRC.splitlines():\n    if line.startswith('attempt('):\n        if line.endswith('# M:' + marker):\n            expr = line[len('attempt(lambda: '):line.rindex(')  # M:')]\n            exec('\\n'.join(pre))\n            eval(expr)\n            sys.exit(0)\n        continue\n    pre.append(line)\nsys.exit('no marker ' + marker)\n"
        );
        std::fs::write(dir.path().join("probe.py"), probe).expect("write probe");
        Inputs { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
}

/// `cmd` with its placeholders replaced: the data / model path by a real
/// fixture for the rule, an unknown size by one the fixture runs past, the
/// program by one that fails `rule`. `None` when no program fails it.
fn instantiate(cmd: &str, rule: &str, inputs: &Inputs) -> Option<Vec<String>> {
    let words: Vec<&str> = cmd.split_whitespace().skip(1).collect();
    let mut out: Vec<String> = Vec::new();
    let sub = *words.first()?;
    match sub {
        "scan" => {
            let data = match scan_rule(rule)? {
                "DA101" => inputs.path("tokens.npy"),
                "DA201" => inputs.path("labels.npy"),
                _ => inputs.path("masks"),
            };
            let mut prev = "";
            for w in &words {
                let placeholder = w.chars().all(|c| c.is_ascii_uppercase() || c == '_');
                let filled = if placeholder && matches!(prev, "--vocab" | "--classes") {
                    "5".to_string()
                } else if placeholder && !w.is_empty() && !w.starts_with('-') {
                    data.clone()
                } else {
                    w.to_string()
                };
                out.push(filled);
                prev = w;
            }
        }
        "check" => {
            let model = common::fixtures().join("projects/added-tokens-model/model");
            for w in &words {
                if *w == "MODEL_DIR" || *w == "MODEL" {
                    out.push(model.display().to_string());
                } else {
                    out.push(w.to_string());
                }
            }
        }
        "run" => {
            let marker = guard_marker(rule)?;
            let dash = words.iter().position(|w| *w == "--")?;
            out.extend(words[..=dash].iter().map(|w| w.to_string()));
            out.push(common::python().display().to_string());
            out.push(inputs.path("probe.py"));
            out.push(marker.to_string());
        }
        _ => out.extend(words.iter().map(|w| w.to_string())),
    }
    Some(out)
}

/// The rules a suggested command's report diagnoses.
fn diagnosed(args: &[String], cwd: &Path) -> Vec<String> {
    let mut cmd = common::bin();
    cmd.current_dir(cwd);
    if args.first().map(String::as_str) == Some("run") {
        let dash = args.iter().position(|a| a == "--").expect("run has --");
        cmd.args(&args[..dash])
            .args(["--format", "json"])
            .args(&args[dash..]);
    } else {
        cmd.args(args).args(["--format", "json"]);
    }
    let out = cmd.output().expect("run devassert");
    // `run` may print the child's output before its report, on either stream.
    let report = |bytes: &[u8]| -> Option<Value> {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let starts = std::iter::once(0).chain(text.match_indices("\n{").map(|(i, _)| i + 1));
        starts
            .filter(|&i| text[i..].starts_with('{'))
            .find_map(|i| {
                serde_json::Deserializer::from_str(&text[i..])
                    .into_iter::<Value>()
                    .next()
                    .and_then(Result::ok)
            })
    };
    let v = report(&out.stdout)
        .or_else(|| report(&out.stderr))
        .unwrap_or_else(|| {
            panic!(
                "devassert {}: no JSON report (exit {:?}): {} {}",
                args.join(" "),
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
    if args.first().map(String::as_str) == Some("rule") {
        // The rule page names its rule (`rule` in the page's JSON).
        return [&v["rule"], &v["rule"]["id"], &v["id"]]
            .into_iter()
            .filter_map(|x| x.as_str())
            .map(String::from)
            .collect();
    }
    v["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["rule"].as_str())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn next_steps_follow_the_ranked_causes_once_each_and_calibrated() {
    let mut bad = Vec::new();
    let mut findings = 0;
    for case in cases() {
        let report = explain(&case);
        for f in report["findings"].as_array().into_iter().flatten() {
            findings += 1;
            bad.extend(advice_problems(&case.name, f));
        }
    }
    // scan and check go through the same step.
    let inputs = Inputs::new();
    let mut others: Vec<Vec<String>> = vec![
        vec![
            "scan".into(),
            inputs.path("tokens.npy"),
            "--vocab".into(),
            "5".into(),
        ],
        vec![
            "scan".into(),
            inputs.path("labels.npy"),
            "--classes".into(),
            "5".into(),
        ],
        vec![
            "scan".into(),
            inputs.path("masks"),
            "--classes".into(),
            "21".into(),
        ],
        vec![
            "scan".into(),
            inputs.path("sentinel.bin"),
            "--vocab".into(),
            "50257".into(),
        ],
    ];
    let projects = common::fixtures().join("projects");
    for e in std::fs::read_dir(&projects).expect("projects") {
        let model = e.expect("entry").path().join("model");
        if model.is_dir() {
            others.push(vec!["check".into(), model.display().to_string()]);
        }
    }
    for args in &others {
        let out = common::bin()
            .args(args)
            .args(["--format", "json"])
            .output()
            .expect("run devassert");
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        for f in v["findings"].as_array().into_iter().flatten() {
            findings += 1;
            bad.extend(advice_problems(&args.join(" "), f));
        }
    }
    assert!(findings > 150, "only {findings} findings");
    assert!(
        bad.is_empty(),
        "{} problems:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn every_suggested_command_diagnoses_the_rule_that_suggested_it() {
    let inputs = Inputs::new();
    // (command as suggested, rule) → where it came from; each is run once.
    let mut suggested: BTreeMap<(String, String), String> = BTreeMap::new();
    for case in cases() {
        let report = explain(&case);
        for f in report["findings"].as_array().into_iter().flatten() {
            let rule = f["rule"].as_str().unwrap_or_default().to_string();
            // A failure the log names no op for is rerun to find the op: the
            // traceback's guess is the rule the rerun should name.
            let guessed = f["evidence"]["op_guess"]
                .as_str()
                .and_then(|g| g.split_whitespace().next())
                .map(String::from);
            for step in strs(&f["fixes"]) {
                if let Some(cmd) = suggested_command(&step) {
                    // Its causes and fixes are the guessed rule's.
                    let expect = guessed.clone().unwrap_or_else(|| rule.clone());
                    suggested
                        .entry((cmd, expect))
                        .or_insert_with(|| case.name.clone());
                }
            }
        }
    }
    let mut ran: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    let mut not_run = Vec::new();
    let mut bad = Vec::new();
    for ((cmd, rule), from) in &suggested {
        // Label rules scan labels (--classes), token rules token ids (--vocab).
        if cmd.starts_with("devassert scan") {
            let want = match scan_rule(rule) {
                Some("DA101") => "--vocab",
                Some(_) => "--classes",
                None => {
                    bad.push(format!(
                        "{from}: {rule} suggests `{cmd}`, which scan cannot check"
                    ));
                    continue;
                }
            };
            if !cmd.contains(want) {
                bad.push(format!("{from}: {rule} suggests `{cmd}` without {want}"));
            }
        }
        let Some(args) = instantiate(cmd, rule, &inputs) else {
            not_run.push(format!("{rule}: {cmd}"));
            continue;
        };
        // The same command with the same fixture in (`python a.py …` and
        // `python b.py …` both become the probe) runs once.
        let rules = ran
            .entry(args.clone())
            .or_insert_with(|| diagnosed(&args, inputs.dir.path()))
            .clone();
        let want = if cmd.starts_with("devassert scan") || cmd.starts_with("devassert check") {
            scan_rule(rule).unwrap_or(rule)
        } else {
            rule.as_str()
        };
        if !rules.iter().any(|r| r == want) {
            bad.push(format!(
                "{from}: `{cmd}` (as `devassert {}`) diagnoses {rules:?}, not {want}",
                args.join(" ")
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // What cannot run: a rerun of a failure whose op no fixture program
    // fails (no guard check: custom kernels, compiled code, unknown ops).
    for n in &not_run {
        assert!(n.contains("devassert run"), "not run: {n}");
    }
    assert!(
        ran.len() >= 8,
        "ran {} suggested commands: {suggested:?}",
        ran.len()
    );
    eprintln!(
        "{} suggested commands, {} distinct runs; not run (no program fails the rule): {not_run:?}",
        suggested.len(),
        ran.len()
    );
}

#[test]
fn a_notebook_log_is_told_to_guard_the_notebook() {
    // A real VS Code notebook traceback (`Cell In[11], [line 13](vscode-…)`).
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/real/010.log");
    let case = Case {
        name: "010".into(),
        cwd: log.parent().expect("dir").to_path_buf(),
        args: vec!["--no-source".into(), log.display().to_string()],
    };
    let report = explain(&case);
    let f = &report["findings"][0];
    assert_eq!(f["evidence"]["notebook"], "Cell In[11]");
    let steps = strs(&f["fixes"]);
    assert!(
        steps[0].contains("`import devassert; devassert.guard()`"),
        "{steps:?}"
    );
    assert!(
        steps
            .iter()
            .all(|s| !s.contains("devassert run") && !s.contains("python train.py")),
        "{steps:?}"
    );
    assert!(!f["evidence"]["note"]
        .as_str()
        .unwrap_or_default()
        .contains("devassert run"));
}

#[test]
fn uint16_65535_is_a_minus_one_sentinel_before_a_larger_tokenizer() {
    let dir = tempfile::tempdir().expect("tempdir");
    // GPT-2 token ids padded with -1 and saved as uint16 (nanoGPT's .bin
    // layout), one real id past the vocabulary; and int32 labels padded
    // with -1 saved as uint32.
    let script = r#"
import os, sys
import numpy as np
out = sys.argv[1]
ids = np.full((8, 16), 50, dtype=np.int64)
ids[:, 12:] = -1
ids[3, 2] = 60000
with np.errstate(all="ignore"):
    ids.astype(np.uint16).tofile(os.path.join(out, "train.bin"))
labels = np.array([1, 2, -1, -1, 3], dtype=np.int32)
np.save(os.path.join(out, "labels.npy"), labels.astype(np.uint32))
"#;
    let out = std::process::Command::new(common::python())
        .args(["-c", script])
        .arg(dir.path())
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scan = |args: &[&str]| -> Value {
        let out = common::bin()
            .current_dir(dir.path())
            .arg("scan")
            .args(args)
            .args(["--format", "json"])
            .output()
            .expect("scan");
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let r = scan(&["train.bin", "--vocab", "50257"]);
    let causes = r["findings"][0]["causes"]
        .as_array()
        .expect("causes")
        .clone();
    assert_eq!(causes[0]["id"], "negative_index", "{causes:?}");
    let why = causes[0]["why"].as_str().unwrap_or_default();
    assert!(
        why.contains("65535, -1 as an unsigned integer") && why.contains("sentinel"),
        "{why}"
    );
    let tokenizer = causes
        .iter()
        .position(|c| c["id"] == "token_id_ge_vocab")
        .expect("the real id past the vocabulary is still a tokenizer cause");
    assert!(tokenizer > 0);
    assert!(
        !causes[tokenizer]["why"]
            .as_str()
            .unwrap_or_default()
            .contains("65535"),
        "{causes:?}"
    );
    assert!(strs(&r["findings"][0]["fixes"])[0].contains("pad_token_id"));
    let r = scan(&["labels.npy", "--classes", "5"]);
    let c = &r["findings"][0]["causes"][0];
    assert_eq!(c["id"], "negative_label", "{r}");
    assert!(c["why"]
        .as_str()
        .unwrap_or_default()
        .contains("4294967295, -1 as an unsigned integer"));
}

/// The guard and `devassert.preflight` build findings in Python and rank
/// their causes with `_findings.calibrate`: it must give what
/// `advice::calibrate` gives, so a finding reads the same from every entry
/// point (and a second pass through `devassert run` changes nothing).
#[test]
fn python_ranks_causes_as_rust_does() {
    use devassert_core::finding::Cause;
    let cause = |id: &str, score: f64, established: bool| Cause {
        id: id.into(),
        confidence: score,
        why: String::new(),
        established,
        proof: None,
        fixes: Vec::new(),
    };
    let lists: Vec<Vec<Cause>> = vec![
        vec![cause("a", 0.6, false), cause("b", 0.45, false)],
        vec![cause("a", 0.3, false), cause("b", 0.2, false)],
        vec![cause("unknown", 0.7, false), cause("b", 0.6, false)],
        vec![
            cause("a", 0.5, false),
            cause("b", 0.4, true),
            cause("c", 0.9, true),
        ],
        vec![
            cause("a", f64::NAN, false),
            cause("b", -1.0, false),
            cause("c", 0.0, true),
        ],
        vec![cause("a", 0.95, false)],
        vec![],
    ];
    let rust: Vec<Vec<(String, f64)>> = lists
        .iter()
        .map(|l| {
            let mut l = l.clone();
            l.sort_by_key(|c| !c.established);
            devassert_core::advice::calibrate(&mut l);
            l.into_iter().map(|c| (c.id, c.confidence)).collect()
        })
        .collect();
    // NaN is not JSON: Python is given it as a string it reads back as NaN.
    let input: Vec<Vec<Value>> = lists
        .iter()
        .map(|l| {
            l.iter()
                .map(|c| {
                    let conf = if c.confidence.is_nan() {
                        Value::from("nan")
                    } else {
                        Value::from(c.confidence)
                    };
                    serde_json::json!({"id": c.id, "confidence": conf, "established": c.established})
                })
                .collect()
        })
        .collect();
    let code = "import json, sys\n\
        from devassert._findings.findings import calibrate\n\
        lists = [[dict(c, confidence=float(c['confidence'])) for c in l] for l in json.load(sys.stdin)]\n\
        print(json.dumps([[[c['id'], c['confidence']] for c in calibrate(l)] for l in lists]))";
    let mut child = std::process::Command::new(common::python())
        .args(["-c", code])
        .env("PYTHONPATH", common::repo_root().join("python"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(serde_json::to_string(&input).expect("json").as_bytes())
            .expect("write");
    }
    let out = child.wait_with_output().expect("python output");
    assert!(out.status.success());
    let python: Vec<Vec<(String, f64)>> = serde_json::from_slice(&out.stdout).expect("python json");
    assert_eq!(python, rust);
}
