//! Megatron-LM indexed datasets (`preprocess_data.py`'s output, also NeMo's):
//! `name.bin` holds the tokens of every sequence back to back, `name.idx`
//! beside it says their dtype and where each sequence and document starts.
//!
//! The `.idx` itself is read and checked by [`crate::seq_index`].

use super::reader::{Input, Reader};
use crate::error::{bad, Result};
use crate::format::InputFormat;
use crate::options::ScanOptions;
use crate::seq_index::{SeqIndex, MAGIC};
use crate::values::{Layout, Part, Values};
use devassert_core::inside::Inside;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The `.idx` that makes `bin` a Megatron dataset: the same name with
/// `.idx`, when it exists and starts with the magic. One that is a link out
/// of the `.bin`'s folder is not opened, nor one that is not a regular file
/// (a FIFO would block the open): they count, so that the reader reports
/// them instead of the `.bin` being read as raw tokens.
pub fn companion(bin: &Path) -> Option<PathBuf> {
    if !bin
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("bin"))
    {
        return None;
    }
    let idx = bin.with_extension("idx");
    if idx.symlink_metadata().ok()?.file_type().is_symlink() && inside_check(bin, &idx).is_err() {
        return Some(idx);
    }
    if !std::fs::metadata(&idx).ok()?.is_file() {
        return Some(idx);
    }
    let mut head = [0u8; 9];
    let mut f = devassert_core::regular::open(&idx).ok()?;
    std::io::Read::read_exact(&mut f, &mut head).ok()?;
    (&head == MAGIC).then_some(idx)
}

/// The index is read as part of the .bin's dataset: a link from it that
/// leaves the .bin's folder is not followed.
fn inside_check(bin: &Path, idx: &Path) -> std::result::Result<(), String> {
    let folder = match bin.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Inside::new(folder).map_err(|e| e.to_string())?.check(idx)
}

pub struct Megatron;

impl Reader for Megatron {
    fn read(&self, input: &Input<'_>, _opts: &ScanOptions) -> Result<Vec<Part>> {
        let idx = input.path.with_extension("idx");
        let name = idx
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if idx.symlink_metadata().is_err() {
            return Err(bad(format!(
                "a Megatron dataset needs its index {name} beside the .bin, and there is none"
            )));
        }
        inside_check(input.path, &idx).map_err(|why| bad(format!("{name}: {why}")))?;
        let (index, dtype, tokens) = SeqIndex::open(&idx, input.data().len() as u64)
            .map_err(|why| bad(format!("{name}: {why}")))?;
        let tokens = usize::try_from(tokens).map_err(|_| bad("too many tokens"))?;
        let shape = Some(vec![index.sequences]);
        Ok(vec![Part {
            name: None,
            format: InputFormat::Megatron,
            dtype_label: format!("{} (Megatron .idx)", dtype.numpy_name()),
            data: Values {
                bytes: input.bytes.clone(),
                start: 0,
                len: tokens,
                dtype,
                big_endian: false,
            }
            .into(),
            layout: Layout::Sequences(Arc::new(index)),
            shape,
        }])
    }
}
