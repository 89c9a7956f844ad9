//! The embedded guard is every `python/devassert/**/*.py` file as it is on disk.

use devassert_run::guard::PACKAGE;
use std::path::Path;

#[test]
fn the_embedded_guard_is_every_python_file_of_the_package() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/devassert");
    let mut on_disk: Vec<(String, String)> = Vec::new();
    let mut folders = vec![(dir.clone(), String::new())];
    while let Some((folder, prefix)) = folders.pop() {
        for p in std::fs::read_dir(&folder)
            .expect("python/devassert")
            .filter_map(Result::ok)
            .map(|e| e.path())
        {
            let name = format!("{prefix}{}", p.file_name().unwrap().to_string_lossy());
            if p.is_dir() && !name.ends_with("__pycache__") {
                folders.push((p, format!("{name}/")));
            } else if p.extension().is_some_and(|e| e == "py") {
                on_disk.push((name, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
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
    assert!(PACKAGE.iter().any(|(n, _)| *n == "_findings/rules.py"));
    assert!(PACKAGE
        .iter()
        .any(|(n, _)| *n == "integrations/transformers.py"));
}
