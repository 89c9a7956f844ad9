//! Tracebacks from IPython and Jupyter (pasted from a notebook, or in an
//! nbconvert / papermill log, colours and all) read as Python's own: the
//! place is the notebook cell and line, with the code from the log's arrow
//! line, library frames are passed over as in a script's traceback, and no
//! cell is ever opened as a file.

mod common;

use serde_json::Value;
use std::path::Path;

fn own(name: &str) -> std::path::PathBuf {
    common::fixtures().join("logs/own").join(name)
}

/// explain's JSON document for `log` (a path or, with `-`, stdin text).
fn json_doc(cwd: &Path, log: &str, stdin: Option<&str>, extra: &[&str]) -> Vec<u8> {
    let mut cmd = common::bin();
    cmd.current_dir(cwd)
        .args(["explain", "--format", "json"])
        .args(extra)
        .arg(log);
    if let Some(text) = stdin {
        cmd.write_stdin(text);
    }
    let out = cmd.output().expect("run devassert");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{log}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn finding(doc: &[u8]) -> Value {
    let v: Value = serde_json::from_slice(doc).expect("json");
    v["findings"][0].clone()
}

fn human(cwd: &Path, log: &Path, extra: &[&str]) -> String {
    let out = common::bin()
        .current_dir(cwd)
        .args(["explain", "--color", "never"])
        .args(extra)
        .arg(log)
        .output()
        .expect("run devassert");
    assert_eq!(out.status.code(), Some(1));
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn every_notebook_style_names_the_cell_and_its_line() {
    // (log, where the place goes, file, line, function, code): `location`
    // when the traceback is synchronous, else `noticed_at`.
    let cases = [
        (
            "notebook-ipython8.log",
            "noticed_at",
            "Cell In[14]",
            9,
            "<module>",
            "outputs = model(**batch)",
        ),
        (
            "notebook-input-in.log",
            "location",
            "Cell In[5]",
            10,
            "TinyEncoder.forward",
            "x = self.tok_emb(ids) + self.pos_emb(torch.arange(ids.size(1), device=ids.device))",
        ),
        (
            "notebook-ipython7.log",
            "noticed_at",
            "Cell In[23]",
            14,
            "<module>",
            "loss = criterion(logits, masks)",
        ),
        (
            "notebook-ipython7-ansi.log",
            "noticed_at",
            "Cell In[23]",
            14,
            "<module>",
            "loss = criterion(logits, masks)",
        ),
        (
            "notebook-papermill-ansi.log",
            "noticed_at",
            "Cell In[5]",
            6,
            "<module>",
            "out = model.generate(**batch, max_new_tokens=64)",
        ),
        // `jupyter nbconvert --execute`: nbclient's own traceback, then the cell's, coloured.
        (
            "notebook-nbconvert-ansi.log",
            "noticed_at",
            "Cell In[9]",
            3,
            "<module>",
            "print(loss.item())",
        ),
        (
            "notebook-ipykernel-path.log",
            "noticed_at",
            "/tmp/ipykernel_2817/3065418823.py",
            6,
            "<module>",
            "next_id = torch.multinomial(probs, num_samples=1)",
        ),
    ];
    let dir = common::fixtures().join("logs/own");
    let mut docs = Vec::new();
    for (log, key, file, line, function, code) in cases {
        let doc = json_doc(&dir, log, None, &[]);
        let f = finding(&doc);
        let place = &f[key];
        assert_eq!(place["file"], file, "{log}: {place}");
        assert_eq!(place["line"], line, "{log}: {place}");
        assert_eq!(place["function"], function, "{log}: {place}");
        assert_eq!(place["code"], code, "{log}: {place}");
        let other = if key == "location" {
            "noticed_at"
        } else {
            "location"
        };
        assert!(f[other].is_null(), "{log}: {other} {}", f[other]);
        // The notebook advice stays: a kernel is restarted, not a script rerun.
        assert!(f["evidence"]["notebook"].is_string(), "{log}");
        let fixes: Vec<&str> = f["fixes"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        assert!(
            fixes
                .iter()
                .any(|x| x.starts_with("in the notebook: restart the kernel"))
                && !fixes.iter().any(|x| x.contains("devassert run")),
            "{log}: {fixes:?}"
        );
        docs.push(doc);
    }
    common::assert_contract(&docs);
}

#[test]
fn vs_code_s_linked_lines_are_read() {
    // A real report pasted from VS Code's notebook view: each line number is
    // a link (`---> [2](vscode-notebook-cell:?execution_count=8&line=2) …`).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/real");
    let doc = json_doc(&dir, "010.log", None, &[]);
    let f = finding(&doc);
    assert_eq!(f["noticed_at"]["file"], "Cell In[8]");
    assert_eq!(f["noticed_at"]["line"], 2);
    assert_eq!(
        f["noticed_at"]["code"],
        "correct = torch.eq(y_true, y_pred).sum().item()"
    );
    assert_eq!(
        f["evidence"]["message"],
        "AcceleratorError: CUDA error: device-side assert triggered"
    );
    common::assert_contract(&[doc]);
}

/// A cell that fails inside a function it defines, through PyTorch's frames.
const CELL: &str = "import torch
emb = torch.nn.Embedding(10, 4)
def embed(ids):
    return emb(ids)
ids = torch.tensor([[1, 2, 12]])
out = embed(ids)
";

#[test]
fn real_ipython_tracebacks_in_every_mode_and_colour() {
    // The installed IPython and PyTorch (CPU) print the traceback; each of
    // `%xmode` Context (the default), Plain and Verbose, with and without colours.
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut docs = Vec::new();
    for (mode, colors) in [
        ("Context", "NoColor"),
        ("Context", "Linux"),
        ("Plain", "NoColor"),
        ("Verbose", "Linux"),
    ] {
        let code = format!("get_ipython().run_line_magic('xmode', '{mode}')\n{CELL}");
        let out = std::process::Command::new(common::python())
            .args([
                "-m",
                "IPython",
                "--no-banner",
                "--HistoryManager.enabled=False",
            ])
            .arg(format!("--colors={colors}"))
            .args(["-c", &code])
            .env("IPYTHONDIR", tmp.path())
            .output()
            .expect("run IPython");
        let log = tmp.path().join(format!("{mode}-{colors}.log"));
        std::fs::write(&log, [out.stdout, out.stderr].concat()).expect("write log");
        let text = std::fs::read_to_string(&log).expect("read log");
        assert!(text.contains("IndexError"), "{mode} {colors}:\n{text}");
        assert_eq!(
            text.contains('\x1b'),
            colors != "NoColor",
            "{mode} {colors}"
        );
        let doc = json_doc(tmp.path(), &log.to_string_lossy(), None, &[]);
        let f = finding(&doc);
        assert_eq!(f["rule"], "DA101", "{mode} {colors}");
        // The CPU raised at the op: the innermost cell frame, not PyTorch's.
        let place = &f["location"];
        assert_eq!(place["file"], "Cell In[1]", "{mode} {colors}: {place}");
        // Line 5: the `%xmode` line comes first in the cell.
        assert_eq!(place["line"], 5, "{mode} {colors}: {place}");
        assert_eq!(place["function"], "embed", "{mode} {colors}: {place}");
        assert_eq!(place["code"], "return emb(ids)", "{mode} {colors}: {place}");
        docs.push(doc);
    }
    common::assert_contract(&docs);
}

/// What Python itself prints for the exception of `notebook-ipython7.log`
/// (`traceback.print_exc()` in that kernel).
const IPYTHON7_IN_PYTHONS_WORDS: &str = r#"Traceback (most recent call last):
  File "<ipython-input-23-5b0e7d41c9a2>", line 14, in <module>
    loss = criterion(logits, masks)
  File "/opt/conda/lib/python3.7/site-packages/torch/nn/modules/module.py", line 1051, in _call_impl
    return forward_call(*input, **kwargs)
  File "/opt/conda/lib/python3.7/site-packages/torch/nn/modules/loss.py", line 1121, in forward
    ignore_index=self.ignore_index, reduction=self.reduction)
  File "/opt/conda/lib/python3.7/site-packages/torch/nn/functional.py", line 2824, in cross_entropy
    return torch._C._nn.cross_entropy_loss(input, target, weight, _Reduction.get_enum(reduction), ignore_index)
RuntimeError: CUDA error: device-side assert triggered
"#;

/// What `%devassert explain` hands the binary for `notebook-ipython8.log`'s
/// exception: Python's traceback, each cell named as IPython names it.
const IPYTHON8_IN_PYTHONS_WORDS: &str = r#"Traceback (most recent call last):
  File "Cell In[14]", line 9, in <module>
    outputs = model(**batch)
  File "/home/u/miniconda3/envs/nlp/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1532, in _wrapped_call_impl
    return self._call_impl(*args, **kwargs)
  File "/home/u/miniconda3/envs/nlp/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1541, in _call_impl
    return forward_call(*args, **kwargs)
  File "/home/u/miniconda3/envs/nlp/lib/python3.11/site-packages/transformers/models/roberta/modeling_roberta.py", line 1208, in forward
    outputs = self.roberta(
  File "/home/u/miniconda3/envs/nlp/lib/python3.11/site-packages/transformers/models/roberta/modeling_roberta.py", line 125, in forward
    token_type_embeddings = self.token_type_embeddings(token_type_ids)
RuntimeError: CUDA error: device-side assert triggered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"#;

#[test]
fn a_notebook_traceback_gives_the_finding_python_s_own_gives() {
    let dir = common::fixtures().join("logs/own");
    let plain = json_doc(&dir, "-", Some(IPYTHON7_IN_PYTHONS_WORDS), &[]);
    let ipython = json_doc(&dir, "notebook-ipython7.log", None, &[]);
    let colored = json_doc(&dir, "notebook-ipython7-ansi.log", None, &[]);
    // The whole finding: place, the op guessed from the library frame's code, causes, fixes.
    let want = finding(&plain);
    assert_eq!(finding(&ipython), want);
    assert_eq!(finding(&colored), want);
    assert!(want["evidence"]["op_guess"]
        .as_str()
        .is_some_and(|g| g.starts_with("DA201 ") && g.contains("functional.py:2824")));
    // IPython 8 and what `%devassert explain` sends for it: the same
    // finding, the notebook's advice included.
    let plain = finding(&json_doc(&dir, "-", Some(IPYTHON8_IN_PYTHONS_WORDS), &[]));
    let ipython = finding(&json_doc(&dir, "notebook-ipython8.log", None, &[]));
    assert_eq!(ipython, plain);
}

#[test]
fn a_cell_is_never_opened_as_a_file() {
    const SECRET: &str = "SECRET-cell-file-9c2e";
    let tmp = tempfile::tempdir().expect("tempdir");
    let body = format!("{SECRET} = 1\n").repeat(12);
    // Files named like the cells the logs name, where the source root is.
    for name in [
        "Cell In[5]",
        "Cell In[5].py",
        "Cell In[14]",
        "Cell In[14].py",
    ] {
        std::fs::write(tmp.path().join(name), &body).expect("write");
    }
    for log in ["notebook-input-in.log", "notebook-ipython8.log"] {
        let text = human(tmp.path(), &own(log), &["--source-root", "."]);
        assert!(!text.contains(SECRET), "{log}:\n{text}");
        // The line comes from the log's arrow line instead.
        assert!(text.contains("  --> Cell In["), "{log}:\n{text}");
        for format in ["json", "github"] {
            let out = common::bin()
                .current_dir(tmp.path())
                .args(["explain", "--format", format, "--source-root", "."])
                .arg(own(log))
                .output()
                .expect("run devassert");
            let out = String::from_utf8_lossy(&out.stdout);
            assert!(!out.contains(SECRET), "{log} {format}:\n{out}");
            // No annotation of a repository file that does not exist.
            assert!(!out.contains("file=Cell"), "{log} {format}:\n{out}");
        }
    }
}

#[test]
fn snapshot_notebook_ipython8() {
    let dir = common::fixtures().join("logs/own");
    insta::assert_snapshot!(human(&dir, Path::new("notebook-ipython8.log"), &[]));
}

#[test]
fn snapshot_notebook_synchronous_cell() {
    let dir = common::fixtures().join("logs/own");
    insta::assert_snapshot!(human(&dir, Path::new("notebook-input-in.log"), &[]));
}

#[test]
fn snapshot_notebook_papermill_ansi() {
    let dir = common::fixtures().join("logs/own");
    insta::assert_snapshot!(human(&dir, Path::new("notebook-papermill-ansi.log"), &[]));
}
