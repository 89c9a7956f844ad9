//! `scripts/check-layout` (run by `make test`) on small trees laid out like
//! the repository: it must name every cycle and upward import it is meant to
//! catch, and pass a tree without them.

use std::path::Path;
use std::process::Command;

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// (exit code, stdout) of the script over `files`.
fn check(files: &[(&str, &str)]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("crates")).unwrap();
    write(dir.path(), files);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/check-layout");
    let out = Command::new("python3")
        .arg(script)
        .arg("--root")
        .arg(dir.path())
        .output()
        .expect("python3 runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_rust_cycle_through_a_reexport_is_named_with_its_files() {
    let (code, out) = check(&[
        ("crates/x/src/lib.rs", "mod a;\nmod b;\npub use b::Thing;\n"),
        // `crate::Thing` is b's, through the root's re-export.
        (
            "crates/x/src/a.rs",
            "use crate::Thing;\npub fn f() -> Thing { Thing }\n",
        ),
        (
            "crates/x/src/b.rs",
            "pub struct Thing;\npub fn g() { crate::a::f(); }\n",
        ),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("crates/x: cycle of 2 files: crates/x/src/a.rs, crates/x/src/b.rs"),
        "{out}"
    );
    assert!(
        out.contains("crates/x/src/b.rs:2 -> crates/x/src/a.rs: crate::a::f"),
        "{out}"
    );
}

#[test]
fn a_child_using_its_parents_items_is_upward_unless_the_parent_only_reexports() {
    let upward = [
        ("crates/x/src/lib.rs", "mod formats;\n"),
        (
            "crates/x/src/formats/mod.rs",
            "mod npy;\npub trait Reader {}\n",
        ),
        (
            "crates/x/src/formats/npy.rs",
            "use super::Reader;\npub struct Npy;\nimpl Reader for Npy {}\n",
        ),
    ];
    let (code, out) = check(&upward);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("upward import: crates/x/src/formats/npy.rs:1 -> crates/x/src/formats/mod.rs"),
        "{out}"
    );
    let hub = [
        ("crates/x/src/lib.rs", "mod formats;\n"),
        (
            "crates/x/src/formats/mod.rs",
            "mod npy;\nmod reader;\npub use reader::Reader;\n",
        ),
        ("crates/x/src/formats/reader.rs", "pub trait Reader {}\n"),
        (
            "crates/x/src/formats/npy.rs",
            "use super::Reader;\npub struct Npy;\nimpl Reader for Npy {}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        ),
    ];
    let (code, out) = check(&hub);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_test_module_in_its_own_file_may_use_the_module_it_tests() {
    let tested = [
        ("crates/x/src/lib.rs", "mod npy;\n"),
        (
            "crates/x/src/npy.rs",
            "pub fn parse() {}\n\n#[cfg(test)]\nmod tests;\n",
        ),
        (
            "crates/x/src/npy/tests.rs",
            "use super::*;\n#[test]\nfn t() { parse(); }\n",
        ),
    ];
    let (code, out) = check(&tested);
    assert_eq!(code, 0, "{out}");
    // The same file without #[cfg(test)] is a child reaching up.
    let mut child = tested;
    child[1].1 = "pub fn parse() {}\n\nmod tests;\n";
    let (code, out) = check(&child);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("upward import: crates/x/src/npy/tests.rs:1"),
        "{out}"
    );
}

#[test]
fn python_cycles_count_function_level_imports_but_not_type_checking_ones() {
    let (code, out) = check(&[
        ("python/devassert/__init__.py", "from . import a\n"),
        (
            "python/devassert/a.py",
            "def f():\n    from .sub import b\n    return b\n",
        ),
        ("python/devassert/sub/__init__.py", ""),
        ("python/devassert/sub/b.py", "import devassert.a\n"),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("cycle of 2 files: python/devassert/a.py, python/devassert/sub/b.py"),
        "{out}"
    );
    let (code, out) = check(&[
        ("python/devassert/__init__.py", "from . import a\n"),
        (
            "python/devassert/a.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import b\n",
        ),
        ("python/devassert/b.py", "from . import a\n"),
    ]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_long_file_needs_a_sentence_that_says_why() {
    let long = "pub fn f() {}\n".repeat(501);
    let said = format!("//! Over 500 lines: one table that reads best whole.\n{long}");
    let (code, out) = check(&[("crates/x/src/lib.rs", &long)]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("long file: crates/x/src/lib.rs: 501 lines"),
        "{out}"
    );
    let (code, out) = check(&[("crates/x/src/lib.rs", &said)]);
    assert_eq!(code, 0, "{out}");
}
