//! Safetensors headers: the 8-byte little-endian header length, then a JSON
//! object of tensor names to dtype, shape and data offsets. Only the header is
//! read, never the weights, and every number in it is checked against the file
//! before it is believed: a hostile length cannot make us allocate, and
//! offsets that lie are an error, not a wrong shape.

use crate::budget::{cost, Budget, Reading, HEADER_PER_BYTE};
use crate::error::ModelError;
use devassert_scan::safetensors_header::{self, header_len};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

mod weight_map;

/// One tensor as a header describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<u64>,
    /// The file (name only) that holds it.
    pub file: String,
}

/// All tensors of a model's safetensors weights, by name.
#[derive(Debug, Clone, Default)]
pub struct Weights {
    pub tensors: BTreeMap<String, TensorInfo>,
    /// The files read, in order (file names relative to the model directory).
    pub files: Vec<String>,
}

fn bad(path: &Path, message: impl Into<String>) -> ModelError {
    ModelError::Safetensors {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Read the header of one safetensors file (devassert-scan's parser; only
/// the header is read, never the weights), drawing what it holds from
/// `budget` before it is read.
pub fn read_header(path: &Path, budget: &Budget) -> Result<Vec<TensorInfo>, ModelError> {
    let mut f = devassert_core::regular::open(path).map_err(|e| ModelError::io(path, e))?;
    let file_len = f.metadata().map_err(|e| ModelError::io(path, e))?.len();
    let mut prefix = [0u8; 8];
    let have = if file_len >= 8 {
        f.read_exact(&mut prefix)
            .map_err(|e| ModelError::io(path, e))?;
        8
    } else {
        0
    };
    let n = header_len(&prefix[..have], file_len).map_err(|e| bad(path, e.to_string()))?;
    budget
        .take(cost(n, HEADER_PER_BYTE))
        .map_err(|why| ModelError::over_budget(path, why))?;
    // n <= MAX_HEADER (header_len checks it), and the budget took it.
    let mut header = vec![0u8; n as usize];
    f.read_exact(&mut header)
        .map_err(|e| ModelError::io(path, e))?;
    parse_header(path, &header, file_len - 8 - n)
}

/// Parse a header's JSON and check every tensor's offsets against the data
/// that follows it (`data_len` bytes).
pub(crate) fn parse_header(
    path: &Path,
    header: &[u8],
    data_len: u64,
) -> Result<Vec<TensorInfo>, ModelError> {
    let file = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tensors =
        safetensors_header::parse_header(header, data_len).map_err(|e| bad(path, e.to_string()))?;
    Ok(tensors
        .into_iter()
        .map(|t| TensorInfo {
            name: t.name,
            dtype: t.dtype,
            shape: t.shape,
            file: file.clone(),
        })
        .collect())
}

/// A shard file name from an index must name a file inside the model directory.
fn shard_path(dir: &Path, index: &Path, name: &str) -> Result<PathBuf, ModelError> {
    let p = Path::new(name);
    let plain = p.components().count() == 1
        && matches!(p.components().next(), Some(std::path::Component::Normal(_)));
    if !plain {
        return Err(ModelError::invalid(
            index,
            format!("weight_map names {name:?}, which is not a file name in the model directory"),
        ));
    }
    Ok(dir.join(p))
}

/// Read the weights' headers of a model directory: `model.safetensors`, or
/// the shards listed in `model.safetensors.index.json`. `None` when there are
/// no safetensors weights, or when they are left out ([`Reading`]: not
/// regular files, or over the budget): the weights are read whole or not
/// at all, so no check sees half a model.
pub fn read_weights(dir: &Path, reading: &Reading) -> Result<Option<Weights>, ModelError> {
    let single = dir.join("model.safetensors");
    let index = dir.join("model.safetensors.index.json");
    if reading.present(&index) {
        return Ok(reading
            .or_left_out(read_sharded(dir, &index, reading))?
            .flatten());
    }
    if reading.present(&single) {
        let Some(tensors) = reading.or_left_out(read_header(&single, &reading.budget))? else {
            return Ok(None);
        };
        let mut w = Weights {
            files: vec!["model.safetensors".into()],
            ..Default::default()
        };
        for t in tensors {
            w.tensors.insert(t.name.clone(), t);
        }
        return Ok(Some(w));
    }
    Ok(None)
}

/// The shards an index lists; `None` when one is left out (said by `reading`).
fn read_sharded(
    dir: &Path,
    index: &Path,
    reading: &Reading,
) -> Result<Option<Weights>, ModelError> {
    let budget = &reading.budget;
    let wanted = crate::json::read_with(index, budget, weight_map::IndexSeed(budget))?
        .map_err(|message| ModelError::invalid(index, message))?;
    let mut w = Weights::default();
    for (file, names) in wanted {
        let path = shard_path(dir, index, &file)?;
        let exists = std::fs::metadata(&path).is_ok_and(|m| !m.is_dir());
        if exists && !reading.present(&path) {
            // A FIFO or a device (said): the weights are left out.
            return Ok(None);
        }
        let tensors = read_header(&path, budget)?;
        let mut in_file: BTreeMap<String, TensorInfo> =
            tensors.into_iter().map(|t| (t.name.clone(), t)).collect();
        for name in names {
            let t = in_file.remove(&name).ok_or_else(|| {
                ModelError::invalid(index, format!("weight_map puts tensor {name:?} in {file}, but that file's header does not list it"))
            })?;
            w.tensors.insert(name, t);
        }
        w.files.push(file);
    }
    Ok(Some(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn file_with(header: &str, data: usize) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(header.as_bytes());
        v.extend(std::iter::repeat_n(0u8, data));
        v
    }

    #[test]
    fn reads_a_valid_header() {
        let d = tempfile::tempdir().unwrap();
        let h = r#"{"__metadata__":{"format":"pt"},"emb.weight":{"dtype":"F32","shape":[10,4],"data_offsets":[0,160]}}"#;
        let p = write(d.path(), "model.safetensors", &file_with(h, 160));
        let t = read_header(&p, &Budget::new(1 << 20)).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].shape, vec![10, 4]);
        assert_eq!(t[0].file, "model.safetensors");
    }

    #[test]
    fn header_length_of_2_pow_63_is_an_error_not_an_allocation() {
        let d = tempfile::tempdir().unwrap();
        let mut bytes = (1u64 << 63).to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        let p = write(d.path(), "model.safetensors", &bytes);
        let e = read_header(&p, &Budget::new(1 << 20))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("model.safetensors") && e.contains("9223372036854775808"),
            "{e}"
        );
    }

    #[test]
    fn header_length_past_the_end_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let mut bytes = 1000u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        let p = write(d.path(), "model.safetensors", &bytes);
        let e = read_header(&p, &Budget::new(1 << 20))
            .unwrap_err()
            .to_string();
        assert!(e.contains("only 2 bytes follow"), "{e}");
    }

    #[test]
    fn a_file_shorter_than_eight_bytes_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "model.safetensors", b"abc");
        let e = read_header(&p, &Budget::new(1 << 20))
            .unwrap_err()
            .to_string();
        assert!(e.contains("too short"), "{e}");
    }

    #[test]
    fn offsets_past_the_data_are_an_error() {
        let d = tempfile::tempdir().unwrap();
        let h = r#"{"emb.weight":{"dtype":"F32","shape":[10,4],"data_offsets":[0,160]}}"#;
        let p = write(d.path(), "model.safetensors", &file_with(h, 16));
        let e = read_header(&p, &Budget::new(1 << 20))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("claims bytes 0..160") && e.contains("16 bytes"),
            "{e}"
        );
    }

    #[test]
    fn offsets_that_disagree_with_the_shape_are_an_error() {
        let d = tempfile::tempdir().unwrap();
        // A header that claims 50257 rows but spans 4 rows' bytes.
        let h = r#"{"wte.weight":{"dtype":"F32","shape":[50257,4],"data_offsets":[0,64]}}"#;
        let p = write(d.path(), "model.safetensors", &file_with(h, 64));
        let e = read_header(&p, &Budget::new(1 << 20))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("needs 804112 bytes but its offsets span 64"),
            "{e}"
        );
    }

    #[test]
    fn a_shape_whose_size_overflows_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let h = r#"{"x":{"dtype":"F32","shape":[18446744073709551615,4],"data_offsets":[0,0]}}"#;
        let p = write(d.path(), "model.safetensors", &file_with(h, 0));
        let e = read_header(&p, &Budget::new(1 << 20))
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 2^64"), "{e}");
    }

    #[test]
    fn broken_header_json_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "model.safetensors", &file_with("{\"a\":", 0));
        let e = read_header(&p, &Budget::new(1 << 20))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("model.safetensors") && e.contains("not JSON"),
            "{e}"
        );
    }

    #[test]
    fn reads_a_sharded_model() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "a.safetensors",
            &file_with(
                r#"{"emb.weight":{"dtype":"F16","shape":[8,2],"data_offsets":[0,32]}}"#,
                32,
            ),
        );
        write(
            d.path(),
            "b.safetensors",
            &file_with(
                r#"{"head.weight":{"dtype":"F16","shape":[8,2],"data_offsets":[0,32]}}"#,
                32,
            ),
        );
        write(d.path(), "model.safetensors.index.json", br#"{"metadata":{},"weight_map":{"emb.weight":"a.safetensors","head.weight":"b.safetensors"}}"#);
        let w = read_weights(d.path(), &Reading::default())
            .unwrap()
            .unwrap();
        assert_eq!(w.files, vec!["a.safetensors", "b.safetensors"]);
        assert_eq!(w.tensors["head.weight"].file, "b.safetensors");
    }

    #[test]
    fn an_index_that_lies_about_a_shard_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "a.safetensors",
            &file_with(
                r#"{"emb.weight":{"dtype":"F16","shape":[8,2],"data_offsets":[0,32]}}"#,
                32,
            ),
        );
        write(
            d.path(),
            "model.safetensors.index.json",
            br#"{"weight_map":{"lm_head.weight":"a.safetensors"}}"#,
        );
        let e = read_weights(d.path(), &Reading::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("model.safetensors.index.json") && e.contains("lm_head.weight"),
            "{e}"
        );
    }

    #[test]
    fn an_index_naming_a_missing_shard_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "model.safetensors.index.json",
            br#"{"weight_map":{"x":"model-00001-of-00002.safetensors"}}"#,
        );
        let e = read_weights(d.path(), &Reading::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("model-00001-of-00002.safetensors"), "{e}");
    }

    #[test]
    fn an_index_cannot_point_outside_the_directory() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "model.safetensors.index.json",
            br#"{"weight_map":{"x":"../../etc/passwd"}}"#,
        );
        let e = read_weights(d.path(), &Reading::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a file name in the model directory"), "{e}");
    }
}
