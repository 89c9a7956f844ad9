//! The guard's own Python tests, on real PyTorch (CPU): PyTorch's OpInfo
//! database run plain vs guarded (`guard_py/opinfo_conformance.py`), and the
//! programs a user writes (`guard_py/test_cases.py`), and the sync-free
//! `async` level, CUDA graph capture and torch.compile (`guard_py/test_async.py`),
//! diagnostics in bounded memory and dataset samples under prefetching loaders
//! (`guard_py/test_samples.py`), and the guard's invisibility to Python itself:
//! list-of-tensor idioms, `__torch_function__` of every testing override,
//! warnings, tracebacks, unguard (`guard_py/test_transparency.py`), and on
//! tensor subclasses: wrappers, nested tensors, DTensor (`guard_py/test_subclasses.py`);
//! children started by spawn and forkserver guarded at the parent's level
//! (`guard_py/test_processes.py`).
//! `devassert.preflight` on real transformers models, tokenizers, datasets
//! and loaders (`guard_py/test_preflight.py`), one diagnosis per planted root
//! cause from the guard, preflight and scan (`guard_py/test_one_story.py`), the
//! live tokenizer of every class, transformers 4.x and 5.x, fast and slow, added
//! and special and chat-template tokens (`guard_py/test_tokenizers.py`), and
//! the cause engine on the shared cases (`guard_py/test_facts.py`), and its callbacks in a real
//! transformers `Trainer` and `lightning.Trainer` (`guard_py/test_integrations.py`);
//! the pytest plugin under real pytest (`guard_py/test_pytest_plugin.py`) and the
//! notebook extension in a real IPython kernel driven by nbclient
//! (`guard_py/test_notebook.py`);
//! the same findings from programs compiled by Inductor, checked at the compiled
//! region's boundary or, for ops dynamo breaks the graph on, by the eager guard
//! (`guard_py/test_compiled.py`), and indices computed inside the region,
//! checked in the compiled graph (`guard_py/test_compiled_inside.py`); every
//! guarded op in every form, compiled, against plain compiled code and the
//! eager finding (`guard_py/test_compiled_forms.py`, the equivalence harness;
//! `DEVASSERT_FULL_MATRIX=1` runs its whole matrix).
//! `on_bad_batch="skip"` in real training loops (AdamW, accumulation, GradScaler,
//! DDP, FSDP2 and classic FSDP over 2 gloo ranks under torchrun, a DeepSpeed-shaped
//! engine, accelerate, compiled regions, the Trainer callbacks: `guard_py/test_skip.py`).

mod common;

use std::path::Path;
use std::process::Command;

fn run_python(args: &[&str]) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guard_py");
    // The built binary first on PATH: the package finds it there as
    // `python -m devassert` does when it is not installed from the wheel
    // (preflight's data scan, `%devassert explain`).
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_devassert"))
        .parent()
        .expect("the binary's folder")
        .to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let out = Command::new(common::python())
        .args(args)
        .current_dir(&dir)
        .env("PYTHONPATH", common::repo_root().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PATH", path)
        .output()
        .expect("run the test venv's python");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{}", text);
    text
}

#[test]
fn opinfo_samples_and_error_inputs_are_unchanged_by_the_guard() {
    let text = run_python(&["opinfo_conformance.py"]);
    assert!(text.contains("0 failed"), "{text}");
    println!("{text}");
}

#[test]
fn real_programs_behave_the_same_guarded() {
    let text = run_python(&[
        "-m",
        "unittest",
        "-v",
        "test_cases",
        "test_facts",
        "test_async",
        "test_samples",
        "test_transparency",
        "test_subclasses",
        "test_processes",
    ]);
    assert!(text.contains("\nOK"), "{text}");
}

#[test]
fn preflight_and_its_callbacks_on_real_libraries() {
    let text = run_python(&[
        "-m",
        "unittest",
        "-v",
        "test_preflight",
        "test_one_story",
        "test_tokenizers",
        "test_integrations",
    ]);
    assert!(text.contains("\nOK"), "{text}");
}

#[test]
fn skip_policy_leaves_a_bad_batchs_step_out_on_every_rank() {
    let text = run_python(&["-m", "unittest", "-v", "test_skip"]);
    assert!(text.contains("\nOK"), "{text}");
}

#[test]
fn pytest_plugin_guards_each_test_under_real_pytest() {
    let text = run_python(&["-m", "unittest", "-v", "test_pytest_plugin"]);
    assert!(text.contains("\nOK"), "{text}");
}

#[test]
fn notebook_extension_in_a_real_kernel() {
    let text = run_python(&["-m", "unittest", "-v", "test_notebook"]);
    assert!(text.contains("\nOK"), "{text}");
}

#[test]
fn compiled_programs_give_the_eager_findings() {
    let text = run_python(&["-m", "unittest", "-v", "test_compiled"]);
    assert!(text.contains("\nOK"), "{text}");
}

#[test]
fn indices_computed_inside_compiled_regions_are_checked_there() {
    let text = run_python(&["-m", "unittest", "-v", "test_compiled_inside"]);
    assert!(text.contains("\nOK"), "{text}");
}

#[test]
fn every_guarded_op_in_every_form_compiled_matches_plain_and_eager() {
    let text = run_python(&["-m", "unittest", "-v", "test_compiled_forms"]);
    assert!(text.contains("\nOK"), "{text}");
}
