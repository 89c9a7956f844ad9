//! The one safetensors header parser, shared by `scan` (integer tensors of a
//! data file) and `check` (a model's weight shapes): the 8-byte
//! little-endian header length, then a JSON object of tensor names to dtype,
//! shape and data offsets. Every number is checked against the file before
//! it is believed: a hostile length cannot make us allocate, offsets that
//! lie are an error, not a wrong shape.

use serde_json::Value;

/// The safetensors format caps the header at 100 MB; so do we.
pub const MAX_HEADER: u64 = 100 * 1024 * 1024;

/// One tensor as the header describes it; its bytes are `begin..end` of the
/// data section that follows the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderTensor {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<u64>,
    pub begin: u64,
    pub end: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("the file is {file_len} bytes, too short for the 8-byte header length")]
    TooShort { file_len: u64 },
    #[error("the header length says {len} bytes but only {follow} bytes follow it")]
    LengthPastEnd { len: u64, follow: u64 },
    #[error("the header length {len} is over the format's limit of {MAX_HEADER} bytes")]
    LengthOverLimit { len: u64 },
    #[error("the header is not JSON: {0}")]
    NotJson(String),
    #[error("the header is not a JSON object")]
    NotObject,
    #[error("tensor {0:?} has no dtype")]
    NoDtype(String),
    #[error("tensor {0:?} has no shape of non-negative integers")]
    NoShape(String),
    #[error("tensor {0:?} has no data_offsets [begin, end]")]
    NoOffsets(String),
    #[error(
        "tensor {name:?} claims bytes {begin}..{end} but the data section is {data_len} bytes"
    )]
    OffsetsPastData {
        name: String,
        begin: u64,
        end: u64,
        data_len: u64,
    },
    #[error("tensor {name:?} of dtype {dtype} and shape {shape:?} needs {} bytes but its offsets span {span}", want.map_or_else(|| "more than 2^64".to_string(), |w| w.to_string()))]
    SizeMismatch {
        name: String,
        dtype: String,
        shape: Vec<u64>,
        /// `None` when the size overflows.
        want: Option<u64>,
        span: u64,
    },
}

/// Bytes per element of a safetensors dtype; `None` for one we do not know.
pub fn dtype_size(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" | "F8_E4M3FN" | "F8_E5M2FNUZ"
        | "F8_E4M3FNUZ" => 1,
        "I16" | "U16" | "F16" | "BF16" => 2,
        "I32" | "U32" | "F32" => 4,
        "I64" | "U64" | "F64" | "C64" => 8,
        _ => return None,
    })
}

/// The header length from a file's first bytes (`prefix`, at least 8 of
/// them when the file has them), checked against the file's length.
pub fn header_len(prefix: &[u8], file_len: u64) -> Result<u64, HeaderError> {
    let Some(first) = prefix.get(..8) else {
        return Err(HeaderError::TooShort { file_len });
    };
    let mut n8 = [0u8; 8];
    n8.copy_from_slice(first);
    let len = u64::from_le_bytes(n8);
    let follow = file_len.saturating_sub(8);
    if len > follow {
        return Err(HeaderError::LengthPastEnd { len, follow });
    }
    if len > MAX_HEADER {
        return Err(HeaderError::LengthOverLimit { len });
    }
    Ok(len)
}

/// Parse a header's JSON and check every tensor's offsets against the data
/// that follows it (`data_len` bytes). Tensors come sorted by name.
pub fn parse_header(header: &[u8], data_len: u64) -> Result<Vec<HeaderTensor>, HeaderError> {
    let value: Value =
        serde_json::from_slice(header).map_err(|e| HeaderError::NotJson(e.to_string()))?;
    let Value::Object(map) = value else {
        return Err(HeaderError::NotObject);
    };
    let uints = |v: Option<&Value>| -> Option<Vec<u64>> {
        v.and_then(Value::as_array)
            .and_then(|a| a.iter().map(Value::as_u64).collect())
    };
    let mut out = Vec::with_capacity(map.len());
    for (name, entry) in map {
        if name == "__metadata__" {
            continue;
        }
        let Some(dtype) = entry.get("dtype").and_then(Value::as_str) else {
            return Err(HeaderError::NoDtype(name));
        };
        let dtype = dtype.to_string();
        let Some(shape) = uints(entry.get("shape")) else {
            return Err(HeaderError::NoShape(name));
        };
        let Some([begin, end]) =
            uints(entry.get("data_offsets")).and_then(|o| <[u64; 2]>::try_from(o).ok())
        else {
            return Err(HeaderError::NoOffsets(name));
        };
        if begin > end || end > data_len {
            return Err(HeaderError::OffsetsPastData {
                name,
                begin,
                end,
                data_len,
            });
        }
        if let Some(size) = dtype_size(&dtype) {
            let want = shape.iter().try_fold(size, |acc, &d| acc.checked_mul(d));
            if want != Some(end - begin) {
                return Err(HeaderError::SizeMismatch {
                    name,
                    dtype,
                    shape,
                    want,
                    span: end - begin,
                });
            }
        }
        out.push(HeaderTensor {
            name,
            dtype,
            shape,
            begin,
            end,
        });
    }
    Ok(out)
}
