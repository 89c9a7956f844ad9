"""One diagnosis per root cause: a planted case run through the guard,
preflight and scan gives the same first cause and fix, and every fix shown,
applied to the planted program, makes the op valid (the guard then lets it
run). The cause engine is catalog/causes.toml for all of them.
Needs the devassert binary on PATH (guard_python.rs puts the built one there)."""

import json
import os
import re
import subprocess
import tempfile
import unittest

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import devassert
from preflight_fixtures import gpt2_lm, gpt2_tokenizer, roberta_model, roberta_tokenizer
from stories import first, guarded


def scan(array, *flags):
    """`devassert scan` on the array saved as .npy: its range finding."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "data.npy")
        np.save(path, array)
        out = subprocess.run(["devassert", "scan", "--format", "json", path, *flags], capture_output=True, text=True, check=False)
        report = json.loads(out.stdout)
    return next(f for f in report["findings"] if f["evidence"].get("check") == "range")


def preflight_errors(report, rule):
    return [f for f in report.findings if f["severity"] == "error" and f["rule"] == rule]


class Labels(unittest.TestCase):
    def loss(self, labels, classes):
        t = torch.as_tensor(labels)
        return guarded(lambda: F.cross_entropy(torch.randn(len(t), classes), t))

    def apply(self, fix, labels, classes):
        """The fix done to the planted program: the new labels and classes."""
        if fix.startswith("subtract 1"):
            return labels - 1, classes
        m = re.match(r"set num_labels / num_classes to (\d+)", fix)
        if m:
            return labels, int(m.group(1))
        return None

    def commands(self, labels, classes):
        g = self.loss(labels, classes)
        p = preflight_errors(devassert.preflight(data=labels, num_classes=classes), "DA201")
        s = scan(labels, "--classes", str(classes))
        return g, p[0], s

    def check_fixes(self, finding, labels, classes):
        applied = 0
        for fix in finding["fixes"]:
            got = self.apply(fix, labels, classes)
            if got is None:
                continue
            applied += 1
            self.assertIsNone(self.loss(*got), fix)
            self.assertGreaterEqual(int(got[0].min()), 0, f"{fix} makes a negative label")
        self.assertGreater(applied, 0, finding["fixes"])

    def test_one_based_labels(self):
        labels = np.array([1, 2, 3] * 40)
        g, p, s = self.commands(labels, 3)
        for f in (g, p, s):
            self.assertEqual(first(f), ("off_by_one", "subtract 1 from the labels (they run 1..3; the loss wants 0..2)"), f["causes"])
        self.check_fixes(g, labels, 3)

    def test_labels_past_num_labels_are_not_called_one_based(self):
        # 0, 1, 2 a hundred times and four 3s, with num_labels=3: 0 occurs,
        # so "subtract 1" would make -1 labels.
        labels = np.array([0, 1, 2] * 33 + [3] * 4)
        g, p, s = self.commands(labels, 3)
        for f in (g, p, s):
            self.assertEqual(first(f), ("label_ge_num_classes", "set num_labels / num_classes to 4, or remap the labels to 0..2"))
            self.assertFalse(any("1-based" in c["why"] or "counted from 1" in c["why"] and "not counted" not in c["why"] for c in f["causes"]), f["causes"])
            self.assertFalse(any("subtract" in x for x in f["fixes"]), f["fixes"])
        self.check_fixes(g, labels, 3)


class Ids(unittest.TestCase):
    def test_added_tokens_without_resize_are_one_story(self):
        tok = gpt2_tokenizer()
        model = gpt2_lm(tok)
        tok.add_tokens(["<new_a>", "<new_b>"])
        ids = tok("a short sentence <new_a> and <new_b>", return_tensors="pt")["input_ids"]
        g = guarded(lambda: model(ids))
        report = devassert.preflight(model, tok, data={"input_ids": ids.numpy()})
        found = preflight_errors(report, "DA101")
        self.assertEqual(len(found), 2, report.findings)  # the model's and the data's
        for f in [g] + found:
            self.assertEqual(f["causes"][0]["id"], "added_tokens_no_resize", f["causes"])
            self.assertTrue(f["fixes"][0].startswith("model.resize_token_embeddings(len(tokenizer))"), f["fixes"])
        self.assertTrue(any("len(tokenizer) = 502 covers id 501" in c["why"] for c in g["causes"]), g["causes"])
        # The fix, applied: the same ids now run.
        model.resize_token_embeddings(len(tok))
        self.assertIsNone(guarded(lambda: model(ids)))

    def test_too_long_rows_with_robertas_offset(self):
        tok = roberta_tokenizer()
        model = roberta_model(tok, max_positions=18)  # 16 usable: positions start at padding_idx + 1 = 2
        ids = torch.full((1, 20), 5)
        # Token types given: transformers 4.x slices its buffered ones to the
        # input's length first, a shape error before any position is read.
        types = torch.zeros_like(ids)
        g = guarded(lambda: model(ids, token_type_ids=types))
        report = devassert.preflight(model, tok, data={"input_ids": ids.numpy()})
        rows = [f for f in preflight_errors(report, "DA101") if f["evidence"].get("check") == "max_len"]
        self.assertEqual(len(rows), 1, report.findings)
        for f in (g, rows[0]):
            cause, fix = first(f)
            self.assertEqual(cause, "seq_len_gt_max_positions", f["causes"])
            self.assertIn("max_length=16", fix)
        # Lengths are shown as lengths.
        self.assertEqual(rows[0]["evidence"]["values_are"], "row lengths")
        self.assertIn("offending row lengths: 20", report.text())
        self.assertIsNone(guarded(lambda: model(ids[:, :16], token_type_ids=types[:, :16])))

    def test_positions_counted_from_one_are_off_by_one(self):
        block = 8
        wpe = nn.Embedding(block, 4)
        idx = torch.ones(2, block, dtype=torch.long)

        def forward(idx):
            pos = torch.ones_like(idx).cumsum(-1)  # 1..T: no `- 1`
            return wpe(pos)

        g = guarded(lambda: forward(idx))
        self.assertEqual(g["causes"][0]["id"], "off_by_one", g["causes"])
        self.assertFalse(any("crop" in x or "truncat" in x for x in g["fixes"]), g["fixes"])
        self.assertTrue(any(r.startswith("seq_len_gt_max_positions:") for r in g["evidence"]["ruled_out"]))
        self.assertTrue(g["fixes"][0].startswith("count from 0: subtract 1"))
        self.assertIsNone(guarded(lambda: wpe(torch.ones_like(idx).cumsum(-1) - 1)))

    def test_one_id_at_the_end_of_one_row_is_no_padding_claim(self):
        emb = nn.Embedding(10, 3)
        g = guarded(lambda: emb(torch.tensor([[1, 2, 12]])))
        self.assertNotIn("pad_token_id_out_of_range", [c["id"] for c in g["causes"]])
        self.assertEqual(g["causes"][0]["id"], "token_id_ge_vocab")
        self.assertIn("at least 13 rows", g["fixes"][0])
        grown = nn.Embedding(13, 3)
        self.assertIsNone(guarded(lambda: grown(torch.tensor([[1, 2, 12]]))))

    def test_a_ruled_out_cause_is_said_with_its_fact_in_every_text(self):
        # Ids 1..50257 on 50257 rows look counted from 1, but 50257 is GPT-2's
        # vocabulary size: the facts rule off_by_one out, and every text says so.
        emb = nn.Embedding(50257, 2)
        ids = np.array([[1, 7, 300, 50256, 50257]] * 3)
        said = "ruled out: off_by_one — 50257 is a common base vocabulary's size"
        with devassert.guard():
            with self.assertRaises(devassert.DeviceAssertPrevented) as caught:
                emb(torch.as_tensor(ids))
        self.assertIn(said, str(caught.exception))
        self.assertIn(said, devassert.preflight(emb, data={"input_ids": ids}).text())
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ids.npy")
            np.save(path, ids)
            out = subprocess.run(["devassert", "scan", "--color", "never", path, "--vocab", "50257"], capture_output=True, text=True, check=False)
        self.assertIn(said, out.stdout)


if __name__ == "__main__":
    unittest.main()
