//! Arrow IPC framing, checked before arrow's decoders see it.
//!
//! arrow-ipc trusts the lengths a file states: a garbage metadata length
//! allocates that many bytes (2 GiB from a 5-byte file, found by fuzzing) and
//! a buffer that points past its message body panics. So every message's
//! frame, body and buffer ranges are bounds-checked against the bytes we
//! hold first; the decoders then slice the mapped file (no copy, no
//! allocation from a stated length). What arrow still panics on inside a
//! message (a schema type it cannot represent, a validity buffer shorter
//! than its array) is contained and reported as corrupt data.

use crate::error::{bad, within_budget, Result};
use crate::mapped::Bytes;
use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::reader::{read_footer_length, FileDecoder, StreamDecoder};
use arrow_ipc::{root_as_footer, root_as_message, Block, MessageHeader};
use arrow_schema::{ArrowError, SchemaRef};
use devassert_core::contain::contain;
use std::ptr::NonNull;
use std::sync::Arc;

const CONTINUATION: u32 = 0xFFFF_FFFF;

/// Memory a byte of IPC metadata may take decoded (its strings copied out,
/// with their map's overhead).
const DECODED_PER_BYTE: u64 = 2;

pub type Batches = Box<dyn Iterator<Item = Result<RecordBatch>>>;

/// The schema and batches of an IPC stream (`datasets`' `data-*.arrow`).
pub fn stream(bytes: &Arc<Bytes>, budget: u64) -> Result<(SchemaRef, Batches)> {
    let data = bytes.as_slice();
    // Walk every frame first, so the decoder only ever gets whole, in-range
    // messages; the walk stops at the end-of-stream marker or the file's end.
    let mut pos = 0;
    let mut n = 0;
    while let Some(frame) = frame_at(data, pos, n, budget)? {
        let end = frame.meta_end + frame.body_len;
        if end > data.len() {
            return Err(bad(format!(
                "Arrow IPC message {n} states a {}-byte body, but the file ends {} bytes after its header",
                frame.body_len,
                data.len() - frame.meta_end
            )));
        }
        check_buffers(&frame, frame.body_len, n)?;
        pos = end;
        n += 1;
    }
    let mut rest = buffer(bytes).slice_with_length(0, pos);
    let mut decoder = StreamDecoder::new();
    let first = decode(&mut decoder, &mut rest)?;
    let schema = decoder
        .schema()
        .ok_or_else(|| bad("not an Arrow IPC stream: no schema message"))?;
    let rest_batches = std::iter::from_fn(move || decode(&mut decoder, &mut rest).transpose());
    Ok((
        schema,
        Box::new(first.map(Ok).into_iter().chain(rest_batches)),
    ))
}

/// The schema and batches of an IPC file (`ARROW1` … footer … `ARROW1`).
pub fn file(bytes: &Arc<Bytes>, budget: u64) -> Result<(SchemaRef, Batches)> {
    let data = bytes.as_slice();
    let n = data.len();
    let trailer: [u8; 10] = data
        .get(n.saturating_sub(10)..)
        .and_then(|t| t.try_into().ok())
        .filter(|_| n >= 8 + 10)
        .ok_or_else(|| {
            bad(format!(
                "Arrow IPC file of {n} bytes is too short for its footer"
            ))
        })?;
    let footer_len = read_footer_length(trailer).map_err(corrupt)?;
    let footer_start = (n - 10)
        .checked_sub(footer_len)
        .filter(|&s| s >= 8)
        .ok_or_else(|| {
            bad(format!(
                "the footer states {footer_len} bytes, more than the {n}-byte file holds"
            ))
        })?;
    within_budget(
        "the Arrow IPC footer (its schema and metadata, decoded)",
        (footer_len as u64).saturating_mul(DECODED_PER_BYTE),
        budget,
    )?;
    let footer = root_as_footer(&data[footer_start..n - 10])
        .map_err(|e| bad(format!("unreadable Arrow IPC footer: {e}")))?;
    let fb_schema = footer
        .schema()
        .ok_or_else(|| bad("the Arrow IPC footer has no schema"))?;
    let schema: SchemaRef =
        Arc::new(contain(|| arrow_ipc::convert::fb_to_schema(fb_schema)).map_err(panicked)?);
    let buf = buffer(bytes);
    let block_data = |block: &Block, n: usize| -> Result<Buffer> {
        let (offset, meta, body) = (
            usize::try_from(block.offset()).ok(),
            usize::try_from(block.metaDataLength()).ok(),
            usize::try_from(block.bodyLength()).ok(),
        );
        let range = offset.zip(meta).zip(body).and_then(|((o, m), b)| {
            let end = o.checked_add(m)?.checked_add(b)?;
            (end <= footer_start).then_some((o, m, b))
        });
        let (offset, meta, body) = range.ok_or_else(|| {
            bad(format!(
                "block {n} (offset {}, {} + {} bytes) lies outside the file's {footer_start} data bytes",
                block.offset(),
                block.metaDataLength(),
                block.bodyLength()
            ))
        })?;
        let slice = &data[offset..offset + meta];
        let frame = frame_at(slice, 0, n, budget)?
            .ok_or_else(|| bad(format!("block {n} holds no message")))?;
        check_buffers(&frame, body, n)?;
        Ok(buf.slice_with_length(offset, meta + body))
    };
    let mut decoder = FileDecoder::new(schema.clone(), footer.version());
    for (i, block) in footer.dictionaries().iter().flatten().enumerate() {
        let data = block_data(block, i)?;
        contain(|| decoder.read_dictionary(block, &data))
            .map_err(panicked)?
            .map_err(corrupt)?;
    }
    let blocks: Vec<Block> = footer
        .recordBatches()
        .map(|b| b.iter().copied().collect())
        .unwrap_or_default();
    let mut checked = Vec::with_capacity(blocks.len());
    for (i, block) in blocks.iter().enumerate() {
        checked.push((*block, block_data(block, i)?));
    }
    let batches = checked.into_iter().filter_map(move |(block, data)| {
        contain(|| decoder.read_record_batch(&block, &data))
            .map_err(panicked)
            .and_then(|r| r.map_err(corrupt))
            .transpose()
    });
    Ok((schema, Box::new(batches)))
}

/// The next batch of a stream whose frames were checked.
fn decode(decoder: &mut StreamDecoder, rest: &mut Buffer) -> Result<Option<RecordBatch>> {
    contain(|| decoder.decode(rest))
        .map_err(panicked)?
        .map_err(corrupt)
}

fn panicked(message: String) -> crate::error::ScanError {
    bad(format!(
        "corrupt Arrow IPC data (arrow could not decode it: {message})"
    ))
}

fn corrupt(e: ArrowError) -> crate::error::ScanError {
    bad(format!("corrupt Arrow IPC data: {e}"))
}

/// One message's header, as far as the bounds checks need it.
struct Frame {
    /// Where the body starts (just past the metadata).
    meta_end: usize,
    body_len: usize,
    /// The end of the furthest buffer the metadata points at, in the body.
    buffers_end: usize,
}

/// The message framed at `pos`: an optional continuation marker, a 4-byte
/// metadata length, the flatbuffer. `None` at the end of the data or at the
/// end-of-stream marker (length 0).
fn frame_at(data: &[u8], pos: usize, n: usize, budget: u64) -> Result<Option<Frame>> {
    let word = |at: usize| -> Option<u32> {
        let b: [u8; 4] = data.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(u32::from_le_bytes(b))
    };
    if pos == data.len() {
        return Ok(None);
    }
    let truncated = || {
        bad(format!(
            "Arrow IPC message {n} is cut off in its length prefix"
        ))
    };
    let mut at = pos;
    let mut len = word(at).ok_or_else(truncated)?;
    if len == CONTINUATION {
        at += 4;
        len = word(at).ok_or_else(truncated)?;
    }
    if len == 0 {
        return Ok(None);
    }
    let start = at + 4;
    let meta = usize::try_from(len)
        .ok()
        .and_then(|l| data.get(start..start.checked_add(l)?))
        .ok_or_else(|| {
            bad(format!(
                "Arrow IPC message {n} states {len} bytes of metadata, but only {} remain in the file",
                data.len() - start.min(data.len())
            ))
        })?;
    // A schema's key-value metadata is copied out when decoded (500 MB of
    // it took 984 MB): refused past the budget before.
    within_budget(
        &format!("Arrow IPC message {n}'s metadata (decoded)"),
        u64::from(len).saturating_mul(DECODED_PER_BYTE),
        budget,
    )?;
    let message = root_as_message(meta).map_err(|e| {
        bad(format!(
            "Arrow IPC message {n} has unreadable metadata: {e}"
        ))
    })?;
    let body_len = usize::try_from(message.bodyLength()).map_err(|_| {
        bad(format!(
            "Arrow IPC message {n} states a negative body length"
        ))
    })?;
    let batch = match message.header_type() {
        MessageHeader::RecordBatch => message.header_as_record_batch(),
        MessageHeader::DictionaryBatch => {
            message.header_as_dictionary_batch().and_then(|d| d.data())
        }
        _ => None,
    };
    let mut buffers_end = 0usize;
    for b in batch.iter().flat_map(|b| b.buffers()).flatten() {
        let end = usize::try_from(b.offset())
            .ok()
            .zip(usize::try_from(b.length()).ok())
            .and_then(|(o, l)| o.checked_add(l))
            .ok_or_else(|| {
                bad(format!(
                    "Arrow IPC message {n} has a buffer with a negative offset or length"
                ))
            })?;
        buffers_end = buffers_end.max(end);
    }
    inflated_within_budget(data, start + meta.len(), batch.as_ref(), n, budget)?;
    Ok(Some(Frame {
        meta_end: start + meta.len(),
        body_len,
        buffers_end,
    }))
}

/// A compressed message's buffers each start with their inflated length
/// (arrow allocates it before it decompresses): their sum is held to the
/// budget before the decoder sees them (32 MB of LZ4 zeros fit in kilobytes).
fn inflated_within_budget(
    data: &[u8],
    body: usize,
    batch: Option<&arrow_ipc::RecordBatch>,
    n: usize,
    budget: u64,
) -> Result<()> {
    let Some(batch) = batch.filter(|b| b.compression().is_some()) else {
        return Ok(());
    };
    let mut inflated = 0u64;
    for b in batch.buffers().into_iter().flatten() {
        let at = usize::try_from(b.offset())
            .ok()
            .and_then(|o| body.checked_add(o));
        let prefix = at.and_then(|a| data.get(a..a.checked_add(8)?));
        if let Some(p) = prefix.filter(|_| b.length() >= 8) {
            let stated = i64::from_le_bytes(p.try_into().unwrap_or([0; 8]));
            // -1: stored uncompressed, the buffer's own length.
            let len = u64::try_from(stated).unwrap_or(b.length() as u64);
            inflated = inflated.saturating_add(len);
        }
    }
    within_budget(
        &format!("Arrow IPC message {n} (compressed: its buffers inflated)"),
        inflated,
        budget,
    )
}

fn check_buffers(frame: &Frame, body: usize, n: usize) -> Result<()> {
    if frame.buffers_end > body {
        return Err(bad(format!(
            "Arrow IPC message {n} points at bytes up to {} of a {body}-byte body",
            frame.buffers_end
        )));
    }
    Ok(())
}

/// The held bytes as an arrow [`Buffer`], without a copy.
fn buffer(bytes: &Arc<Bytes>) -> Buffer {
    let data = bytes.as_slice();
    let ptr = NonNull::from(data).cast::<u8>();
    // SAFETY: `ptr` and `len` describe `bytes`' slice, which neither moves
    // nor changes while the Arc, handed over as the buffer's owner, lives.
    unsafe { Buffer::from_custom_allocation(ptr, data.len(), bytes.clone()) }
}
