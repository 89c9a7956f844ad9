//! `.npy`: the magic, a version, a Python-dict header (`descr`,
//! `fortran_order`, `shape`), then the array. Every integer dtype in either
//! byte order; positions are reported as N-d indices.

use super::reader::{element_count, Input, Reader};
use crate::dtype::Dtype;
use crate::error::{bad, excerpt, Result};
use crate::format::InputFormat;
use crate::mapped::Bytes;
use crate::options::ScanOptions;
use crate::values::{Layout, Part, Values};
use std::sync::Arc;

pub struct Npy;

impl Reader for Npy {
    fn read(&self, input: &Input<'_>, _opts: &ScanOptions) -> Result<Vec<Part>> {
        Ok(vec![parse(
            input.bytes.clone(),
            0,
            input.data().len(),
            None,
            InputFormat::Npy,
        )?])
    }
}

/// The header fields of a `.npy`.
#[derive(Debug, PartialEq)]
pub struct Header {
    pub descr: String,
    pub fortran: bool,
    pub shape: Vec<u64>,
    /// Byte offset of the data from the start of the `.npy`.
    pub data_start: usize,
}

/// Parse a `.npy` held in `bytes[start..start + len]` into a part.
pub fn parse(
    bytes: Arc<Bytes>,
    start: usize,
    len: usize,
    name: Option<String>,
    format: InputFormat,
) -> Result<Part> {
    let all = bytes.as_slice();
    let npy = all
        .get(start..start + len)
        .ok_or_else(|| bad("npy member out of bounds"))?;
    let h = header(npy)?;
    let (dtype, big_endian) = dtype_of(&h.descr)?;
    let count = element_count(&h.shape)?;
    let need = count
        .checked_mul(dtype.size() as u64)
        .ok_or_else(|| bad("array size overflows"))?;
    let have = (npy.len() - h.data_start) as u64;
    if have < need {
        return Err(bad(format!(
            "truncated: header says shape {:?} of {} ({need} bytes), file holds {have} bytes of data",
            h.shape, h.descr
        )));
    }
    let values = Values {
        bytes: bytes.clone(),
        start: start + h.data_start,
        len: count as usize,
        dtype,
        big_endian,
    };
    let layout = Layout::Shape {
        dims: h.shape.clone(),
        fortran: h.fortran,
    };
    Ok(Part {
        name,
        format,
        dtype_label: h.descr,
        data: values.into(),
        layout,
        shape: Some(h.shape),
    })
}

pub fn header(npy: &[u8]) -> Result<Header> {
    if !npy.starts_with(b"\x93NUMPY") {
        return Err(bad("not a .npy (no \\x93NUMPY magic)"));
    }
    if npy.len() < 10 {
        return Err(bad("truncated .npy header"));
    }
    let major = npy[6];
    let (hlen, hstart) = match major {
        1 => (u16::from_le_bytes([npy[8], npy[9]]) as usize, 10),
        2 | 3 => {
            if npy.len() < 12 {
                return Err(bad("truncated .npy header"));
            }
            (
                u32::from_le_bytes([npy[8], npy[9], npy[10], npy[11]]) as usize,
                12,
            )
        }
        v => return Err(bad(format!(".npy format version {v} is unknown"))),
    };
    let text = npy.get(hstart..hstart + hlen).ok_or_else(|| {
        bad(format!(
            "truncated .npy header: says {hlen} bytes, file holds {}",
            npy.len() - hstart
        ))
    })?;
    let text = std::str::from_utf8(text).map_err(|_| bad(".npy header is not text"))?;
    let descr = dict_value(text, "descr")
        .ok_or_else(|| bad(format!(".npy header has no 'descr': {}", excerpt(text))))?;
    let descr = descr
        .trim()
        .trim_matches(|c| c == '\'' || c == '"')
        .to_string();
    let fortran = match dict_value(text, "fortran_order").map(str::trim) {
        Some("True") => true,
        Some("False") | None => false,
        Some(other) => return Err(bad(format!(".npy fortran_order is {}", excerpt(other)))),
    };
    let shape_text = dict_value(text, "shape")
        .ok_or_else(|| bad(format!(".npy header has no 'shape': {}", excerpt(text))))?;
    let inner = shape_text
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')');
    let mut shape = Vec::new();
    for dim in inner.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        shape.push(dim.trim_end_matches('L').parse::<u64>().map_err(|_| {
            bad(format!(
                ".npy shape {} is not a tuple of sizes",
                excerpt(shape_text)
            ))
        })?);
    }
    Ok(Header {
        descr,
        fortran,
        shape,
        data_start: hstart + hlen,
    })
}

/// The text of `key`'s value in a Python dict literal: up to the next
/// top-level comma or the closing brace.
fn dict_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let k1 = format!("'{key}'");
    let k2 = format!("\"{key}\"");
    let at = text
        .find(&k1)
        .map(|i| i + k1.len())
        .or_else(|| text.find(&k2).map(|i| i + k2.len()))?;
    let rest = text[at..].trim_start().strip_prefix(':')?;
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(&rest[..i]),
            _ => {}
        }
    }
    None
}

/// Integer dtypes of numpy's `descr` strings (`<u2`, `>i4`, `|u1`, `<i8`).
pub fn dtype_of(descr: &str) -> Result<(Dtype, bool)> {
    let b = descr.as_bytes();
    if b.len() < 3 {
        return Err(bad(format!(
            "dtype \"{}\" is not an integer dtype",
            excerpt(descr)
        )));
    }
    let big_endian = match b[0] {
        b'<' | b'|' | b'=' => false,
        b'>' => true,
        _ => {
            return Err(bad(format!(
                "dtype \"{}\" is not an integer dtype",
                excerpt(descr)
            )))
        }
    };
    let dtype = match &descr[1..] {
        "u1" => Dtype::U8,
        "i1" => Dtype::I8,
        "u2" => Dtype::U16,
        "i2" => Dtype::I16,
        "u4" => Dtype::U32,
        "i4" => Dtype::I32,
        "u8" => Dtype::U64,
        "i8" => Dtype::I64,
        "b1" => Dtype::U8,
        _ => {
            return Err(bad(format!(
                "dtype {descr:?} is not an integer dtype (ids and labels are integers)"
            )))
        }
    };
    Ok((dtype, big_endian))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numpys_header() {
        let text = "{'descr': '>i4', 'fortran_order': True, 'shape': (3, 4), }";
        let mut npy = b"\x93NUMPY\x01\x00".to_vec();
        npy.extend_from_slice(&(text.len() as u16).to_le_bytes());
        npy.extend_from_slice(text.as_bytes());
        let h = header(&npy).unwrap();
        assert_eq!(
            h,
            Header {
                descr: ">i4".into(),
                fortran: true,
                shape: vec![3, 4],
                data_start: 10 + text.len()
            }
        );
        assert_eq!(dtype_of(&h.descr).unwrap(), (Dtype::I32, true));
    }

    #[test]
    fn scalar_shape_and_floats() {
        assert_eq!(dict_value("{'shape': (), }", "shape"), Some(" ()"));
        assert!(dtype_of("<f4").is_err());
    }
}
