"""The cause engine in Python (``devassert._findings.facts``) on the cases
the Rust engine is held to (crates/devassert-core/tests/fact_cases.json):
one definition of the causes, the same answers from both.

Run: python -m unittest test_facts (PYTHONPATH must hold python/).
"""

import json
import os
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
                for part in case.get("why_has", []):
                    self.assertIn(part, causes[0]["why"])


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
