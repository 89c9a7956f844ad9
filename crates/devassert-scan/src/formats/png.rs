//! PNG masks: 8/16-bit grayscale and palette images, read without any
//! transformation, so the class id is the pixel value or the palette index.

use super::{Input, Reader};
use crate::error::{bad, Result};
use crate::options::{Dtype, InputFormat, ScanOptions};
use crate::values::{Bytes, Layout, Part, Values};
use std::sync::Arc;

pub struct Png;

const DEFLATE_MAX_RATIO: usize = 1032;

impl Reader for Png {
    fn read(&self, input: &Input<'_>, _opts: &ScanOptions) -> Result<Vec<Part>> {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(input.data()));
        decoder.set_transformations(png::Transformations::IDENTITY);
        let mut reader = decoder
            .read_info()
            .map_err(|e| bad(format!("not a readable PNG: {e}")))?;
        let size = reader
            .output_buffer_size()
            .ok_or_else(|| bad("PNG dimensions too large"))?;
        // Deflate expands at most ~1032:1, so a header that states more pixel
        // bytes than that is corrupt; saying so beats allocating them.
        let room = input.data().len().saturating_mul(DEFLATE_MAX_RATIO);
        if size > room {
            let i = reader.info();
            return Err(bad(format!(
                "the header states a {}x{} image ({size} bytes of pixels), more than the file's {} bytes can hold",
                i.width,
                i.height,
                input.data().len()
            )));
        }
        let mut buf = vec![0u8; size];
        let info = reader
            .next_frame(&mut buf)
            .map_err(|e| bad(format!("truncated or corrupt PNG data: {e}")))?;
        let (w, h) = (info.width as usize, info.height as usize);
        let kind = match info.color_type {
            png::ColorType::Grayscale => "gray",
            png::ColorType::Indexed => "palette",
            other => {
                return Err(bad(format!(
                    "a {other:?} image is not a class-id mask (masks are grayscale or palette PNGs; colors need a color→class map first)"
                )))
            }
        };
        let depth = info.bit_depth as u8;
        let line = info.line_size;
        let (bytes, dtype, big_endian) = match depth {
            16 => {
                buf.truncate(line * h);
                (buf, Dtype::U16, true)
            }
            8 => {
                let mut out = Vec::with_capacity(w * h);
                for y in 0..h {
                    out.extend_from_slice(&buf[y * line..y * line + w]);
                }
                (out, Dtype::U8, false)
            }
            bits => {
                // 1/2/4-bit pixels, packed most significant first.
                let bits = bits as usize;
                let per = 8 / bits;
                let mask = (1u8 << bits) - 1;
                let mut out = Vec::with_capacity(w * h);
                for y in 0..h {
                    let row = &buf[y * line..(y + 1) * line];
                    for x in 0..w {
                        let byte = row[x / per];
                        let shift = 8 - bits * (x % per + 1);
                        out.push((byte >> shift) & mask);
                    }
                }
                (out, Dtype::U8, false)
            }
        };
        let values = Values {
            bytes: Arc::new(Bytes::Heap(bytes)),
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
