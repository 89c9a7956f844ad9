"""Writes the scan test inputs with the real writers (numpy, pyarrow,
Pillow, safetensors) into OUTDIR. Every file plants known bad values,
ignored sentinels and edge values; scan.rs asserts the exact places.

usage: gen.py OUTDIR KIND...   (KIND: see WRITERS)
"""
import json
import os
import sys

import numpy as np

OUT = sys.argv[1]


def path(name):
    return os.path.join(OUT, name)


def raw():
    # vocab 50: 0 and 49 are valid edges, 50 is one past, 65535 the dtype max.
    a = np.full(1000, 7, dtype=np.uint16)
    a[0], a[1], a[2], a[500], a[999] = 0, 49, 50, 65535, 49
    a.tofile(path("tokens.bin"))
    b = np.full(10, 3, dtype=np.int32)
    b[3], b[4], b[9] = -1, np.iinfo(np.int32).max, -100
    b.tofile(path("tokens_i32.tok"))


def llmc():
    for version, dtype, bad_at, bad in [(1, np.uint16, 5, 50257), (2, np.uint32, 6, 100000)]:
        toks = np.arange(20, dtype=dtype)
        toks[bad_at] = bad
        header = np.zeros(256, dtype=np.int32)
        header[:3] = [20240520, version, len(toks)]
        with open(path(f"llmc_v{version}.bin"), "wb") as f:
            f.write(header.tobytes() + toks.tobytes())


def npy():
    c = np.zeros((3, 4), dtype=np.int64)
    c[1, 2], c[2, 3], c[0, 0] = -1, 10, 9  # vocab 10: -1 and 10 bad, 9 the last valid
    np.save(path("c_order.npy"), c)
    f = np.asfortranarray(np.zeros((3, 4), dtype=np.int16))
    f[2, 1], f[0, 3] = 10, 32767
    np.save(path("fortran.npy"), f)
    assert np.load(path("fortran.npy")).flags.f_contiguous
    be = np.array([1, 2, 11, 3], dtype=">u2")
    np.save(path("big_endian.npy"), be)
    cube = np.zeros((2, 3, 4), dtype=np.uint8)
    cube[1, 2, 3] = 255
    np.save(path("cube.npy"), cube)


def npz():
    np.savez(path("stored.npz"), ids=np.array([1, 2, 10, 4], dtype=np.int32), weights=np.ones(3, dtype=np.float32))
    np.savez_compressed(path("deflated.npz"), labels=np.array([[0, 1], [12, 3]], dtype=np.int64))


def safetensors():
    from safetensors.numpy import save_file

    ids = np.arange(12, dtype=np.int64).reshape(3, 4)  # vocab 10: 10 at [2, 2], 11 at [2, 3]
    save_file({"input_ids": ids, "weight": np.zeros((2, 2), dtype=np.float32), "mask": np.array([0, 1, -1], dtype=np.int8)}, path("batch.safetensors"))


def arrow():
    import pyarrow as pa

    t = pa.table(
        {
            "input_ids": pa.array([[1, 2, 3], [4, 10], None, [-1, 5]], pa.list_(pa.int32())),
            "label": pa.array([0, 3, 1, 2], pa.int64()),
            "text": ["a", "b", "c", "d"],
        }
    )
    with pa.ipc.new_file(path("table.arrow"), t.schema) as w:
        w.write_table(t)
    # The Hugging Face datasets cache: an IPC *stream* with HF schema metadata, several batches.
    hf = t.replace_schema_metadata({"huggingface": json.dumps({"info": {"features": {}}})})
    os.makedirs(path("hf_cache/train"), exist_ok=True)
    with pa.ipc.new_stream(path("hf_cache/train/data-00000-of-00001.arrow"), hf.schema) as w:
        for b in hf.to_batches(max_chunksize=2):
            w.write_batch(b)
    with open(path("hf_cache/train/state.json"), "w") as f:
        json.dump({"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}, f)


def parquet():
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.table(
        {
            "input_ids": pa.array([[1, 2], [3, 10, 4], [], [5, 6, 7, 11]], pa.list_(pa.int64())),
            "label": pa.array([0, 2, 3, 1], pa.int16()),
            # Nulls are skipped, not read as values; a place keeps its row.
            "label_nulls": pa.array([None, 1, None, 4], pa.int8()),
            "ids_nulls": pa.array([[1, None, 12], None, [None], [13]], pa.list_(pa.int32())),
        }
    )
    pq.write_table(t, path("table.parquet"), row_group_size=2)


def jsonl():
    rows = [
        {"input_ids": [1, 2, 3], "meta": {"label": 0}},
        {"input_ids": [4, 10], "meta": {"label": 5}},
        {"input_ids": [], "meta": {"label": -100}},
        {"input_ids": [-1, 9, 9, 9, 9], "meta": {"label": 2}},
    ]
    with open(path("rows.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def csv():
    with open(path("labels.csv"), "w") as f:
        f.write("id,label\n0,1\n1,3\n2,-1\n3,2\n")
    with open(path("labels.tsv"), "w") as f:
        f.write("label\tid\n0\t0\n255\t1\n2\t2\n")


def png():
    from PIL import Image

    gray = np.zeros((4, 6), dtype=np.uint8)
    gray[0, :] = 255  # VOC-style border
    gray[2, 3] = 21  # classes 21: one past
    gray[3, 5] = 20  # last valid
    img = Image.fromarray(gray)
    assert img.mode == "L"
    img.save(path("mask_gray.png"))
    wide = np.zeros((3, 5), dtype=np.uint16)
    wide[1, 4] = 300
    img = Image.fromarray(wide)
    assert img.mode == "I;16", img.mode
    img.save(path("mask_16.png"))
    pal = Image.new("P", (3, 2))
    pal.putdata([0, 1, 2, 22, 255, 1])
    pal.putpalette([v for i in range(256) for v in (i, 255 - i, (7 * i) % 256)])
    pal.save(path("mask_palette.png"))
    assert Image.open(path("mask_palette.png")).mode == "P"
    Image.new("RGB", (2, 2)).save(path("photo.png"))


def _png_stream(name, width, height, depth, row):
    """A grayscale PNG whose rows are all `row` (filter byte included),
    deflated as it is written: a few MB on disk, any size inflated."""
    import struct
    import zlib

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    z = zlib.compressobj(9)
    idat = bytearray()
    for _ in range(height):
        idat += z.compress(row)
    idat += z.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, depth, 0, 0, 0, 0)
    with open(path(name), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", bytes(idat)) + chunk(b"IEND", b""))


def bombs():
    # Decompression bombs beside one real mask: 30000x30000 8-bit (900 MB of
    # pixels), 60000x60000 1-bit (3.6 GB unpacked), and an npz member that
    # inflates to 1 GiB.
    import zipfile

    _png_stream("bomb_8bit.png", 30000, 30000, 8, bytes(30001))
    _png_stream("bomb_1bit.png", 60000, 60000, 1, bytes(7501))
    mask = np.zeros((4, 4), dtype=np.uint8)
    mask[1, 2] = 30
    from PIL import Image

    Image.fromarray(mask).save(path("real_mask.png"))
    n = 1 << 27  # int64: 1 GiB
    header = np.lib.format.header_data_from_array_1_0(np.zeros(0, dtype=np.int64))
    header["shape"] = (n,)
    with zipfile.ZipFile(path("bomb.npz"), "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("ids.npy", "w", force_zip64=True) as m:
            np.lib.format.write_array_header_1_0(m, header)
            block = bytes(1 << 24)
            for _ in range(n * 8 // len(block)):
                m.write(block)


def shards():
    os.makedirs(path("shards"), exist_ok=True)
    for i in range(5):
        a = np.full(100, i, dtype=np.uint16)
        a[i * 10] = 50257 + i
        a.tofile(path(f"shards/part-{i:03d}.bin"))


def _zipf_ids(rng, n, vocab):
    """Token ids shaped like real text: most tokens have small ids, some reach the top."""
    return np.minimum(rng.zipf(1.2, n) - 1, vocab - 1).astype(np.int64)


def megatron():
    """Megatron-LM indexed datasets written by megatron-core's own
    IndexedDatasetBuilder, as tools/preprocess_data.py does (.bin + .idx),
    and megatron_expected.json: where the bad ids were planted."""
    import logging

    import torch
    from megatron.core.datasets.indexed_dataset import DType, IndexedDataset, IndexedDatasetBuilder

    logging.disable(logging.INFO)
    rng = np.random.default_rng(7)
    vocab = 128256  # Llama 3: preprocess_data.py picks int32 (DType.optimal_dtype)
    assert DType.optimal_dtype(vocab) == np.int32
    planted = {(4, 1): (4, vocab), (17, 0): (0, 200000), (29, 2): (9, -1)}  # (document, sequence in it): (token, id)
    expected = []
    b = IndexedDatasetBuilder(path("llama_text_document.bin"), dtype=np.int32)
    seq = index = 0
    for doc in range(40):
        for s in range(1 + doc % 3):  # documents of 1-3 sequences (--split-sentences)
            toks = _zipf_ids(rng, 12 + (seq * 7) % 23, vocab)
            toks[-1] = vocab - 1  # the last valid id, in every sequence
            if (doc, s) in planted:
                t, toks[t] = planted[(doc, s)]
                expected.append({"document": doc, "sequence": seq, "token": t, "index": index + t, "value": int(toks[t])})
            b.add_item(torch.from_numpy(toks))
            seq += 1
            index += len(toks)
        b.end_document()
    b.finalize(path("llama_text_document.idx"))
    ds = IndexedDataset(path("llama_text_document"))
    assert len(ds) == seq and len(ds.document_indices) == 41 and ds.index.dtype == np.int32
    with open(path("megatron_expected.json"), "w") as f:
        json.dump({"vocab": vocab, "tokens": index, "sequences": seq, "planted": expected}, f)

    # GPT-2's vocabulary fits uint16: the same builder writes 2-byte tokens.
    b = IndexedDatasetBuilder(path("gpt2_text_document.bin"), dtype=DType.optimal_dtype(50257))
    for doc in range(5):
        toks = np.arange(doc * 10, doc * 10 + 10) + 50210  # 50257.. in the last document
        b.add_document(torch.from_numpy(toks), [10])
    b.finalize(path("gpt2_text_document.idx"))

    # The same Llama tokens with the .idx lost: read as the default u16.
    os.makedirs(path("lone"), exist_ok=True)
    with open(path("llama_text_document.bin"), "rb") as src, open(path("lone/llama_text_document.bin"), "wb") as dst:
        dst.write(src.read())


WRITERS = {f.__name__: f for f in [raw, llmc, npy, npz, safetensors, arrow, parquet, jsonl, csv, png, shards, bombs, megatron]}

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for kind in sys.argv[2:]:
        WRITERS[kind]()
