//! `.npz`: a zip of `.npy` members (`np.savez` stores, `np.savez_compressed`
//! deflates). `--tensor NAME` picks one member.

use super::npy;
use super::reader::{Input, Reader};
use crate::error::{bad, within_budget, Result};
use crate::format::InputFormat;
use crate::mapped::Bytes;
use crate::options::ScanOptions;
use crate::values::Part;
use std::io::Read;
use std::sync::Arc;

pub struct Npz;

/// A zip that is not an npz, said for what it is: `torch.save` writes a zip
/// whose members are a pickle (`…/data.pkl`) and raw storages, which read
/// as "not a .npy" otherwise.
fn other_zip<R: std::io::Read + std::io::Seek>(zip: &zip::ZipArchive<R>) -> Option<String> {
    let pickle = zip
        .file_names()
        .any(|n| n == "data.pkl" || n.ends_with("/data.pkl"));
    pickle.then(|| {
        "a PyTorch file (torch.save's zip of a pickle), which devassert does not read: \
         save the ids with numpy.save / np.savez or safetensors, or scan the data they came from"
            .to_string()
    })
}

impl Reader for Npz {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(input.data()))
            .map_err(|e| bad(format!("not a readable zip: {e}")))?;
        if let Some(what) = other_zip(&zip) {
            return Err(bad(what));
        }
        let mut parts = Vec::new();
        let mut names = Vec::new();
        let mut used = 0u64; // bytes inflated so far, kept until the scan ends
        for i in 0..zip.len() {
            let mut member = zip
                .by_index(i)
                .map_err(|e| bad(format!("zip member {i}: {e}")))?;
            let full = member.name().to_string();
            let name = full.strip_suffix(".npy").unwrap_or(&full).to_string();
            names.push(name.clone());
            if opts
                .tensor
                .as_deref()
                .is_some_and(|t| t != name && t != full)
            {
                continue;
            }
            // Both stated sizes are untrusted (fuzzed headers said 3.8 GB, and a
            // zip64 field 2 GB of compressed bytes in a 237-byte file): reserve
            // no more than the bytes the file really has can inflate to, and
            // inflate no more than the budget left for this file.
            let left = opts.decode_budget.saturating_sub(used);
            let what = format!("member {full} ({} bytes inflated)", member.size());
            within_budget(&what, member.size(), left)?;
            let compressed = member.compressed_size().min(input.data().len() as u64);
            let room = compressed.saturating_mul(1032);
            let mut buf = Vec::with_capacity(member.size().min(room).min(left) as usize);
            (&mut member)
                .take(left.saturating_add(1))
                .read_to_end(&mut buf)
                .map_err(|e| bad(format!("member {full}: {e}")))?;
            // The stated size may lie: the stream itself is held to the budget.
            within_budget(&format!("member {full}"), buf.len() as u64, left)?;
            let len = buf.len();
            // Float members (weights, masks of probabilities) are not ids: skip them unless asked for.
            if opts.tensor.is_none()
                && npy::header(&buf).is_ok_and(|h| npy::dtype_of(&h.descr).is_err())
            {
                continue;
            }
            used += len as u64;
            let part = npy::parse(
                Arc::new(Bytes::Heap(buf)),
                0,
                len,
                Some(name),
                InputFormat::Npz,
            )
            .map_err(|e| bad(format!("member {full}: {e}")))?;
            parts.push(part);
        }
        if parts.is_empty() {
            if let Some(t) = &opts.tensor {
                return Err(bad(format!(
                    "no member {t:?} (members: {})",
                    names.join(", ")
                )));
            }
        }
        Ok(parts)
    }
}
