//! The page headers of a column chunk, read before parquet reads the pages:
//! parquet allocates (and zero-fills) each page's stated uncompressed size
//! before it decompresses it, so a header stating 4 GiB costs 4 GiB, and a
//! page of zeros compressed 255:1 (LZ4) really is that big. Each page is
//! checked against the decode budget here, from its header alone.
//!
//! parquet keeps its Thrift decoder private; the part needed here is small:
//! the first three fields of a `PageHeader` (type, uncompressed and
//! compressed size, all i32), the rest of the struct skipped, in Thrift's
//! compact protocol.

/// One page as its header states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSize {
    /// `PageType::DICTIONARY_PAGE` (2): held while the data pages are read.
    pub dictionary: bool,
    pub uncompressed: u64,
    pub compressed: u64,
}

/// Nesting deeper than any page header has (statistics inside a data page
/// header inside the page header); a crafted header cannot recurse further.
const MAX_DEPTH: u32 = 16;

/// The pages of the chunk `data[start..start + len]`, in order, until its
/// bytes are used up.
pub fn pages(data: &[u8], start: u64, len: u64) -> Result<Vec<PageSize>, String> {
    let end = start
        .checked_add(len)
        .filter(|&e| e <= data.len() as u64)
        .ok_or_else(|| {
            format!(
                "the column chunk (offset {start}, {len} bytes) lies outside the {}-byte file",
                data.len()
            )
        })?;
    let mut at = start as usize;
    let mut out = Vec::new();
    while (at as u64) < end {
        let mut r = Compact {
            b: &data[..end as usize],
            at,
        };
        let page = r.page_header().map_err(|e| {
            format!(
                "page {} of the column chunk has an unreadable header ({e})",
                out.len()
            )
        })?;
        at =
            r.at.saturating_add(usize::try_from(page.compressed).unwrap_or(usize::MAX));
        out.push(page);
    }
    Ok(out)
}

/// A reader of Thrift's compact protocol over a slice (the footer's
/// row-group split reads with it too: [`super::footer`]).
pub(super) struct Compact<'a> {
    pub(super) b: &'a [u8],
    pub(super) at: usize,
}

pub(super) type R<T> = Result<T, &'static str>;

impl Compact<'_> {
    pub(super) fn byte(&mut self) -> R<u8> {
        let v = *self.b.get(self.at).ok_or("cut off")?;
        self.at += 1;
        Ok(v)
    }

    pub(super) fn varint(&mut self) -> R<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint longer than 64 bits")
    }

    fn zigzag(&mut self) -> R<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn skip_bytes(&mut self, n: u64) -> R<()> {
        let n = usize::try_from(n).map_err(|_| "a length past the chunk")?;
        if self.b.len() - self.at < n {
            return Err("a length past the chunk");
        }
        self.at += n;
        Ok(())
    }

    /// A field header: (id, type); `None` at the struct's end.
    pub(super) fn field(&mut self, last: &mut i16) -> R<Option<(i16, u8)>> {
        let h = self.byte()?;
        if h == 0 {
            return Ok(None);
        }
        let delta = h >> 4;
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).map_err(|_| "a field id past i16")?
        } else {
            last.checked_add(i16::from(delta))
                .ok_or("a field id past i16")?
        };
        *last = id;
        Ok(Some((id, h & 0x0f)))
    }

    pub(super) fn skip(&mut self, ty: u8, depth: u32) -> R<()> {
        if depth > MAX_DEPTH {
            return Err("nested too deep");
        }
        match ty {
            1 | 2 => Ok(()), // a bool field holds its value in its type
            3 => self.byte().map(drop),
            4..=6 => self.varint().map(drop),
            7 => self.skip_bytes(8),
            8 => {
                let n = self.varint()?;
                self.skip_bytes(n)
            }
            9 | 10 => {
                let h = self.byte()?;
                let n = match h >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                let elem = h & 0x0f;
                for _ in 0..n {
                    // Booleans in a list take a byte each.
                    self.skip(if matches!(elem, 1 | 2) { 3 } else { elem }, depth + 1)?;
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                let fix = |t: u8| if matches!(t, 1 | 2) { 3 } else { t };
                for _ in 0..n {
                    self.skip(fix(kv >> 4), depth + 1)?;
                    self.skip(fix(kv & 0x0f), depth + 1)?;
                }
                Ok(())
            }
            12 => {
                let mut last = 0;
                while let Some((_, t)) = self.field(&mut last)? {
                    self.skip(t, depth + 1)?;
                }
                Ok(())
            }
            _ => Err("an unknown field type"),
        }
    }

    fn size(&mut self, ty: u8) -> R<u64> {
        if ty != 5 {
            return Err("a size that is not an i32");
        }
        u64::try_from(self.zigzag()?).map_err(|_| "a negative size")
    }

    fn page_header(&mut self) -> R<PageSize> {
        let (mut kind, mut unc, mut comp) = (None, None, None);
        let mut last = 0;
        while let Some((id, ty)) = self.field(&mut last)? {
            match id {
                1 if ty == 5 => kind = Some(self.zigzag()?),
                2 => unc = Some(self.size(ty)?),
                3 => comp = Some(self.size(ty)?),
                _ => self.skip(ty, 1)?,
            }
        }
        match (kind, unc, comp) {
            (Some(k), Some(uncompressed), Some(compressed)) => Ok(PageSize {
                dictionary: k == 2,
                uncompressed,
                compressed,
            }),
            _ => Err("no type or sizes"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use std::sync::Arc;

    /// What parquet's own reader says of each page, against the walk.
    #[test]
    fn the_walk_finds_the_pages_parquet_reads() {
        let col: ArrayRef = Arc::new(Int64Array::from_iter_values((0..50_000).map(|i| i % 7)));
        for (dict, compression) in [
            (true, Compression::SNAPPY),
            (false, Compression::LZ4_RAW),
            (false, Compression::UNCOMPRESSED),
        ] {
            let batch = RecordBatch::try_from_iter([("c", col.clone())]).expect("batch");
            let props = WriterProperties::builder()
                .set_dictionary_enabled(dict)
                .set_compression(compression)
                .set_data_page_row_count_limit(4000)
                .set_write_batch_size(1000)
                .build();
            let mut buf = Vec::new();
            let mut w =
                ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).expect("writer");
            w.write(&batch).expect("write");
            w.close().expect("close");
            let bytes = bytes::Bytes::from(buf.clone());
            let reader = SerializedFileReader::new(bytes).expect("reader");
            let chunk = reader.metadata().row_group(0).column(0).clone();
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let walked = pages(&buf, start as u64, chunk.compressed_size() as u64).expect("walk");
            let mut pr = reader
                .get_row_group(0)
                .expect("group")
                .get_column_page_reader(0)
                .expect("pages");
            let mut theirs = Vec::new();
            while let Some(p) = pr.get_next_page().expect("page") {
                theirs.push(p.page_type() == parquet::basic::PageType::DICTIONARY_PAGE);
            }
            assert_eq!(
                walked.iter().map(|p| p.dictionary).collect::<Vec<_>>(),
                theirs
            );
            assert!(walked.len() > 3, "{walked:?}");
            let total: u64 = walked.iter().map(|p| p.uncompressed).sum();
            assert!(total <= chunk.uncompressed_size() as u64, "{total}");
            assert!(total > 0);
        }
    }

    #[test]
    fn crafted_headers_are_errors() {
        // Cut off, a negative size, nesting without end, a chunk past the file.
        assert!(pages(&[0x15], 0, 1).is_err());
        assert!(pages(&[0x15, 0x00, 0x15, 0x01, 0x15, 0x02, 0x00], 0, 7).is_err());
        assert!(pages(&[0x1c; 64], 0, 64).is_err());
        assert!(pages(&[0; 4], 2, 8).is_err());
        // type 0, 1 MiB uncompressed, 0 compressed: one page.
        let h = [0x15, 0x00, 0x15, 0x80, 0x80, 0x80, 0x01, 0x15, 0x00, 0x00];
        let p = pages(&h, 0, h.len() as u64).expect("one page");
        assert_eq!(
            p,
            vec![PageSize {
                dictionary: false,
                uncompressed: 1 << 20,
                compressed: 0
            }]
        );
    }
}
