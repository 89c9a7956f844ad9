//! Write every target's generated seeds (the bombs and hostile files of
//! `seeds`) into a cargo-fuzz corpus: `fuzz/seed.sh` runs it.
//!
//! usage: cargo run -p devassert-fuzzing --example write_seeds -- CORPUS_DIR

use devassert_fuzzing::{seeds, TARGETS};
use std::path::{Path, PathBuf};

fn main() -> std::io::Result<()> {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| "fuzz/corpus".into());
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for t in TARGETS {
        let dir = out.join(t.name);
        std::fs::create_dir_all(&dir)?;
        let mut n = 0;
        for s in seeds::seeds(t.name, &repo)
            .iter()
            .filter(|s| s.name.starts_with("generated:"))
        {
            let hash = s.data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
            });
            std::fs::write(dir.join(format!("{hash:016x}-generated")), &s.data)?;
            n += 1;
        }
        println!("{n} generated seeds in {}", dir.display());
    }
    Ok(())
}
