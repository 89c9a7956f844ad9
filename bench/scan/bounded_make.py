"""Inputs far larger than any real one, for bench/scan/bounded.sh: each a case
of issue 38 whose reader's memory once grew with the input. Written a piece
at a time (the generator's own memory stays small, except pyarrow's
metadata, which pyarrow holds whole).

usage: python bounded_make.py OUT_DIR SCALE   (SCALE 1.0: the issue's sizes)
"""

import json
import os
import sys


def write_pieces(path, head, piece, count, tail):
    with open(path, "w") as f:
        f.write(head)
        for i in range(count):
            f.write(piece(i))
        f.write(tail)


def ids(n, start=0):
    # Short ids, as a tokenized corpus holds them: ~2 bytes each.
    return ",".join(str((start + i) % 10) for i in range(n))


def main(out, scale):
    os.makedirs(out, exist_ok=True)
    mb = lambda x: int(x * scale * 1_000_000)  # noqa: E731

    # A JSONL line holding a 50M-id array (100 MB), and a good file beside it.
    n = mb(100) // 2
    chunk = 1_000_000
    with open(f"{out}/line.jsonl", "w") as f:
        f.write('{"input_ids":[')
        for s in range(0, n, chunk):
            f.write(ids(min(chunk, n - s), s) + ",")
        f.write("60000]}\n")
    with open(f"{out}/good.jsonl", "w") as f:
        f.write('{"input_ids":[1,2,3]}\n')

    # A CSV whose one cell is 1 GiB.
    cell = int((1 << 30) * scale)
    with open(f"{out}/cell.csv", "w") as f:
        f.write('text,label\n"')
        block = "y" * (1 << 20)
        for _ in range(cell >> 20):
            f.write(block)
        f.write('",3\nshort,12\n')

    # Model folders: config.json, tokenizer_config.json and the safetensors
    # index of 110-120 MB; tokenizer.json of 60 MB (under the old 64 MiB).
    def model(name):
        d = f"{out}/{name}"
        os.makedirs(d, exist_ok=True)
        return d

    d = model("model-config")
    k = mb(110) // 25
    write_pieces(
        f"{d}/config.json",
        '{"model_type":"bert","vocab_size":30522,"id2label":{',
        lambda i: ("," if i else "") + f'"{i}":"LABEL_{i:010d}"',
        k,
        "}}",
    )
    d = model("model-tokcfg")
    k = mb(110) // 60
    write_pieces(
        f"{d}/tokenizer_config.json",
        '{"model_max_length":512,"added_tokens_decoder":{',
        lambda i: ("," if i else "")
        + f'"{i}":{{"content":"<tok{i:09d}>","special":true}}',
        k,
        "}}",
    )
    with open(f"{d}/vocab.txt", "w") as f:
        f.write("[PAD]\n[UNK]\n")
    d = model("model-index")
    k = mb(120) // 70
    write_pieces(
        f"{d}/model.safetensors.index.json",
        '{"metadata":{"total_size":0},"weight_map":{',
        lambda i: ("," if i else "")
        + f'"model.layers.{i}.self_attn.q_proj.weight":"model-00001-of-00001.safetensors"',
        k,
        "}}",
    )
    header = json.dumps({"__metadata__": {}}).encode()
    with open(f"{d}/model-00001-of-00001.safetensors", "wb") as f:
        f.write(len(header).to_bytes(8, "little") + header)
    d = model("model-tokjson")
    # A BPE vocabulary without merges: the library loads it (merges must
    # join pieces of the vocabulary).
    k = mb(60) // 24
    vocab = ",".join(f'"tok{i:09d}":{i}' for i in range(k))
    with open(f"{d}/tokenizer.json", "w") as f:
        f.write(
            '{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,'
            '"post_processor":null,"decoder":null,"model":{"type":"BPE","vocab":{'
            + vocab
            + '},"merges":[]}}'
        )

    # Parquet with 300 MB of key-value metadata (the 1.17 GB took
    # pyarrow itself past 8 GB to write), Arrow with 500 MB.
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.table({"input_ids": pa.array([1, 2, 70000], pa.int64())})
    meta = {b"big": b"x" * mb(300)}
    pq.write_table(t.replace_schema_metadata(meta), f"{out}/meta.parquet")
    meta = {b"big": b"x" * mb(500)}
    t2 = t.replace_schema_metadata(meta)
    with pa.OSFile(f"{out}/meta.arrow", "wb") as f:
        with pa.ipc.new_stream(f, t2.schema) as w:
            w.write_table(t2)

    # --inductor-dir of 26 generated modules of 30-40 MB.
    ind = f"{out}/inductor"
    os.makedirs(ind, exist_ok=True)
    line = "    tmp0 = tl.load(in_ptr0 + (x0), xmask)\n"
    for i in range(26):
        size = mb(30 + (i % 11))
        with open(f"{ind}/c{i:02d}.py", "w") as f:
            f.write("# AOT ID: ['0_inference']\n")
            for _ in range(size // len(line)):
                f.write(line)
    with open(f"{out}/crash.log", "w") as f:
        f.write(
            "../aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: "
            "block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n"
            "RuntimeError: CUDA error: device-side assert triggered\n"
        )


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 1.0)
