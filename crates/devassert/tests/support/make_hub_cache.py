"""Builds a Hugging Face hub cache the way huggingface_hub lays one out, for
`tests/check_hub.rs`: small random-weight BERT models saved by transformers,
each file stored as a blob named by its etag (sha256 for LFS files such as
safetensors, the git blob sha1 for the rest) and linked from
`snapshots/<commit>/` with huggingface_hub's own `_create_symlink`, refs
written with its own `_cache_commit_hash_for_specific_revision`. The library
then reads the cache back (`try_to_load_from_cache`, `scan_cache_dir`) to
prove the layout is the one it writes. Nothing is downloaded.

usage: make_hub_cache.py HF_HOME   (writes HF_HOME/hub/models--… and HF_HOME/manifest.json)
"""

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

import transformers as tf  # noqa: E402
from huggingface_hub import scan_cache_dir, try_to_load_from_cache  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from huggingface_hub.file_download import (  # noqa: E402
    _cache_commit_hash_for_specific_revision,
    _create_symlink,
    repo_folder_name,
)

HOME = Path(sys.argv[1])
HUB = HOME / "hub"
LFS = {".safetensors", ".bin"}


def save_model(dst: Path, added: list[str]) -> None:
    """A 64-token WordPiece BERT; `added` tokens are added to the tokenizer only."""
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(59)]
    wordpiece = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    wordpiece.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=wordpiece,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=64,
    )
    if added:
        tok.add_tokens(added)
    assert len(tok) == len(vocab) + len(added), len(tok)
    cfg = tf.BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    tf.BertModel(cfg).save_pretrained(dst)
    tok.save_pretrained(dst)


def etag(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix in LFS:
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def add_to_cache(repo_id: str, src: Path, commit: str, tags: list[str]) -> Path:
    storage = HUB / repo_folder_name(repo_id=repo_id, repo_type="model")
    snap = storage / "snapshots" / commit
    for f in sorted(src.iterdir()):
        blob = storage / "blobs" / etag(f)
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(f.read_bytes())
        snap.mkdir(parents=True, exist_ok=True)
        _create_symlink(str(blob), str(snap / f.name), new_blob=False)
    for rev in ["main", *tags]:
        _cache_commit_hash_for_specific_revision(str(storage), rev, commit)
    for f in src.iterdir():
        for rev in ["main", commit, *tags]:
            got = try_to_load_from_cache(repo_id, f.name, cache_dir=HUB, revision=rev)
            assert got == str(snap / f.name), (repo_id, f.name, rev, got)
    return snap


MODELS = {
    # repo id: (added tokens, tags, planted finding)
    "devassert-test/tiny-bert": ([], ["v1.0"], None),
    "devassert-test/tiny-bert-added": (["<new_a>", "<new_b>"], [], "added_tokens_no_resize"),
}

manifest = {}
for i, (repo_id, (added, tags, cause)) in enumerate(MODELS.items()):
    commit = hashlib.sha1(repo_id.encode()).hexdigest()
    with tempfile.TemporaryDirectory() as tmp:
        save_model(Path(tmp), added)
        snap = add_to_cache(repo_id, Path(tmp), commit, tags)
    manifest[repo_id] = {"commit": commit, "snapshot": str(snap), "tags": tags, "cause": cause}

info = scan_cache_dir(HUB)
assert not info.warnings, info.warnings
seen = {r.repo_id: r for r in info.repos}
for repo_id, m in manifest.items():
    (rev,) = seen[repo_id].revisions
    assert rev.commit_hash == m["commit"] and "main" in rev.refs, (repo_id, rev)
(HOME / "manifest.json").write_text(json.dumps(manifest, indent=1))
