"""The live tokenizer, whatever its class (issue #36, item 4): tokens added
to a tokenizer and the embedding not resized give `added_tokens_no_resize`
with "model.resize_token_embeddings(len(tokenizer))" first, from the guard,
from preflight (its model and data findings one story, the data's sample
naming its split), and from scan and check where they apply, for

- fast tokenizers (a `tokenizers` WordLevel model in PreTrainedTokenizerFast;
  transformers 5.x's TokenizersBackend),
- slow ones (a user's PreTrainedTokenizer subclass; ByT5's byte tokenizer,
  a library slow class on 4.x and 5.x; AutoTokenizer(use_fast=False), slow
  BERT on 4.x),
- tokens added with `add_tokens` and `add_special_tokens`, and a chat
  template's `<|im_start|>` / `<|im_end|>` reached through `apply_chat_template`,

on transformers 4.x and 5.x alike; the fix, applied, lets the same ids run.
Everything is built here from local files (no downloads). Needs the
devassert binary on PATH (guard_python.rs puts the built one there)."""

import json
import os
import subprocess
import tempfile
import unittest

import datasets
import numpy as np
import torch
import transformers as tf

import devassert
from preflight_fixtures import WordSlow, minilm_dir, tiny_lm, wordlevel_bare, wordlevel_fast
from stories import first, guarded

RESIZE = "model.resize_token_embeddings(len(tokenizer))"
CHATML = "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
TEXT = "a short sentence <new_a> and another one <new_b>"


def byt5():
    return tf.ByT5Tokenizer()


def auto_slow():
    # use_fast=False: the slow BertTokenizer on 4.x; 5.x has one BERT class.
    return tf.AutoTokenizer.from_pretrained(minilm_dir(), use_fast=False)


KINDS = {"fast": wordlevel_fast, "slow": WordSlow, "byt5 (slow)": byt5, "use_fast=False": auto_slow}
ADDING = {
    "add_tokens": lambda tok: tok.add_tokens(["<new_a>", "<new_b>"]),
    "add_special_tokens": lambda tok: tok.add_special_tokens({"additional_special_tokens": ["<new_a>", "<new_b>"]}),
}


def errors(report, rule="DA101"):
    return [f for f in report.findings if f["severity"] == "error" and f["rule"] == rule]


def chat_ids(tok):
    """A chat through the template: <|im_start|> and <|im_end|> added as
    special tokens, as a chat fine-tune does."""
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tok.chat_template = CHATML
    out = tok.apply_chat_template([{"role": "user", "content": "a short sentence"}], tokenize=True, return_tensors="pt")
    # 5.x returns a BatchEncoding, 4.x the ids.
    return out["input_ids"] if hasattr(out, "keys") else out


class Classes(unittest.TestCase):
    def test_the_classes_are_what_they_say(self):
        # The matrix is only worth its name if the slow ones are slow.
        self.assertIsInstance(wordlevel_fast(), tf.PreTrainedTokenizerFast)
        self.assertIsInstance(WordSlow(), tf.PreTrainedTokenizer)
        self.assertIsInstance(byt5(), tf.PreTrainedTokenizer)
        self.assertNotEqual(len(byt5()), byt5().vocab_size)  # 384 ids, 256 bytes
        if int(tf.__version__.split(".")[0]) < 5:
            self.assertIsInstance(auto_slow(), tf.PreTrainedTokenizer)


class AddedTokens(unittest.TestCase):
    def story(self, tok, ids, model):
        """Guard, then preflight on a DatasetDict whose eval split holds the
        ids: one cause and fix, the eval sample named with its split."""
        top = int(ids.max())
        g = guarded(lambda: model(ids))
        self.assertIsNotNone(g, "the guard let an id past the embedding through")
        self.assertEqual(first(g), ("added_tokens_no_resize", RESIZE), g["causes"])
        self.assertTrue(any(f"len(tokenizer) = {len(tok)} covers id {top}" in c["why"] for c in g["causes"]), g["causes"])
        good = tok(["a short sentence", "another one"], padding=True)["input_ids"]
        dd = datasets.DatasetDict(
            {
                "train": datasets.Dataset.from_dict({"input_ids": good}),
                "eval": datasets.Dataset.from_dict({"input_ids": good + [ids[0].tolist()]}),
            }
        )
        report = devassert.preflight(model, tok, dd)
        found = errors(report)
        self.assertEqual(len(found), 2, report.findings)  # the model's and the eval split's
        for f in found:
            cause, fix = first(f)
            self.assertEqual(cause, "added_tokens_no_resize", f["causes"])
            self.assertTrue(fix.startswith(RESIZE), f["fixes"])
        data = [f for f in found if f["evidence"].get("data") == "eval"]
        self.assertEqual(len(data), 1, found)
        self.assertEqual(data[0]["samples"], [{"dataset_index": 2, "split": "eval"}])
        self.assertEqual(report.tokenizer["size"], len(tok))
        # The fix, applied: the same ids run, and preflight passes.
        model.resize_token_embeddings(len(tok))
        self.assertIsNone(guarded(lambda: model(ids)))
        self.assertEqual(errors(devassert.preflight(model, tok, dd)), [])

    def test_added_and_special_tokens_in_every_class(self):
        for kind, make in KINDS.items():
            for how, add in ADDING.items():
                with self.subTest(kind=kind, how=how):
                    tok = make()
                    model = tiny_lm(len(tok))
                    add(tok)
                    ids = tok(TEXT, return_tensors="pt")["input_ids"]
                    self.assertEqual(int(ids.max()), len(tok) - 1, ids)
                    self.story(tok, ids, model)

    def test_a_chat_templates_tokens_in_every_class(self):
        for kind, make in KINDS.items():
            with self.subTest(kind=kind):
                tok = make()
                model = tiny_lm(len(tok))
                ids = chat_ids(tok)
                start, end = tok.convert_tokens_to_ids(["<|im_start|>", "<|im_end|>"])
                self.assertEqual((int(ids[0, 0]), sorted({start, end} & set(ids[0].tolist()))), (len(tok) - 2, [start, end]))
                self.story(tok, ids, model)

    def test_a_pad_token_added_as_a_special_token(self):
        # The most common one: a pad token added to a tokenizer that had none.
        for kind, make in (("fast", wordlevel_fast), ("slow", WordSlow)):
            with self.subTest(kind=kind):
                tok = make()
                model = tiny_lm(len(tok))
                tok.add_special_tokens({"pad_token": "<pad2>"})
                ids = tok(["a short sentence", "a"], padding=True, return_tensors="pt")["input_ids"]
                self.assertEqual(int(ids[1, -1]), len(tok) - 1)
                g = guarded(lambda: model(ids))
                self.assertEqual(first(g), ("added_tokens_no_resize", RESIZE), g["causes"])


class WhereTheTokenizerIs(unittest.TestCase):
    """The guard finds the tokenizer where training code keeps it."""

    def planted(self):
        tok = wordlevel_fast()
        model = tiny_lm(len(tok))
        tok.add_tokens(["<new_a>", "<new_b>"])
        return tok, model, tok(TEXT, return_tensors="pt")["input_ids"]

    def check(self, finding, n):
        self.assertEqual(first(finding), ("added_tokens_no_resize", RESIZE), finding["causes"])
        self.assertTrue(any(f"len(tokenizer) = {n} covers" in c["why"] for c in finding["causes"]), finding["causes"])

    def test_held_only_by_a_data_collator(self):
        tok, model, ids = self.planted()
        n = len(tok)
        collator = tf.DataCollatorWithPadding(tok)
        del tok
        self.check(guarded(lambda: model(ids)), n)
        self.assertIsNotNone(collator)

    def test_held_by_a_dataloaders_collate_fn(self):
        tok, model, ids = self.planted()
        n = len(tok)
        loader = torch.utils.data.DataLoader([{"input_ids": ids[0].tolist()}], collate_fn=tf.DataCollatorWithPadding(tok))
        del tok
        self.check(guarded(lambda: [model(b["input_ids"]) for b in loader]), n)

    def test_held_by_the_module_that_calls_the_model(self):
        tok, model, ids = self.planted()
        n = len(tok)

        class Wrapper(torch.nn.Module):
            def __init__(self, lm, tokenizer):
                super().__init__()
                self.lm, self.tokenizer = lm, tokenizer

            def forward(self, x):
                return self.lm(x)

        wrapper = Wrapper(model, tok)
        del tok
        self.check(guarded(lambda: wrapper(ids)), n)


class ScanAndCheck(unittest.TestCase):
    """scan knows no tokenizer: its story agrees where the rows are a common
    base vocabulary (50257) and the ids go a little past it; check reads the
    saved tokenizer."""

    def test_a_common_base_vocabulary_grown_by_two(self):
        for kind, make in (("fast", wordlevel_fast), ("slow", WordSlow)):
            with self.subTest(kind=kind):
                tok = make(50257)
                model = tiny_lm(len(tok))
                tok.add_tokens(["<new_a>", "<new_b>"])
                ids = tok([TEXT, "w5 w6 <new_b>"], padding=True, return_tensors="pt")["input_ids"]
                g = guarded(lambda: model(ids))
                p = [f for f in errors(devassert.preflight(model, tok, {"input_ids": ids.numpy()})) if f["evidence"].get("check") == "range"]
                with tempfile.TemporaryDirectory() as d:
                    path = os.path.join(d, "ids.npy")
                    np.save(path, ids.numpy())
                    out = subprocess.run(["devassert", "scan", "--format", "json", path, "--vocab", "50257"], capture_output=True, text=True, check=False)
                s = [f for f in json.loads(out.stdout)["findings"] if f["evidence"].get("check") == "range"]
                self.assertEqual((len(p), len(s)), (1, 1), (p, s))
                for f in (g, p[0], s[0]):
                    self.assertEqual(first(f), ("added_tokens_no_resize", RESIZE), f["causes"])

    def test_check_reads_the_saved_tokenizer(self):
        for kind, make in (("fast", wordlevel_fast), ("byt5 (slow)", byt5), ("use_fast=False", auto_slow)):
            with self.subTest(kind=kind):
                tok = make()
                model = tiny_lm(len(tok))
                ids = chat_ids(tok)
                g = guarded(lambda: model(ids))
                with tempfile.TemporaryDirectory() as d:
                    model.save_pretrained(d)
                    tok.save_pretrained(d)
                    out = subprocess.run(["devassert", "check", "--format", "json", d], capture_output=True, text=True, check=False)
                c = [f for f in json.loads(out.stdout)["findings"] if f.get("severity") == "error" and (f["causes"] or [{}])[0].get("id") == "added_tokens_no_resize"]
                self.assertEqual(len(c), 1, out.stdout)
                self.assertTrue(c[0]["fixes"][0].startswith(RESIZE), c[0]["fixes"])
                self.assertEqual(first(g), ("added_tokens_no_resize", RESIZE))


class BareTokenizer(unittest.TestCase):
    """A bare `tokenizers.Tokenizer` (the Rust library's object, no
    transformers class around it, no len()) is read by its own methods: its
    size with added tokens, its added tokens, its padding's pad id."""

    def test_added_tokens_of_a_bare_tokenizer(self):
        tok = wordlevel_bare()
        model = tiny_lm(tok.get_vocab_size(with_added_tokens=True))
        tok.add_tokens(["<new_a>", "<new_b>"])
        tok.enable_padding(pad_id=1, pad_token="[PAD]")
        ids = torch.tensor([tok.encode(TEXT).ids])
        self.assertEqual(int(ids.max()), 41)
        g = guarded(lambda: model(ids))
        # It has no len(): the fix sizes the embedding the way it can be called.
        self.assertEqual(first(g), ("added_tokens_no_resize", "model.resize_token_embeddings(tokenizer.get_vocab_size(with_added_tokens=True))"), g["causes"])
        self.assertTrue(any("len(tokenizer) = 42 covers id 41" in c["why"] for c in g["causes"]), g["causes"])
        report = devassert.preflight(model, tok, {"input_ids": ids.numpy()})
        summary = {k: report.tokenizer[k] for k in ("class", "size", "base_size", "max_id", "added_tokens", "special_ids")}
        self.assertEqual(summary, {"class": "Tokenizer", "size": 42, "base_size": 40, "max_id": 41, "added_tokens": 2, "special_ids": {"pad_token_id": 1}})
        self.assertEqual([first(f)[0] for f in errors(report)], ["added_tokens_no_resize"] * 2)
        model.resize_token_embeddings(tok.get_vocab_size(with_added_tokens=True))
        self.assertIsNone(guarded(lambda: model(ids)))
        self.assertEqual(errors(devassert.preflight(model, tok, {"input_ids": ids.numpy()})), [])


class OddTokenizers(unittest.TestCase):
    def test_a_slow_subclass_without_vocab_size(self):
        # PreTrainedTokenizer.vocab_size raises NotImplementedError unless the
        # subclass defines it: a fact not measured, never a crash.
        class NoBase(WordSlow):
            vocab_size = property(lambda self: tf.PreTrainedTokenizer.vocab_size.fget(self))

        tok = NoBase()
        with self.assertRaises(NotImplementedError):
            tok.vocab_size  # noqa: B018 - the attribute the test is about
        model = tiny_lm(len(tok))
        tok.add_tokens(["<new_a>", "<new_b>"])
        ids = tok(TEXT, return_tensors="pt")["input_ids"]
        self.assertEqual(first(guarded(lambda: model(ids))), ("added_tokens_no_resize", RESIZE))
        report = devassert.preflight(model, tok, {"input_ids": ids.numpy()})
        self.assertIsNone(report.tokenizer["base_size"])
        self.assertEqual([first(f)[0] for f in errors(report)], ["added_tokens_no_resize"] * 2)

    def test_a_tokenizer_whose_len_raises(self):
        class Broken(WordSlow):
            def __len__(self):
                raise RuntimeError("no vocabulary loaded")

        tok = WordSlow()
        model = tiny_lm(len(tok))
        tok.add_tokens(["<new_a>", "<new_b>"])
        ids = tok(TEXT, return_tensors="pt")["input_ids"]
        tok.__class__ = Broken
        # The guard says what the ids say without it; preflight names the step.
        g = guarded(lambda: model(ids))
        self.assertIsNotNone(g)
        self.assertFalse(any("len(tokenizer) =" in c["why"] for c in g["causes"]), g["causes"])
        with self.assertRaises(devassert.PreflightReadError) as e:
            devassert.preflight(model, tok, {"input_ids": ids.numpy()})
        self.assertIn("reading the tokenizer (Broken) raised RuntimeError: no vocabulary loaded", str(e.exception))


if __name__ == "__main__":
    unittest.main()
