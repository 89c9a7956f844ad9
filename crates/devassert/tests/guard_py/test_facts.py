"""The cause engine in Python (``devassert._findings.facts``) on the cases
the Rust engine is held to (crates/devassert-core/tests/fact_cases.json):
one definition of the causes, the same answers from both.

Run: python -m unittest test_facts (PYTHONPATH must hold python/).
"""

import json
import os
import subprocess
import unittest

from devassert._findings import facts

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "..", "..", "devassert-core", "tests", "fact_cases.json")


class SharedCases(unittest.TestCase):
    def test_every_shared_case_decides_as_written(self):
        with open(CASES, encoding="utf-8") as f:
            cases = json.load(f)["cases"]
        self.assertGreaterEqual(len(cases), 10)
        for case in cases:
            with self.subTest(case["name"]):
                kind = case["kind"]
                f = facts.value_facts(dict((v, c) for v, c in case["values"]), case.get("low", 0), case["high"], kind)
                f.update(case.get("facts") or {})
                causes, ruled_out = facts.decide(kind, f)
                ids = [c["id"] for c in causes]
                fixes = facts.fixes_of(causes)
                if case.get("causes"):
                    self.assertEqual(ids, case["causes"], causes)
                if case.get("first"):
                    self.assertEqual(ids[:1], [case["first"]], causes)
                if case.get("fixes"):
                    self.assertEqual(fixes, case["fixes"])
                for part in case.get("fixes_has", []):
                    self.assertTrue(any(part in x for x in fixes), (part, fixes))
                for part in case.get("no_fix_has", []):
                    self.assertFalse(any(part in x for x in fixes), (part, fixes))
                for cid in case.get("ruled_out", []):
                    self.assertTrue(any(r.startswith(cid + ":") for r in ruled_out), (cid, ruled_out))
                if case.get("no_ruled_out"):
                    self.assertEqual(ruled_out, [])
                unfit = facts.unfit(kind, f)
                for cid in ids:
                    self.assertNotIn(cid, unfit, "a listed cause fits some value")
                for cid in case.get("unfit", []):
                    self.assertIn(cid, unfit)
                for cid in case.get("not_unfit", []):
                    self.assertNotIn(cid, unfit)
                # Every checked fix failed: the cause is kept with none.
                for cid in case.get("fixes_refuted", []):
                    kept = next(c for c in causes if c["id"] == cid)
                    self.assertEqual(kept["fixes"], [], kept)
                for part in case.get("why_has", []):
                    self.assertIn(part, causes[0]["why"])


def _fixes(f):
    return list(f["fixes"]) + [x for c in f["causes"] for x in c.get("fixes") or []]


class IndexOps(unittest.TestCase):
    """The guard's findings of index ops (x[idx], gather) decided by the
    engine's `index` causes, as explain decides a log's stated values."""

    def setUp(self):
        global torch, guarded
        import torch
        from stories import guarded

    def test_an_index_past_the_dim_shows_no_negative_marker_fix(self):
        x = torch.randn(10)
        f = guarded(lambda: x[torch.tensor([3, 12])])
        self.assertEqual(f["rule"], "DA111", f)
        ids = [c["id"] for c in f["causes"]]
        self.assertEqual(ids[:1], ["index_ge_dim_size"], f["causes"])
        self.assertNotIn("negative_index", ids)
        self.assertFalse([x for x in _fixes(f) if "marker" in x or "idx >= 0" in x], _fixes(f))
        # explain, given the CPU error of the same op, puts the same cause first.
        log = "IndexError: index 12 is out of bounds for dimension 0 with size 10\n"
        out = subprocess.run(["devassert", "explain", "--format", "json", "-"], input=log, capture_output=True, text=True, check=False)
        e = json.loads(out.stdout)["findings"][0]
        self.assertEqual(e["causes"][0]["id"], "index_ge_dim_size", e["causes"])
        self.assertFalse([x for x in _fixes(e) if "marker" in x or "idx >= 0" in x], _fixes(e))

    def test_a_negative_gather_index_is_a_marker_and_no_index_past_the_dim(self):
        x = torch.randn(2, 10)
        idx = torch.tensor([[0, -1], [2, -1]])
        f = guarded(lambda: torch.gather(x, 1, idx))
        self.assertEqual(f["rule"], "DA121", f)
        ids = [c["id"] for c in f["causes"]]
        self.assertEqual(ids[:1], ["negative_index"], f["causes"])
        self.assertNotIn("index_ge_dim_size", ids)
        self.assertTrue(any("keep = idx >= 0" in x for x in f["fixes"]), f["fixes"])

    def test_indices_counted_from_one_are_off_by_one_and_the_fix_is_checked(self):
        x = torch.randn(3, 10)
        idx = torch.arange(1, 11).repeat(3, 1).flip(-1)
        f = guarded(lambda: torch.gather(x, 1, idx))
        self.assertEqual(f["causes"][0]["id"], "off_by_one", f["causes"])
        self.assertTrue(f["fixes"][0].startswith("count from 0: subtract 1 from the indices"), f["fixes"])
        self.assertIsNone(guarded(lambda: torch.gather(x, 1, idx - 1)))

    def test_a_multi_margin_target_past_the_classes_is_a_label_cause(self):
        # DA206's targets are class labels: the engine's label causes, not
        # an index cause the rule does not list.
        import torch.nn.functional as F

        f = guarded(lambda: F.multi_margin_loss(torch.randn(3, 5), torch.tensor([0, 2, 5])))
        self.assertEqual(f["rule"], "DA206", f)
        self.assertEqual(f["causes"][0]["id"], "label_ge_num_classes", f["causes"])
        self.assertFalse([c for c in f["causes"] if c["id"] in ("negative_label", "index_ge_dim_size")], f["causes"])

    def test_negative_repeat_counts_are_named_as_counts(self):
        # DA501: only a negative count is bad; its cause speaks of counts,
        # not of indices past a dim.
        f = guarded(lambda: torch.repeat_interleave(torch.arange(3), torch.tensor([2, -1, 1])))
        self.assertEqual(f["rule"], "DA501", f)
        self.assertEqual([c["id"] for c in f["causes"]], ["negative_index"], f["causes"])
        self.assertIn("negative repeat counts (down to -1)", f["causes"][0]["why"])


class Expressions(unittest.TestCase):
    def test_unknown_facts_decide_nothing(self):
        f = {"a": 2, "b": 3}
        self.assertEqual(facts.evaluate(facts.parse("a + b * 2"), f), 8.0)
        self.assertIsNone(facts.evaluate(facts.parse("c > 1"), f))
        self.assertTrue(facts.fails("c > 1 && a > 5", f))
        self.assertTrue(facts.holds("c > 1 || a > 1", f))
        self.assertFalse(facts.fails("!(c == 1)", f))
        self.assertEqual(facts.evaluate(facts.parse("known(c) + known(a)"), f), 1.0)
        self.assertEqual(facts.render("crop to {a - 1} of {b}", f), "crop to 1 of 3")
        self.assertIsNone(facts.render("len {c}", f))
        for bad in ("a +", "(a", "a $ b"):
            with self.assertRaises(ValueError):
                facts.parse(bad)


if __name__ == "__main__":
    unittest.main()
