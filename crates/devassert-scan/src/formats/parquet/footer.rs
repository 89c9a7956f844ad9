//! The footer: its size checked before the parquet crate decodes it (it
//! decodes the whole footer at once, key-value metadata and all), and a
//! footer of more row groups than the crate decodes at once split in parts.

use super::pages;
use crate::error::{self, Result};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

/// Memory a byte of the Parquet footer may take decoded: its key-value
/// metadata and statistics are copied out (1.17 GB of key-value metadata
/// took 4.4 GB).
const FOOTER_DECODED_PER_BYTE: u64 = 4;

/// Refuse a footer whose decoded metadata would pass the budget, before
/// the parquet crate decodes it (it reads all of it at once).
pub(super) fn within_budget(data: &[u8], budget: u64) -> Result<()> {
    let n = data.len();
    if n < 12 || &data[n - 4..] != b"PAR1" {
        return Ok(());
    }
    let len = u32::from_le_bytes([data[n - 8], data[n - 7], data[n - 6], data[n - 5]]);
    error::within_budget(
        "the Parquet footer (its metadata, decoded)",
        u64::from(len).saturating_mul(FOOTER_DECODED_PER_BYTE),
        budget,
    )
}

/// Row groups the parquet crate decodes in one footer: it numbers them
/// with an i16 and refuses a footer of more ("Row group ordinal 32768
/// exceeds i16 max value"), though the format allows any number and
/// pyarrow reads them (arrow-rs #10129, fixed after the version used here).
const GROUPS_PER_DECODE: usize = i16::MAX as usize;

/// The metadata of a file of more than [`GROUPS_PER_DECODE`] row groups,
/// decoded a part at a time: each part a footer of its own, with the same
/// fields and a slice of the row groups, all joined in order after. `None`
/// for any other file (the parquet crate reads it whole).
pub(super) fn split_decode(data: &[u8]) -> std::result::Result<Option<ParquetMetaData>, String> {
    let Some(meta) = metadata(data) else {
        return Ok(None);
    };
    let fields = top_fields(meta).map_err(|e| format!("an unreadable footer ({e})"))?;
    let Some(groups) = fields.iter().find_map(|f| f.groups.as_ref()) else {
        return Ok(None);
    };
    if groups.len() <= GROUPS_PER_DECODE {
        return Ok(None);
    }
    let mut first: Option<ParquetMetaData> = None;
    let mut all = Vec::with_capacity(groups.len());
    for (i, part) in groups.chunks(GROUPS_PER_DECODE).enumerate() {
        // The key-value metadata is decoded once, with the first part.
        let footer = part_footer(meta, &fields, part, i == 0);
        let decoded = ParquetMetaDataReader::decode_metadata(&footer).map_err(|e| e.to_string())?;
        all.extend(decoded.row_groups().iter().cloned());
        first.get_or_insert(decoded);
    }
    let first = first.ok_or("no row groups")?;
    Ok(Some(ParquetMetaData::new(
        first.file_metadata().clone(),
        all,
    )))
}

/// The footer's Thrift bytes (`FileMetaData`), when the file ends as
/// Parquet does.
fn metadata(data: &[u8]) -> Option<&[u8]> {
    let n = data.len();
    if n < 12 || &data[n - 4..] != b"PAR1" {
        return None;
    }
    let len = u32::from_le_bytes([data[n - 8], data[n - 7], data[n - 6], data[n - 5]]) as usize;
    data.get(n.checked_sub(8 + len)?..n - 8)
}

/// A top-level field of `FileMetaData`: its id, type and value's bytes;
/// for the row groups (field 4), each group's bytes.
struct Field {
    id: i16,
    ty: u8,
    value: std::ops::Range<usize>,
    groups: Option<Vec<std::ops::Range<usize>>>,
}

const ROW_GROUPS: i16 = 4;
const KEY_VALUE_METADATA: i16 = 5;
const LIST: u8 = 9;
const STRUCT: u8 = 12;

fn top_fields(meta: &[u8]) -> pages::R<Vec<Field>> {
    let mut r = pages::Compact { b: meta, at: 0 };
    let mut out = Vec::new();
    let mut last = 0;
    while let Some((id, ty)) = r.field(&mut last)? {
        let start = r.at;
        let groups = if id == ROW_GROUPS && ty == LIST {
            let h = r.byte()?;
            if h & 0x0f != STRUCT {
                return Err("row groups that are not structs");
            }
            let n = match h >> 4 {
                15 => r.varint()?,
                n => u64::from(n),
            };
            let mut groups = Vec::new();
            for _ in 0..n {
                let at = r.at;
                r.skip(STRUCT, 1)?;
                groups.push(at..r.at);
            }
            Some(groups)
        } else {
            r.skip(ty, 1)?;
            None
        };
        out.push(Field {
            id,
            ty,
            value: start..r.at,
            groups,
        });
    }
    Ok(out)
}

/// A `FileMetaData` of the fields of `meta` with only the row groups
/// `part`; each field's id written in full (compact protocol's long form),
/// so that any field may follow any other.
fn part_footer(
    meta: &[u8],
    fields: &[Field],
    part: &[std::ops::Range<usize>],
    kv: bool,
) -> Vec<u8> {
    let mut out = Vec::new();
    for f in fields {
        if f.id == KEY_VALUE_METADATA && !kv {
            continue;
        }
        out.push(f.ty);
        varint(&mut out, zigzag(f.id));
        if f.groups.is_some() {
            if part.len() < 15 {
                out.push(((part.len() as u8) << 4) | STRUCT);
            } else {
                out.push(0xf0 | STRUCT);
                varint(&mut out, part.len() as u64);
            }
            for g in part {
                out.extend_from_slice(&meta[g.clone()]);
            }
        } else {
            out.extend_from_slice(&meta[f.value.clone()]);
        }
    }
    out.push(0);
    out
}

fn zigzag(v: i16) -> u64 {
    let v = i64::from(v);
    ((v << 1) ^ (v >> 63)) as u64
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// `file` (a Parquet file of one row group) with that row group listed
    /// `n` times in its footer: a file of `n` row groups, all reading the
    /// same column chunk (the crate's writer stops at 32,767).
    pub(in super::super) fn repeat_groups(file: &[u8], n: usize) -> Vec<u8> {
        let meta = metadata(file).expect("a Parquet file");
        let fields = top_fields(meta).expect("footer");
        let groups = fields
            .iter()
            .find_map(|f| f.groups.clone())
            .expect("groups");
        assert_eq!(groups.len(), 1);
        let footer = part_footer(meta, &fields, &vec![groups[0].clone(); n], true);
        let body = file.len() - 8 - meta.len();
        let mut out = file[..body].to_vec();
        out.extend_from_slice(&footer);
        out.extend_from_slice(&(footer.len() as u32).to_le_bytes());
        out.extend_from_slice(b"PAR1");
        out
    }

    #[test]
    fn a_footer_of_few_groups_is_left_to_the_crate() {
        assert!(split_decode(b"not parquet").expect("no footer").is_none());
    }
}
