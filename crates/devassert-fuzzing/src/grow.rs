//! Inputs grown to any size, one generator per format family, each written
//! straight to disk (the generator holds one row or chunk at a time), for
//! the size-scaling test (`tests/scaling.rs`): devassert's memory must stay
//! within its budget and its time grow linearly, however large they get.
//! Each input holds one planted bad value, so a reader that skips data
//! does not pass.

use std::fs::File;
use std::io::{BufWriter, Result, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The valid range of every generated id: `[0, VOCAB)`; the planted one is
/// `VOCAB`.
pub const VOCAB: i64 = 50_000;

/// A generated input: what to pass to devassert.
pub struct Grown {
    pub path: PathBuf,
    /// What reads it.
    pub reader: Reader,
}

/// Which of devassert's readers an input is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Scan,
    Check,
    Explain,
}

/// The families, by name, and their generators: `(dir, bytes)` → input.
pub type Generator = fn(&Path, u64) -> Result<Grown>;

pub const FAMILIES: &[(&str, Generator)] = &[
    ("json_config", json_config),
    ("tokenizer_json", tokenizer_json),
    ("jsonl_line", jsonl_line),
    ("csv_cell", csv_cell),
    ("parquet", parquet),
    ("arrow_stream", arrow_stream),
    ("npy", npy),
    ("megatron", megatron),
    ("png", png_mask),
    ("log", log),
];

fn id(i: u64) -> i64 {
    (i.wrapping_mul(2_654_435_761) % VOCAB as u64) as i64
}

fn writer(path: &Path) -> Result<BufWriter<File>> {
    Ok(BufWriter::with_capacity(1 << 20, File::create(path)?))
}

/// A model folder whose `config.json` is `bytes` long: the size is in its
/// `id2label` (only counted by devassert).
pub fn json_config(dir: &Path, bytes: u64) -> Result<Grown> {
    let model = dir.join("model-config");
    std::fs::create_dir_all(&model)?;
    let mut w = writer(&model.join("config.json"))?;
    write!(
        w,
        "{{\"model_type\":\"bert\",\"vocab_size\":{VOCAB},\"id2label\":{{"
    )?;
    let (mut i, mut n) = (0u64, 0u64);
    while n < bytes {
        let entry = format!("{}\"{i}\":\"LABEL_{i}\"", if i == 0 { "" } else { "," });
        n += entry.len() as u64;
        w.write_all(entry.as_bytes())?;
        i += 1;
    }
    write!(w, "}}}}")?;
    w.flush()?;
    Ok(Grown {
        path: model,
        reader: Reader::Check,
    })
}

/// A model folder whose `tokenizer.json` is `bytes` long (a BPE vocabulary
/// and merges), read by the streaming pass at any size past 4 MiB.
pub fn tokenizer_json(dir: &Path, bytes: u64) -> Result<Grown> {
    let model = dir.join("model-tokenizer");
    std::fs::create_dir_all(&model)?;
    let mut w = writer(&model.join("tokenizer.json"))?;
    write!(
        w,
        "{{\"version\":\"1.0\",\"added_tokens\":[],\"post_processor\":null,\"model\":{{\"type\":\"BPE\",\"vocab\":{{"
    )?;
    // Half the bytes in the vocabulary (at most 3M entries), half in merges.
    let (mut i, mut n) = (0u64, 0u64);
    while n < bytes / 2 && i < 3_000_000 {
        let entry = format!("{}\"tok{i:08}\":{i}", if i == 0 { "" } else { "," });
        n += entry.len() as u64;
        w.write_all(entry.as_bytes())?;
        i += 1;
    }
    write!(w, "}},\"merges\":[")?;
    let mut j = 0u64;
    while n < bytes {
        let entry = format!(
            "{}\"tok{j:08} tok{:08}\"",
            if j == 0 { "" } else { "," },
            j + 1
        );
        n += entry.len() as u64;
        w.write_all(entry.as_bytes())?;
        j += 1;
    }
    write!(w, "]}}}}")?;
    w.flush()?;
    Ok(Grown {
        path: model,
        reader: Reader::Check,
    })
}

/// A JSONL file of `bytes` whose first line is one huge array of ids.
pub fn jsonl_line(dir: &Path, bytes: u64) -> Result<Grown> {
    let path = dir.join("huge-line.jsonl");
    let mut w = writer(&path)?;
    write!(w, "{{\"text\":\"t\",\"input_ids\":[")?;
    let (mut i, mut n) = (0u64, 0u64);
    while n < bytes {
        let s = format!("{},", id(i));
        n += s.len() as u64;
        w.write_all(s.as_bytes())?;
        i += 1;
    }
    writeln!(w, "{VOCAB}]}}")?;
    writeln!(w, "{{\"input_ids\":[1,2,3]}}")?;
    w.flush()?;
    Ok(Grown {
        path,
        reader: Reader::Scan,
    })
}

/// A CSV file of `bytes` whose first text cell holds nearly all of it.
pub fn csv_cell(dir: &Path, bytes: u64) -> Result<Grown> {
    let path = dir.join("huge-cell.csv");
    let mut w = writer(&path)?;
    write!(w, "text,input_ids\n\"")?;
    let chunk = vec![b'x'; 1 << 16];
    let mut n = 0u64;
    while n < bytes {
        w.write_all(&chunk)?;
        n += chunk.len() as u64;
    }
    write!(w, "\",1\nshort,{VOCAB}\n")?;
    w.flush()?;
    Ok(Grown {
        path,
        reader: Reader::Scan,
    })
}

/// Hands `write` batches of ids until about `bytes` of them (8 bytes each)
/// were written: the Parquet and Arrow generators differ only in the writer.
fn each_batch<E>(
    bytes: u64,
    mut write: impl FnMut(&arrow_array::RecordBatch) -> std::result::Result<(), E>,
) -> Result<()>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let mut start = 0u64;
    while start * 8 < bytes {
        write(&ids_batch(start, ROWS)).map_err(std::io::Error::other)?;
        start += ROWS as u64;
    }
    Ok(())
}

fn ids_batch(start: u64, rows: usize) -> arrow_array::RecordBatch {
    use arrow_array::{Int64Array, RecordBatch};
    let ids: Int64Array = (0..rows as u64)
        .map(|k| {
            let i = start + k;
            Some(if i == 7 { VOCAB } else { id(i) })
        })
        .collect();
    RecordBatch::try_from_iter([("input_ids", Arc::new(ids) as arrow_array::ArrayRef)])
        .expect("one column")
}

/// Rows of ids written a batch at a time until the file holds `bytes`.
const ROWS: usize = 1 << 16;

/// A Parquet file of about `bytes` of int64 ids, in many row groups.
pub fn parquet(dir: &Path, bytes: u64) -> Result<Grown> {
    let path = dir.join("ids.parquet");
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(ROWS * 4))
        .set_dictionary_enabled(false)
        .build();
    let schema = ids_batch(0, 1).schema();
    let mut w = parquet::arrow::ArrowWriter::try_new(File::create(&path)?, schema, Some(props))
        .map_err(std::io::Error::other)?;
    each_batch(bytes, |b| w.write(b))?;
    w.close().map_err(std::io::Error::other)?;
    Ok(Grown {
        path,
        reader: Reader::Scan,
    })
}

/// An Arrow IPC stream (`datasets`' `data-*.arrow`) of about `bytes`.
pub fn arrow_stream(dir: &Path, bytes: u64) -> Result<Grown> {
    let path = dir.join("data-00000-of-00001.arrow");
    let schema = ids_batch(0, 1).schema();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(writer(&path)?, &schema)
        .map_err(std::io::Error::other)?;
    each_batch(bytes, |b| w.write(b))?;
    w.finish().map_err(std::io::Error::other)?;
    Ok(Grown {
        path,
        reader: Reader::Scan,
    })
}

/// A `.npy` of int32 ids, `bytes` long.
pub fn npy(dir: &Path, bytes: u64) -> Result<Grown> {
    let path = dir.join("ids.npy");
    let n = (bytes / 4).max(8);
    let mut w = writer(&path)?;
    let header = format!("{{'descr': '<i4', 'fortran_order': False, 'shape': ({n},), }}");
    let pad = 64 - (10 + header.len() + 1) % 64;
    let header = format!("{header}{}\n", " ".repeat(pad));
    w.write_all(b"\x93NUMPY\x01\x00")?;
    w.write_all(&(header.len() as u16).to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    write_tokens(&mut w, n)?;
    Ok(Grown {
        path,
        reader: Reader::Scan,
    })
}

/// `n` int32 token ids, one of them (the middle one) past the vocabulary,
/// written in 1 MiB chunks.
fn write_tokens(w: &mut impl Write, n: u64) -> Result<()> {
    let mut chunk = Vec::with_capacity(1 << 20);
    for i in 0..n {
        let v = if i == n / 2 { VOCAB } else { id(i) };
        chunk.extend((v as i32).to_le_bytes());
        if chunk.len() >= 1 << 20 {
            w.write_all(&chunk)?;
            chunk.clear();
        }
    }
    w.write_all(&chunk)?;
    w.flush()?;
    Ok(())
}

/// Tokens in each sequence of the Megatron dataset, and sequences in each
/// document.
const MEGATRON_SEQ: u64 = 1024;
const MEGATRON_DOC: u64 = 4;

/// A Megatron-LM dataset of about `bytes` of int32 tokens: the `.bin`, and
/// its `.idx` (`MMIDIDX`, version 1: sequence lengths, byte starts and
/// document boundaries), each written as it is made.
pub fn megatron(dir: &Path, bytes: u64) -> Result<Grown> {
    let path = dir.join("corpus_text_document.bin");
    let seqs = (bytes / 4 / MEGATRON_SEQ).max(1);
    let n = seqs * MEGATRON_SEQ;
    let mut w = writer(&path)?;
    write_tokens(&mut w, n)?;
    let docs = seqs.div_ceil(MEGATRON_DOC);
    let mut w = writer(&dir.join("corpus_text_document.idx"))?;
    w.write_all(b"MMIDIDX\x00\x00")?;
    w.write_all(&1u64.to_le_bytes())?;
    w.write_all(&[4u8])?; // int32
    w.write_all(&seqs.to_le_bytes())?;
    w.write_all(&(docs + 1).to_le_bytes())?;
    for _ in 0..seqs {
        w.write_all(&(MEGATRON_SEQ as i32).to_le_bytes())?;
    }
    for s in 0..seqs {
        w.write_all(&((s * MEGATRON_SEQ * 4) as i64).to_le_bytes())?;
    }
    for d in 0..=docs {
        w.write_all(&((d * MEGATRON_DOC).min(seqs) as i64).to_le_bytes())?;
    }
    w.flush()?;
    Ok(Grown {
        path,
        reader: Reader::Scan,
    })
}

/// A mask's pixels are decoded whole (one value each): past this, a mask is
/// refused by the decode budget, as it should be, and grows no further here.
const PNG_PIXEL_BYTES: u64 = 64 << 20;

/// A 16-bit grayscale PNG label mask of about `bytes` of pixels (at most
/// [`PNG_PIXEL_BYTES`]), compressed (a segmentation mask: class ids in runs).
pub fn png_mask(dir: &Path, bytes: u64) -> Result<Grown> {
    let path = dir.join("mask.png");
    let width = 4096u32;
    let bytes = bytes.min(PNG_PIXEL_BYTES);
    let height = (bytes / (2 * width as u64)).max(1) as u32;
    let mut enc = png::Encoder::new(writer(&path)?, width, height);
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Sixteen);
    let mut w = enc.write_header().map_err(std::io::Error::other)?;
    let mut stream = w.stream_writer().map_err(std::io::Error::other)?;
    let mut row = vec![0u8; width as usize * 2];
    for y in 0..height {
        for x in 0..width as usize {
            let class: u16 = if y == height / 2 && x == 7 {
                VOCAB as u16 + 10_000
            } else {
                ((x / 512) as u16 + (y / 256) as u16) % 150
            };
            row[2 * x..2 * x + 2].copy_from_slice(&class.to_be_bytes());
        }
        stream.write_all(&row)?;
    }
    stream.finish().map_err(std::io::Error::other)?;
    Ok(Grown {
        path,
        reader: Reader::Scan,
    })
}

/// A crash log of `bytes`: training progress, warnings and tracebacks, with
/// one device-side assertion near the end.
pub fn log(dir: &Path, bytes: u64) -> Result<Grown> {
    let path = dir.join("train.log");
    let mut w = writer(&path)?;
    let block = "\
step 1200/50000 loss=2.3141 lr=3.0e-4 tok/s=48211\n\
/usr/lib/python3/site-packages/torch/nn/modules/module.py:1736: UserWarning: something minor\n  warnings.warn(\n\
Traceback (most recent call last):\n  File \"/data/loader.py\", line 12, in <module>\n    import optional_thing\nModuleNotFoundError: No module named 'optional_thing'\n";
    let mut n = 0u64;
    while n < bytes {
        w.write_all(block.as_bytes())?;
        n += block.len() as u64;
    }
    w.write_all(b"../aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [3,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n\
Traceback (most recent call last):\n  File \"train.py\", line 88, in forward\n    x = self.embed(ids)\n\
RuntimeError: CUDA error: device-side assert triggered\n")?;
    w.flush()?;
    Ok(Grown {
        path,
        reader: Reader::Explain,
    })
}
