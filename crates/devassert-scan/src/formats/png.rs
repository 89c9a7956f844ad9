//! PNG masks: 8/16-bit grayscale and palette images, read without any
//! transformation, so the class id is the pixel value or the palette index.

use super::reader::{Input, Reader};
use crate::dtype::Dtype;
use crate::error::{bad, within_budget, Result};
use crate::format::InputFormat;
use crate::mapped::Bytes;
use crate::options::ScanOptions;
use crate::values::{Layout, Part, Values};
use std::sync::Arc;

pub struct Png;

const DEFLATE_MAX_RATIO: usize = 1032;

impl Reader for Png {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(input.data()));
        decoder.set_transformations(png::Transformations::IDENTITY);
        let mut reader = decoder
            .read_info()
            .map_err(|e| bad(format!("not a readable PNG: {e}")))?;
        let packed = reader
            .output_buffer_size()
            .ok_or_else(|| bad("PNG dimensions too large"))?;
        let info = reader.info();
        let (w, h) = (info.width as usize, info.height as usize);
        let (depth, interlaced) = (info.bit_depth as u8, info.interlaced);
        let kind = match info.color_type {
            png::ColorType::Grayscale => "gray",
            png::ColorType::Indexed => "palette",
            other => {
                return Err(bad(format!(
                    "a {other:?} image is not a class-id mask (masks are grayscale or palette PNGs; colors need a color→class map first)"
                )))
            }
        };
        // Deflate expands at most ~1032:1, so a header that states more pixel
        // bytes than that is corrupt; saying so beats allocating them.
        let room = input.data().len().saturating_mul(DEFLATE_MAX_RATIO);
        if packed > room {
            return Err(bad(format!(
                "the header states a {w}x{h} image ({packed} bytes of pixels), more than the file's {} bytes can hold",
                input.data().len()
            )));
        }
        // One value per pixel (two bytes at 16 bits) is what the scan keeps;
        // 1/2/4-bit pixels unpack to 8 times their packed size at most.
        let width = if depth == 16 { 2 } else { 1 };
        let value_bytes = (w as u64) * (h as u64) * width;
        // Rows are unpacked as they are inflated; an interlaced image needs
        // its whole packed frame first.
        let needed = value_bytes + if interlaced { packed as u64 } else { 0 };
        within_budget(
            &format!("a {w}x{h} {depth}-bit PNG"),
            needed,
            opts.decode_budget,
        )?;
        let mut out = Vec::with_capacity(value_bytes as usize);
        if interlaced {
            let mut frame = vec![0u8; packed];
            let line = reader
                .next_frame(&mut frame)
                .map_err(|e| bad(format!("truncated or corrupt PNG data: {e}")))?
                .line_size;
            for row in frame.chunks(line).take(h) {
                unpack(row, w, depth, &mut out)?;
            }
        } else {
            while let Some(row) = reader
                .next_row()
                .map_err(|e| bad(format!("truncated or corrupt PNG data: {e}")))?
            {
                unpack(row.data(), w, depth, &mut out)?;
            }
        }
        if out.len() as u64 != value_bytes {
            return Err(bad(format!(
                "truncated PNG data: {} of {h} rows",
                out.len() / (w * width as usize).max(1)
            )));
        }
        let (dtype, big_endian) = if depth == 16 {
            (Dtype::U16, true)
        } else {
            (Dtype::U8, false)
        };
        let values = Values {
            bytes: Arc::new(Bytes::Heap(out)),
            start: 0,
            len: w * h,
            dtype,
            big_endian,
        };
        Ok(vec![Part {
            name: None,
            format: InputFormat::Png,
            dtype_label: format!("{kind} {depth}-bit"),
            data: values.into(),
            layout: Layout::Shape {
                dims: vec![h as u64, w as u64],
                fortran: false,
            },
            shape: Some(vec![h as u64, w as u64]),
        }])
    }
}

/// Append one row's `w` values: 16- and 8-bit rows as they are, 1/2/4-bit
/// pixels (packed most significant first) one byte each.
fn unpack(row: &[u8], w: usize, depth: u8, out: &mut Vec<u8>) -> Result<()> {
    let short = || bad("truncated or corrupt PNG data: a row is shorter than the image is wide");
    match depth {
        16 => out.extend_from_slice(row.get(..w * 2).ok_or_else(short)?),
        8 => out.extend_from_slice(row.get(..w).ok_or_else(short)?),
        bits => {
            let bits = bits as usize;
            let per = 8 / bits;
            let mask = (1u8 << bits) - 1;
            let row = row.get(..w.div_ceil(per)).ok_or_else(short)?;
            for x in 0..w {
                let shift = 8 - bits * (x % per + 1);
                out.push((row[x / per] >> shift) & mask);
            }
        }
    }
    Ok(())
}
