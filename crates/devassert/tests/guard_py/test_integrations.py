"""The callbacks in real training loops on CPU: a transformers `Trainer` and
a `lightning.Trainer`, each run for two steps on a valid setup (silent,
guard on during the run and back off after) and stopped before its first
step by a planted mismatch (the finding logged, PreflightError raised);
`warn_only` logs and trains. Needs the devassert binary on PATH."""

import inspect
import logging
import shutil
import os
import tempfile
import unittest

import datasets
import torch
import transformers as tf
from torch.utils.data import DataLoader

import devassert
from contract_check import valid
from devassert._guard import intercept as _intercept
from preflight_fixtures import SENTENCES, bert_classifier, bert_tokenizer

datasets.disable_progress_bars()
tf.utils.logging.disable_progress_bar()


class Steps(tf.TrainerCallback):
    """Records the guard level at each step the Trainer takes."""

    def __init__(self):
        self.levels = []

    def on_step_begin(self, args, state, control, **kwargs):
        self.levels.append(_intercept.current_level())


def hf_dataset(tok, labels, tmp):
    ds = datasets.Dataset.from_dict({"text": SENTENCES, "label": labels})
    path = os.path.join(tmp, f"ds{len(os.listdir(tmp))}")
    ds.save_to_disk(path)
    return datasets.load_from_disk(path).map(lambda b: tok(b["text"], truncation=True), batched=True).remove_columns(["text"])


class HFTrainer(unittest.TestCase):
    def setUp(self):
        from devassert.integrations.transformers import DevassertCallback

        self.Callback = DevassertCallback
        self.tmp = tempfile.mkdtemp(prefix="devassert-trainer-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.tok = bert_tokenizer()
        torch.manual_seed(0)
        self.model = bert_classifier(self.tok)
        _intercept.set_level("off")

    def trainer(self, train, callback, eval_dataset=None):
        args = tf.TrainingArguments(output_dir=self.tmp, max_steps=2, per_device_train_batch_size=4, report_to=[], use_cpu=True, save_strategy="no", logging_strategy="no", disable_tqdm=True)
        steps = Steps()
        # The tokenizer's keyword: `processing_class` since transformers 4.46.
        tok = {"processing_class" if "processing_class" in inspect.signature(tf.Trainer).parameters else "tokenizer": self.tok}
        t = tf.Trainer(model=self.model, args=args, train_dataset=train, eval_dataset=eval_dataset, data_collator=tf.DataCollatorWithPadding(self.tok), callbacks=[callback, steps], **tok)
        return t, steps

    def test_valid_setup_trains_with_the_guard_on_and_off_after(self):
        cb = self.Callback()
        t, steps = self.trainer(hf_dataset(self.tok, [0, 1, 2, 0, 1, 2, 0, 1], self.tmp), cb, eval_dataset=hf_dataset(self.tok, [2] * 8, self.tmp))
        t.train()
        self.assertEqual(valid(cb.report).findings, [])
        self.assertEqual([d["name"] for d in valid(cb.report).data], ["train_dataset", "eval_dataset"])
        self.assertEqual(steps.levels, ["on", "on"])
        self.assertEqual(_intercept.current_level(), "off")

    def test_bad_label_stops_before_the_first_step(self):
        cb = self.Callback()
        t, steps = self.trainer(hf_dataset(self.tok, [0, 1, 2, 0, 1, 5, 0, 1], self.tmp), cb)
        with self.assertLogs("transformers.trainer", level="ERROR") as logs, self.assertRaises(devassert.PreflightError) as raised:
            t.train()
        self.assertEqual(steps.levels, [])
        self.assertEqual(t.state.global_step, 0)
        self.assertIn("error[DA201] cross-entropy-target-out-of-range", "\n".join(logs.output))
        self.assertIn("dataset sample 5 of train_dataset, column label", str(raised.exception))
        self.assertEqual(_intercept.current_level(), "off")

    def test_bad_eval_dataset_is_found_too(self):
        t, _ = self.trainer(hf_dataset(self.tok, [0] * 8, self.tmp), self.Callback(), eval_dataset={"dev": hf_dataset(self.tok, [0, 0, 0, 0, 0, 0, 0, 3], self.tmp)})
        with self.assertRaises(devassert.PreflightError) as raised:
            t.train()
        (f,) = valid(raised.exception.report).errors
        self.assertEqual((f["evidence"]["data"], f["samples"]), ("eval_dataset[dev]", [{"dataset_index": 7, "split": "eval_dataset[dev]"}]))

    def test_torch_dataset_is_drawn_through_the_trainers_loader(self):
        enc = self.tok(SENTENCES)
        rows = [{"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i], "labels": 4 if i == 6 else i % 3} for i in range(len(SENTENCES))]
        t, steps = self.trainer(rows, self.Callback())
        with self.assertRaises(devassert.PreflightError) as raised:
            t.train()
        (f,) = valid(raised.exception.report).errors
        self.assertEqual((f["rule"], f["evidence"]["column"], f["samples"]), ("DA201", "labels", [{"dataset_index": 6, "split": "train_dataset"}]))
        self.assertEqual(steps.levels, [])

    def test_warn_only_logs_and_trains(self):
        self.tok.add_tokens(["<unused>"])  # an error preflight finds; no batch holds the token
        cb = self.Callback(warn_only=True)
        t, steps = self.trainer(hf_dataset(self.tok, [0, 1, 2, 0, 1, 2, 0, 1], self.tmp), cb)
        with self.assertLogs("transformers.trainer", level="ERROR") as logs:
            t.train()
        self.assertIn("added_tokens_no_resize", "\n".join(logs.output))
        self.assertEqual(steps.levels, ["on", "on"])
        self.assertFalse(valid(cb.report).ok)


class LightningFit(unittest.TestCase):
    def setUp(self):
        import lightning as L

        from devassert.integrations.lightning import DevassertCallback

        self.L = L
        self.Callback = DevassertCallback
        self.tok = bert_tokenizer()
        self.tmp = tempfile.mkdtemp(prefix="devassert-lightning-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        _intercept.set_level("off")

    def module(self, train_labels, val_labels):
        L, tok = self.L, self.tok
        levels = []

        def loader(labels):
            enc = tok(SENTENCES, padding=True, return_tensors="pt")
            rows = [{"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i], "labels": torch.tensor(labels[i])} for i in range(len(SENTENCES))]
            return DataLoader(rows, batch_size=4, shuffle=True)

        class Classifier(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.model = bert_classifier(tok)
                self.tokenizer = tok

            def training_step(self, batch, i):
                levels.append(_intercept.current_level())
                return self.model(**batch).loss

            def validation_step(self, batch, i):
                return self.model(**batch).loss

            def configure_optimizers(self):
                return torch.optim.SGD(self.parameters(), lr=0.01)

        class Data(L.LightningDataModule):
            def train_dataloader(self):
                return loader(train_labels)

            def val_dataloader(self):
                return loader(val_labels)

        return Classifier(), Data(), levels

    def fit(self, module, data, callback):
        trainer = self.L.Trainer(max_steps=2, callbacks=[callback], accelerator="cpu", logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False, default_root_dir=self.tmp)
        trainer.fit(module, datamodule=data)
        return trainer

    def test_valid_fit_runs_two_steps_guarded(self):
        module, data, levels = self.module([0, 1, 2, 0, 1, 2, 0, 1], [2, 1, 0, 2, 1, 0, 2, 1])
        cb = self.Callback()
        trainer = self.fit(module, data, cb)
        self.assertEqual(trainer.global_step, 2)
        self.assertEqual(valid(cb.report).findings, [])
        self.assertEqual(sorted(d["name"] for d in valid(cb.report).data), ["train", "val"])
        self.assertEqual(levels, ["on", "on"])
        self.assertEqual(_intercept.current_level(), "off")

    def test_bad_val_label_stops_before_the_sanity_check(self):
        module, data, levels = self.module([0, 1, 2, 0, 1, 2, 0, 1], [2, 1, 0, 2, 9, 0, 2, 1])
        with self.assertLogs("lightning.pytorch", level="ERROR") as logs, self.assertRaises(devassert.PreflightError) as raised:
            self.fit(module, data, self.Callback())
        (f,) = valid(raised.exception.report).errors
        self.assertEqual((f["rule"], f["evidence"]["data"], f["samples"]), ("DA201", "val", [{"dataset_index": 4, "split": "val"}]))
        self.assertIn("DA201", "\n".join(logs.output))
        self.assertEqual(levels, [])
        self.assertEqual(_intercept.current_level(), "off")

    def test_tokenizer_grown_without_resize(self):
        module, data, levels = self.module([0, 1, 2, 0, 1, 2, 0, 1], [0] * 8)
        self.tok.add_tokens(["<new>"])
        with self.assertRaises(devassert.PreflightError) as raised:
            self.fit(module, data, self.Callback())
        self.assertEqual([f["causes"][0]["id"] for f in valid(raised.exception.report).errors], ["added_tokens_no_resize"])


class Missing(unittest.TestCase):
    def test_a_missing_library_is_named(self):
        import subprocess
        import sys

        code = "import sys; sys.modules['lightning'] = None; sys.modules['lightning.pytorch'] = None; sys.modules['pytorch_lightning'] = None\ntry:\n import devassert.integrations.lightning\nexcept ImportError as e:\n print(e)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
        self.assertIn("pip install lightning", out.stdout)


if __name__ == "__main__":
    logging.basicConfig()
    unittest.main()
