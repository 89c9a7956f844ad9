//! The embedded guard is every `python/devassert/*.py` file as it is on disk.

use devassert_run::guard::PACKAGE;
use std::path::Path;

#[test]
fn the_embedded_guard_is_every_python_file_of_the_package() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/devassert");
    let mut on_disk: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("python/devassert")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    on_disk.sort();
    let embedded: Vec<(String, String)> = PACKAGE
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    assert_eq!(
        embedded.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        on_disk.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    assert!(embedded == on_disk, "an embedded file differs from disk");
    assert!(PACKAGE.iter().any(|(n, _)| *n == "_rules.py"));
}
