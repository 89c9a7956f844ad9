"""devassert.preflight on real transformers models, tokenizers and datasets:
each planted mismatch is found with the rule and cause `check` / `scan` give
it, bad rows name their dataset sample and column, valid setups are silent,
and every report's JSON is valid against the contract's schema.
Needs the devassert binary on PATH (guard_python.rs puts the built one there)."""

import json
import shutil
import os
import random
import tempfile
import unittest

import datasets
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

import devassert
from contract_check import preflight
from preflight_fixtures import SENTENCES, bert_classifier, bert_tokenizer, gpt2_lm, gpt2_tokenizer, roberta_model, roberta_tokenizer

datasets.disable_progress_bars()


def errors(report):
    return [f for f in report.findings if f["severity"] == "error"]


def causes(report, severity=None):
    return [(f["rule"], f["causes"][0]["id"] if f["causes"] else None) for f in report.findings if severity is None or f["severity"] == severity]


def on_disk(ds, tmp):
    """The dataset as a user has it after save_to_disk / load_from_disk:
    its columns in Arrow cache files."""
    path = os.path.join(tmp, f"ds{len(os.listdir(tmp))}")
    ds.save_to_disk(path)
    out = datasets.load_from_disk(path)
    assert out.cache_files, "expected a dataset backed by Arrow files"
    return out


class ModelAndTokenizer(unittest.TestCase):
    def test_matching_bert_classifier_is_silent(self):
        tok = bert_tokenizer()
        r = preflight(bert_classifier(tok), tok)
        self.assertTrue(r.ok)
        self.assertEqual(r.findings, [])
        self.assertEqual(json.loads(r.to_json())["exit_code"], 0)

    def test_added_tokens_without_resize(self):
        tok = bert_tokenizer()
        model = bert_classifier(tok)
        tok.add_tokens(["<user>", "<assistant>"])
        r = preflight(model, tok)
        self.assertFalse(r.ok)
        self.assertEqual(causes(r), [("DA101", "added_tokens_no_resize")])
        f = r.findings[0]
        self.assertEqual(f["values"], [30522, 30523])
        self.assertEqual(f["bound"], {"low": 0, "high": 30522})
        self.assertIn("resize_token_embeddings", f["fixes"][0])
        model.resize_token_embeddings(len(tok))
        self.assertTrue(preflight(model, tok).ok)

    def test_pad_token_id_past_the_table(self):
        tok = gpt2_tokenizer()
        model = gpt2_lm(tok)
        model.config.pad_token_id = 500
        r = preflight(model, tok)
        self.assertEqual(causes(r), [("DA101", "pad_token_id_out_of_range")])
        self.assertEqual(r.findings[0]["values"], [500])

    def test_roberta_positions_lose_the_padding_offset(self):
        tok = roberta_tokenizer(max_length=130)
        r = preflight(roberta_model(tok, max_positions=130), tok)
        self.assertEqual(causes(r), [("DA101", "seq_len_gt_max_positions")])
        self.assertEqual(r.findings[0]["evidence"]["usable_positions"], 128)
        tok = roberta_tokenizer(max_length=128)
        self.assertEqual(preflight(roberta_model(tok, max_positions=130), tok).findings, [])

    def test_one_token_type_row_with_a_pair_tokenizer(self):
        tok = bert_tokenizer()
        r = preflight(bert_classifier(tok, type_vocab_size=1), tok)
        self.assertTrue(r.ok)  # a warning: only pairs fire
        self.assertEqual(causes(r, "warning"), [("DA101", "type_vocab_size")])
        self.assertEqual(r.exit_code, 1)  # the contract's code counts warnings

    def test_labels_added_in_memory_past_the_head(self):
        tok = bert_tokenizer()
        model = bert_classifier(tok, num_labels=3)
        model.config.id2label = {i: f"L{i}" for i in range(5)}
        r = preflight(model, tok)
        self.assertEqual(causes(r), [("DA201", "label_ge_num_classes")])
        self.assertEqual(r.findings[0]["values"], [3, 4])

    def test_untied_output_head_left_small(self):
        tok = gpt2_tokenizer()
        model = gpt2_lm(tok, tie_word_embeddings=False)
        tok.add_tokens(["<tool>"])
        model.transformer.wte = torch.nn.Embedding(len(tok), 32)  # the input table alone grown
        model.config.vocab_size = len(tok)
        r = preflight(model, tok)
        self.assertEqual(causes(r), [("DA201", "added_tokens_no_resize")])

    def test_padded_vocabulary_is_a_note(self):
        tok = gpt2_tokenizer()
        model = gpt2_lm(tok)
        model.resize_token_embeddings(512)
        r = preflight(model, tok)
        self.assertTrue(r.ok)
        self.assertEqual([f["severity"] for f in r.findings], ["note"])
        self.assertEqual(r.exit_code, 0)

    def test_model_inside_another_module(self):
        tok = bert_tokenizer()

        class Wrapper(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = bert_classifier(tok)

        wrapped = Wrapper()
        tok.add_tokens(["<x>"])
        self.assertEqual(causes(preflight(wrapped, tok)), [("DA101", "added_tokens_no_resize")])


class HFDatasets(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="devassert-preflight-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.tok = bert_tokenizer()
        self.model = bert_classifier(self.tok)
        enc = self.tok(SENTENCES)
        self.rows = {"input_ids": enc["input_ids"], "token_type_ids": enc["token_type_ids"], "label": [i % 3 for i in range(len(SENTENCES))]}

    def planted(self, changes=None):
        rows = {k: [list(v) if isinstance(v, list) else v for v in col] for k, col in self.rows.items()}
        for (column, row), value in (changes or {}).items():
            rows[column][row] = value
        return datasets.Dataset.from_dict(rows)

    def test_valid_dataset_on_disk_is_read_in_place_and_silent(self):
        ds = on_disk(self.planted(), self.tmp)
        r = preflight(self.model, self.tok, ds)
        self.assertEqual(r.findings, [])
        self.assertEqual(r.data[0]["read"], "Arrow files read in place")
        self.assertEqual(sorted(r.data[0]["columns"]), ["input_ids", "label", "token_type_ids"])

    def test_each_bad_column_names_its_sample(self):
        ids = list(self.rows["input_ids"][5])
        ids[2] = 30530
        ds = on_disk(self.planted({("input_ids", 5): ids, ("label", 3): 7, ("token_type_ids", 1): [2] * len(self.rows["token_type_ids"][1])}), self.tmp)
        r = preflight(self.model, self.tok, ds)
        got = {f["evidence"]["column"]: f for f in errors(r)}
        self.assertEqual(sorted(got), ["input_ids", "label", "token_type_ids"])
        self.assertEqual(got["input_ids"]["rule"], "DA101")
        self.assertEqual(got["input_ids"]["locations"][0]["sample"], 5)
        self.assertEqual(got["input_ids"]["locations"][0]["offset"], 2)
        self.assertEqual(got["input_ids"]["locations"][0]["value"], 30530)
        self.assertEqual(got["label"]["rule"], "DA201")
        self.assertEqual(got["label"]["samples"], [{"dataset_index": 3}])
        self.assertEqual(got["token_type_ids"]["causes"][0]["id"], "type_vocab_size")
        self.assertIn("dataset sample 5, column input_ids, offset 2", str(r))

    def test_too_long_rows(self):
        long = self.tok(" ".join(["word"] * 600))["input_ids"]
        ds = on_disk(self.planted({("input_ids", 6): long, ("token_type_ids", 6): [0] * len(long)}), self.tmp)
        (f,) = errors(preflight(self.model, self.tok, ds))
        self.assertEqual(f["causes"][0]["id"], "seq_len_gt_max_positions")
        self.assertEqual(f["locations"][0]["sample"], 6)

    def test_ignore_index_labels_are_not_findings(self):
        ds = on_disk(self.planted({("label", 0): -100}), self.tmp)
        self.assertEqual(preflight(self.model, self.tok, ds).findings, [])
        r = preflight(self.model, self.tok, ds, ignore_index=None)
        self.assertEqual([(f["rule"], f["values"], f["samples"]) for f in r.findings], [("DA201", [-100], [{"dataset_index": 0}])])

    def test_shuffled_and_split_datasets_name_the_sample_they_index(self):
        base = on_disk(self.planted({("label", 4): 9}), self.tmp)
        for ds in (base.shuffle(seed=1), base.train_test_split(test_size=0.5, seed=0)["train"], base.train_test_split(test_size=0.5, seed=0)["test"]):
            r = preflight(self.model, self.tok, ds)
            holds = [i for i in range(len(ds)) if ds[i]["label"] == 9]
            found = [s["dataset_index"] for f in errors(r) for s in f.get("samples", [])]
            self.assertEqual(found, holds)

    def test_several_files_count_rows_across_them(self):
        a = on_disk(self.planted(), self.tmp)
        b = on_disk(self.planted({("label", 2): 5}), self.tmp)
        ds = datasets.concatenate_datasets([a, b])
        (f,) = errors(preflight(self.model, self.tok, ds))
        self.assertEqual(f["samples"], [{"dataset_index": len(a) + 2}])
        self.assertEqual(ds[len(a) + 2]["label"], 5)

    def test_in_memory_dataset(self):
        ds = self.planted({("label", 1): 3})
        self.assertFalse(ds.cache_files)
        r = preflight(self.model, self.tok, ds)
        (f,) = errors(r)
        self.assertEqual(f["samples"], [{"dataset_index": 1}])
        self.assertNotIn("file", f["locations"][0])  # a temporary file is not the user's
        self.assertTrue(preflight(self.model, self.tok, self.planted()).ok)

    def test_mapped_dataset_with_cache_files(self):
        base = on_disk(datasets.Dataset.from_dict({"text": SENTENCES, "label": [0, 1, 2, 0, 1, 2, 0, 4]}), self.tmp)
        ds = base.map(lambda b: self.tok(b["text"]), batched=True).remove_columns(["text"])
        self.assertTrue(ds.cache_files)
        r = preflight(self.model, self.tok, ds)
        self.assertEqual(r.data[0]["read"], "Arrow files read in place")
        (f,) = errors(r)
        self.assertEqual(f["samples"], [{"dataset_index": 7}])

    def test_dataset_dict_names_its_split(self):
        dd = datasets.DatasetDict({"train": self.planted(), "test": on_disk(self.planted({("label", 6): 3}), self.tmp)})
        r = preflight(self.model, self.tok, dd)
        self.assertEqual([d["name"] for d in r.data], ["train", "test"])
        (f,) = errors(r)
        self.assertEqual((f["evidence"]["data"], f["samples"]), ("test", [{"dataset_index": 6, "split": "test"}]))
        self.assertIn("dataset sample 6 of test", r.text())

    def test_a_tokenizers_batch_encoding(self):
        enc = self.tok(SENTENCES, padding=True, return_tensors="np")
        self.assertTrue(preflight(self.model, self.tok, enc).ok)
        enc["input_ids"][3, 1] = 31000
        (f,) = errors(preflight(self.model, self.tok, enc))
        self.assertEqual((f["locations"][0]["sample"], f["locations"][0]["offset"]), (3, 1))

    def test_lm_labels_against_the_output_head(self):
        tok = gpt2_tokenizer()
        model = gpt2_lm(tok)
        ids = tok(SENTENCES[:3])["input_ids"]
        labels = [list(r) for r in ids]
        labels[0][0] = -100
        ds = datasets.Dataset.from_dict({"input_ids": ids, "labels": labels})
        self.assertEqual(preflight(model, tok, ds).findings, [])
        labels[2][1] = 501
        (f,) = errors(preflight(model, tok, datasets.Dataset.from_dict({"input_ids": ids, "labels": labels})))
        self.assertEqual((f["rule"], f["evidence"]["column"], f["samples"]), ("DA201", "labels", [{"dataset_index": 2}]))


class ArraysAndLoaders(unittest.TestCase):
    def setUp(self):
        self.tok = gpt2_tokenizer()
        self.model = gpt2_lm(self.tok)

    def test_numpy_and_tensor_ids(self):
        ids = np.random.default_rng(0).integers(0, 500, size=(40, 16))
        self.assertTrue(preflight(self.model, self.tok, ids).ok)
        self.assertTrue(preflight(self.model, self.tok, torch.from_numpy(ids)).ok)
        ids[17, 3] = 500
        ids[30, 0] = -1
        for data in (ids, torch.from_numpy(ids), {"input_ids": ids}):
            (f,) = errors(preflight(self.model, self.tok, data))
            self.assertEqual([(loc["sample"], loc["offset"], loc["value"]) for loc in f["locations"]], [(17, 3, 500), (30, 0, -1)])

    def test_labels_alone_against_num_classes(self):
        y = np.array([0, 1, 2, 3, -100, 1])
        (f,) = errors(preflight(data=y, num_classes=3))
        self.assertEqual((f["rule"], f["values"], f["samples"]), ("DA201", [3], [{"dataset_index": 3}]))

    def test_too_long_rows_in_an_array(self):
        ids = np.zeros((3, 200), dtype=np.int64)
        (f,) = errors(preflight(self.model, self.tok, ids))
        self.assertEqual(f["causes"][0]["id"], "seq_len_gt_max_positions")
        self.assertEqual(f["count"], 3)

    def test_dataloader_with_shuffle_and_custom_collate_names_samples(self):
        tok = self.tok

        class Texts(Dataset):
            def __len__(self):
                return 64

            def __getitem__(self, i):
                ids = tok(SENTENCES[i % len(SENTENCES)])["input_ids"]
                if i == 41:
                    ids = ids + [503]
                return {"input_ids": ids, "labels": ids}

        def collate(items):
            width = max(len(x["input_ids"]) for x in items)
            ids = torch.full((len(items), width), 0)
            mask = torch.zeros((len(items), width), dtype=torch.long)
            labels = torch.full((len(items), width), -100)
            for r, x in enumerate(items):
                ids[r, : len(x["input_ids"])] = torch.tensor(x["input_ids"])
                mask[r, : len(x["input_ids"])] = 1
                labels[r, : len(x["labels"])] = torch.tensor(x["labels"])
            return {"input_ids": ids, "attention_mask": mask, "labels": labels}

        loader = DataLoader(Texts(), batch_size=8, shuffle=True, collate_fn=collate)
        torch.manual_seed(3)
        random.seed(3)
        expected = (torch.rand(1).item(), random.random())
        torch.manual_seed(3)
        random.seed(3)
        r = preflight(self.model, tok, loader)
        self.assertEqual((torch.rand(1).item(), random.random()), expected, "preflight changed the random state")
        found = {f["evidence"]["column"]: f for f in errors(r)}
        self.assertEqual(sorted(found), ["input_ids", "labels"])
        self.assertEqual(found["input_ids"]["samples"], [{"dataset_index": 41}])
        self.assertEqual(found["labels"]["samples"], [{"dataset_index": 41}])
        self.assertIn("batch", found["input_ids"]["locations"][0])
        # bounded work: 16 samples drawn, from 2 batches
        r = preflight(self.model, tok, DataLoader(Texts(), batch_size=8, collate_fn=collate), max_rows=16)
        self.assertEqual(r.data[0]["rows"], 16)
        self.assertIn("partial", r.data[0])
        self.assertTrue(r.ok)

    def test_torch_dataset_of_tuples(self):
        class Pairs(Dataset):
            def __len__(self):
                return 10

            def __getitem__(self, i):
                return torch.tensor([1, 2, 3]), torch.tensor(12 if i == 6 else i % 4)

        (f,) = errors(preflight(self.model, None, DataLoader(Pairs(), batch_size=4), num_classes=5))
        self.assertEqual((f["rule"], f["samples"]), ("DA201", [{"dataset_index": 6}]))
        (f,) = errors(preflight(self.model, None, Pairs(), num_classes=5))
        self.assertEqual(f["samples"], [{"dataset_index": 6}])


def _tiny_classifier(vocab=100, num_labels=3):
    import transformers as tf

    cfg = tf.BertConfig(vocab_size=vocab, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16, max_position_embeddings=32, num_labels=num_labels)
    return tf.BertForSequenceClassification(cfg)


class TupleBatches(unittest.TestCase):
    """Batches by position: the first integer tensor is input_ids, the last
    one labels when labels have a bound (the model's classifier here)."""

    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.model = _tiny_classifier()
        cls.ids = torch.randint(0, 100, (20, 8))
        cls.labels = torch.randint(0, 3, (20,))

    def test_ids_and_labels_of_a_tensor_dataset(self):
        from torch.utils.data import TensorDataset

        ids, labels = self.ids.clone(), self.labels.clone()
        self.assertTrue(preflight(self.model, data=DataLoader(TensorDataset(ids, labels), batch_size=4)).ok)
        ids[5, 3] = 104
        labels[9] = 3
        r = preflight(self.model, data=DataLoader(TensorDataset(ids, labels), batch_size=4, shuffle=True))
        found = {f["evidence"]["column"]: f for f in errors(r)}
        self.assertEqual(sorted(found), ["input_ids", "labels"])
        self.assertEqual((found["input_ids"]["rule"], found["input_ids"]["values"], found["input_ids"]["samples"]), ("DA101", [104], [{"dataset_index": 5}]))
        self.assertEqual((found["labels"]["rule"], found["labels"]["values"], found["labels"]["samples"]), ("DA201", [3], [{"dataset_index": 9}]))

    def test_ids_alone_and_a_mask_between(self):
        from torch.utils.data import TensorDataset

        ids = self.ids.clone()
        ids[2, 0] = 104
        (f,) = errors(preflight(self.model, data=DataLoader(TensorDataset(ids), batch_size=4)))
        self.assertEqual((f["evidence"]["column"], f["samples"]), ("input_ids", [{"dataset_index": 2}]))
        # (ids, attention mask, labels): the mask is not read; labels are the last.
        mask = torch.ones_like(ids)
        labels = self.labels.clone()
        labels[7] = 4
        r = preflight(self.model, data=DataLoader(TensorDataset(ids, mask, labels), batch_size=4))
        self.assertEqual(sorted(r.data[0]["columns"]), ["input_ids", "labels"])
        self.assertEqual(sorted(f["evidence"]["column"] for f in errors(r)), ["input_ids", "labels"])


class LeavesNoTrace(unittest.TestCase):
    def test_the_loaders_own_generator_and_its_samplers_are_unchanged(self):
        from torch.utils.data import RandomSampler, TensorDataset

        model = _tiny_classifier()
        data = TensorDataset(torch.randint(0, 100, (40, 4)), torch.randint(0, 3, (40,)))

        def loaders():
            # PyTorch's reproducibility recipe: the loader's own seeded
            # generator; and a sampler with a generator of its own.
            yield DataLoader(data, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
            yield DataLoader(data, batch_size=8, sampler=RandomSampler(data, generator=torch.Generator().manual_seed(1)))
            yield DataLoader(data, batch_size=8, shuffle=True, num_workers=0, generator=torch.Generator().manual_seed(2), worker_init_fn=None)

        def first_epoch(loader):
            return [b[0].tolist() for b in loader]

        for plain, checked in zip(loaders(), loaders()):
            self.assertTrue(preflight(model, data=checked).ok)
            self.assertEqual(first_epoch(checked), first_epoch(plain))


class NeverPassesUnread(unittest.TestCase):
    """Data of which nothing could be checked is an error finding that says
    what could not be read and how to point preflight at it."""

    def assert_unread(self, report, words):
        self.assertFalse(report.ok)
        (f,) = errors(report)
        self.assertEqual((f["rule"], f["name"]), ("DA601", "preflight-nothing-checked"))
        self.assertIn("preflight checked nothing in data", f["summary"])
        self.assertIn(words, f["summary"])
        self.assertTrue(any("input_ids" in fix for fix in f["fixes"]), f["fixes"])

    def test_strings_unknown_columns_and_no_bound(self):
        model = _tiny_classifier()
        self.assert_unread(preflight(model, data=DataLoader(["a b", "c d"], batch_size=2)), "list of 2: [str, str]")
        self.assert_unread(preflight(model, data={"text": ["a"], "tokens": [[1, 2]]}), "['text', 'tokens']")
        self.assert_unread(preflight(model, data=DataLoader([{"ids": torch.tensor([1, 104])}], batch_size=1)), "keys ['ids']")
        # A model without an input embedding, and no tokenizer or num_classes.
        self.assert_unread(preflight(torch.nn.Linear(4, 2), data=DataLoader(torch.utils.data.TensorDataset(torch.tensor([[1, 104]])))), "nothing to check it against")


class UserObjectsThatFail(unittest.TestCase):
    """What a user's object raises comes back naming the object and the step."""

    def setUp(self):
        self.model = _tiny_classifier()

    def raised(self, data):
        # Exported where users catch it: a RuntimeError, as before.
        self.assertTrue(issubclass(devassert.PreflightReadError, RuntimeError))
        self.assertIn("PreflightReadError", devassert.__all__)
        with self.assertRaises(devassert.PreflightReadError) as ctx:
            devassert.preflight(self.model, data=data)
        self.assertIsNotNone(ctx.exception.__cause__)
        return str(ctx.exception)

    def test_lengths_meta_tensors_and_collate(self):
        class Sized(Dataset):
            def __init__(self, n, device="cpu"):
                self.n, self.device = n, device

            def __len__(self):
                return self.n

            def __getitem__(self, i):
                return {"input_ids": torch.tensor([1, 2], device=self.device)}

        for n in (-1, 10**20):
            text = self.raised(DataLoader(Sized(n), batch_size=2))
            self.assertIn("reading data source 'data' (torch.DataLoader): len() of the dataset (Sized) raised", text)
        text = self.raised(DataLoader(Sized(4, "meta"), batch_size=2))
        self.assertIn("reading batch 0 (dict with keys ['input_ids']) raised NotImplementedError", text)

        def collate(items):
            raise ValueError("no padding token")

        text = self.raised(DataLoader(Sized(4), batch_size=2, collate_fn=collate))
        self.assertIn("collate_fn (UserObjectsThatFail.test_lengths_meta_tensors_and_collate.<locals>.collate) on batch 0 raised ValueError: no padding token", text)


class NoBinary(unittest.TestCase):
    def test_data_to_scan_without_the_binary_says_what_is_missing(self):
        import subprocess
        import sys

        code = (
            "import numpy as np, devassert\n"
            "assert devassert.preflight(data=np.array([0, 1]), num_classes=3).ok  # clean: nothing to scan\n"
            "try:\n"
            "    devassert.preflight(data=np.array([0, 7]), num_classes=3)\n"
            "except RuntimeError as e:\n"
            "    print(e)\n"
        )
        env = dict(os.environ, PATH=os.path.dirname(sys.executable))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("the devassert binary is not installed", out.stdout)


class Report(unittest.TestCase):
    def test_contract_envelope_and_renderings(self):
        tok = gpt2_tokenizer()
        tok.add_tokens(["<a>"])
        r = preflight(gpt2_lm(gpt2_tokenizer()), tok, np.array([[1, 2, 501]]))
        d = json.loads(r.to_json())
        self.assertEqual((d["schema"], d["command"], d["exit_code"], d["fallout"]), ("devassert/1", "preflight", 1, []))
        for f in d["findings"]:
            for key in ("rule", "name", "op_family", "summary", "severity", "evidence", "location", "values", "causes", "fixes"):
                self.assertIn(key, f)
            self.assertEqual(f["name"], devassert._findings.rules.RULES[f["rule"]]["name"])
        self.assertIn("error[DA101] embedding-index-out-of-range", str(r))
        self.assertIn("<code>DA101</code>", r._repr_html_())
        self.assertFalse(bool(r))

    def test_text_from_the_users_objects_is_inert(self):
        # A split named with an OSC title escape, a BEL and a bidi override:
        # printed raw they would drive the terminal and reorder the line.
        name = "train\x1b]0;pwned\x07\u202efdp.exe"
        data = {name: datasets.Dataset.from_dict({"input_ids": [[1, 2, 50300]]})}
        r = preflight(gpt2_lm(gpt2_tokenizer()), gpt2_tokenizer(), data)
        for shown in (r.text(), str(r), r._repr_html_(), "\n".join(r.read_lines())):
            for raw in ("\x1b", "\x07", "\u202e"):
                self.assertNotIn(raw, shown)
        self.assertIn("train\\x1b]0;pwned\\x07\\u{202e}fdp.exe", r.text())
        # The JSON keeps the name as it is (its escaping is JSON's).
        self.assertEqual(json.loads(r.to_json())["preflight"]["data"][0]["name"], name)
        # Long text is cut as the CLI cuts it, with what was left.
        from devassert._findings import inert

        self.assertEqual(inert.line("é" * 600), "é" * 512 + "… [176 more bytes]")
        self.assertEqual(inert.line("a\tb\x9bc\r\n"), "a\tb\\u{9b}c\\r\\n")

    def test_the_schema_check_rejects_what_the_contract_does_not_name(self):
        from contract_check import valid

        r = preflight(data=np.array([0, 7]), num_classes=3)
        r.findings[0]["locations"][0]["dataset"] = "train"  # not a field of a place
        with self.assertRaises(AssertionError):
            valid(r)


if __name__ == "__main__":
    unittest.main()
