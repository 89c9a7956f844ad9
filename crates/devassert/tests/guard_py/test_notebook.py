"""The notebook extension, end to end: nbclient runs a notebook built with
nbformat in a real IPython kernel (ipykernel) on CPU, and each cell's output
is read back.

`%devassert explain` on an error the guard did not stop runs the devassert
binary: the test runner puts the built one on PATH (`python -m devassert`
finds it the same way when the wheel is not installed).
"""

import re
import unittest

import nbformat
from nbclient import NotebookClient

CELLS = [
    "%load_ext devassert",  # 1
    "import torch\nemb = torch.nn.Embedding(10, 4)\nids = torch.tensor([[1, 2, 12]])\nemb(ids)",  # 2
    "%devassert explain",  # 3
    "print('still running', tuple(emb(torch.tensor([3])).shape))",  # 4
    "%devassert off",  # 5
    "emb(ids)",  # 6
    "%devassert explain",  # 7
    "%devassert",  # 8: explained already: the level
    "%devassert strict",  # 9
    "torch.nn.functional.cross_entropy(torch.randn(2, 3), torch.tensor([0, 5]))",  # 10
    "%devassert on",  # 11
    # The text a CUDA device-side assert leaves in a notebook (the kernel
    # prints its assertion lines to the kernel's terminal, not the cell).
    "raise RuntimeError('CUDA error: device-side assert triggered\\n'\n"
    "    'CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\\n'\n"
    "    'For debugging consider passing CUDA_LAUNCH_BLOCKING=1\\n'\n"
    "    'Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\\n')",  # 12
    "%devassert",  # 13: a new error: explained
    "raise ValueError('unrelated')",  # 14
    "%devassert explain",  # 15
    "%devassert loudly",  # 16
    "%unload_ext devassert",  # 17
    "emb(ids)",  # 18
    "%devassert",  # 19
    "print('alive')",  # 20
]

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run_notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True).execute()
    return nb


def stream(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def error(cell):
    errors = [o for o in cell.outputs if o.output_type == "error"]
    if not errors:
        return None
    e = errors[0]
    return e.ename, e.evalue, ANSI.sub("", "\n".join(e.traceback))


class Notebook(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cells = run_notebook().cells

    def out(self, n):
        return stream(self.cells[n - 1])

    def err(self, n):
        return error(self.cells[n - 1])

    def test_load_ext_turns_the_guard_on_without_importing_torch(self):
        self.assertIn("devassert: guard level 'on' from the moment torch is imported", self.out(1))

    def test_a_bad_index_is_stopped_with_its_diagnosis_in_the_cell(self):
        name, value, tb = self.err(2)
        self.assertEqual(name, "DeviceAssertPreventedIndexError")
        self.assertTrue(value.startswith("index out of range in self\n"), value)
        self.assertIn("devassert: embedding: argument `input` (shape [1, 3], torch.int64, cpu) holds 1 value(s) outside [0, 10): 12", value)
        self.assertIn("at Cell In[2]:4", value)
        self.assertIn("[DA101 embedding-index-out-of-range]", value)
        self.assertIn("fix: ", value)
        self.assertIn("Cell In[2], line 4", tb)

    def test_explain_gives_the_guards_diagnosis(self):
        text = self.out(3)
        self.assertIn("the guard stopped this op before it ran; the kernel and its CUDA context are intact", text)
        for part in (
            "DA101 embedding-index-out-of-range",
            "op: embedding, argument `input`",
            "bad values: 12 (1 value outside [0, 10))",
            "line: Cell In[2], line 4\n    | emb(ids)",
            "likely causes, most likely first:\n    1. ",
            "next steps:\n    1. ",
        ):
            self.assertIn(part, text)

    def test_the_kernel_keeps_running(self):
        self.assertIsNone(self.err(4))
        self.assertEqual(self.out(4), "still running (1, 4)\n")
        self.assertEqual(self.out(20), "alive\n")

    def test_off_restores_torchs_own_error(self):
        self.assertEqual(self.out(5), "devassert: guard level 'off'\n")
        name, value, _ = self.err(6)
        self.assertEqual((name, value), ("IndexError", "index out of range in self"))

    def test_explain_reads_an_unguarded_error_through_devassert_explain(self):
        text = self.out(7)
        self.assertTrue(text.startswith("devassert explain, on the traceback of the last error:\nDA101 embedding-index-out-of-range"), text)
        self.assertIn("error: IndexError: index out of range in self", text)
        self.assertIn("line: Cell In[6], line 1\n    | emb(ids)", text)
        self.assertIn("next steps:\n    1. `%devassert on` and run the cell again", text)
        self.assertNotIn("ipykernel_", text)
        self.assertEqual(self.out(8), "devassert: guard level 'off'\n")

    def test_levels_switch(self):
        self.assertEqual(self.out(9), "devassert: guard level 'strict'\n")
        name, value, _ = self.err(10)
        self.assertEqual(name, "DeviceAssertPreventedIndexError")
        self.assertIn("[DA201 cross-entropy-target-out-of-range]", value)
        self.assertIn("at Cell In[10]:1", value)
        self.assertEqual(self.out(11), "devassert: guard level 'on'\n")

    def test_a_cuda_error_gets_notebook_advice(self):
        self.assertEqual(self.err(12)[0], "RuntimeError")
        text = self.out(13)
        self.assertTrue(text.startswith("devassert explain, on the traceback of the last error:\nDA001 "), text)
        self.assertIn("noticed at: Cell In[12], line 1 (where Python noticed it", text)
        self.assertIn("1. this kernel's CUDA context is lost", text)
        self.assertIn("restart the kernel, run `%load_ext devassert` first", text)
        # No script to rerun in a notebook.
        self.assertNotIn("devassert run", text)
        self.assertNotIn("train.py", text)

    def test_an_unrelated_error_is_said_to_be_one(self):
        self.assertEqual(self.out(15), "devassert: no device-side failure in the last error (ValueError: unrelated)\n")
        self.assertEqual(self.out(16), "devassert: unknown argument 'loudly'\nusage: %devassert [on|async|strict|off|explain|status]\n")

    def test_unload_ext_removes_the_guard_and_the_magic(self):
        self.assertEqual(self.err(18)[:2], ("IndexError", "index out of range in self"))
        self.assertIn("UsageError: Line magic function `%devassert` not found.", self.out(19))


if __name__ == "__main__":
    unittest.main()
