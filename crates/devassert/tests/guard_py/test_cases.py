"""The guard in real programs: invisible on valid ones, faithful on invalid
ones. Each test runs the same code plain and guarded (on every guard path:
the CPU path, the accelerator path and the async path, the last two forced on
CPU tensors) and compares.

Run: python -m unittest test_cases (PYTHONPATH must hold python/).
"""

import contextlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
import textwrap
import unittest
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import devassert
from devassert._checks import deferred as _async
from devassert._checks import embedding as _check_embedding
from devassert._guard import intercept as _intercept
from devassert._checks import violation as _violation

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "python"))


# (mode, level, accelerator path forced on CPU tensors, async path forced on them)
MODES = (
    ("plain", "off", False, False),
    ("cpu", "on", False, False),
    ("precheck", "on", True, False),
    ("async", "async", True, True),
)


GUARDED = [m[0] for m in MODES[1:]]


def _set_mode(level, precheck, fake):
    _violation.PRECHECK_CPU = precheck
    _async.FAKE_DEVICE = fake
    _async.reset()
    _intercept.set_level(level)


def _outcome(fn, mode):
    """fn's result or exception. The async path raises a finding when its
    summary is polled (at the next guarded op, at the latest at exit): polled
    here at once. An error raised at once must leave nothing to raise later."""
    try:
        got = fn()
    except Exception as e:  # noqa: BLE001
        got = e
    try:
        _async.poll(wait=True)
    except Exception as late:  # noqa: BLE001
        if isinstance(got, Exception):
            return AssertionError(f"{mode}: raised {got!r} at once and {late!r} later")
        return late
    return got


def plain_and_guarded(fn, modes=MODES):
    """[(mode, result or exception)] for plain and every guard path."""
    out = []
    for mode, level, precheck, fake in modes:
        _set_mode(level, precheck, fake)
        try:
            out.append((mode, _outcome(fn, mode)))
        finally:
            _set_mode("off", False, False)
    return out


@contextlib.contextmanager
def threads(n):
    """torch's intra-op thread count set to `n` (what OMP_NUM_THREADS sets at start-up)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def forced(mode):
    """A line that guards a script on `mode`'s path (a mode of MODES); the
    script forces the async path's deferred raise with `_async.poll(wait=True)`."""
    level, precheck, fake = next(m[1:] for m in MODES if m[0] == mode)
    return f"from devassert._checks import deferred as _async; from devassert._checks import violation as _violation; _violation.PRECHECK_CPU = {precheck}; _async.FAKE_DEVICE = {fake}; devassert.guard({level!r})"


def run_script(code, env=None, cwd=None):
    full = dict(os.environ, PYTHONPATH=PYTHONPATH, **(env or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full, cwd=cwd, timeout=300)


class ValidProgramsPass(unittest.TestCase):
    def assert_same_everywhere(self, fn):
        results = plain_and_guarded(fn)
        plain = results[0][1]
        self.assertNotIsInstance(plain, Exception, f"the program itself fails: {plain!r}")
        for mode, got in results[1:]:
            self.assertNotIsInstance(got, Exception, f"{mode}: {got!r}")
            torch.testing.assert_close(got, plain, rtol=0, atol=0, msg=mode)

    def test_bernoulli_with_a_float_p_ignores_the_shape_tensors_values(self):
        t = torch.tensor([3.0, -2.0, 7.5])

        def fn():
            torch.manual_seed(0)
            return torch.bernoulli(t, 0.5)

        self.assert_same_everywhere(fn)

    def test_a_0d_bool_key_consumes_no_dimension(self):
        y = torch.arange(12).reshape(6, 2)
        self.assert_same_everywhere(lambda: y[torch.tensor(True), torch.tensor([5])])

    def test_ignore_index_as_numpy_integer_and_0d_tensor(self):
        x = torch.randn(3, 4)
        t = torch.tensor([0, 255, 2])
        self.assert_same_everywhere(lambda: F.cross_entropy(x, t, ignore_index=np.int64(255)))
        self.assert_same_everywhere(lambda: F.cross_entropy(x, t, ignore_index=torch.tensor(255)))
        self.assert_same_everywhere(lambda: F.nll_loss(x.log_softmax(1), t, ignore_index=np.int32(255)))

    def test_bernoulli_with_the_default_p_ignores_the_tensors_values(self):
        # Tensor.bernoulli_() draws with p=0.5: its own values are overwritten, not probabilities.
        def fn():
            torch.manual_seed(0)
            return torch.full((4,), 3.0).bernoulli_()

        self.assert_same_everywhere(fn)

    def test_a_bool_mask_of_k_dims_consumes_k_dimensions(self):
        x = torch.arange(24).reshape(2, 3, 4)
        rows = [[True, False, True], [False, False, True]]
        idx = torch.tensor([3, 3, 3])  # in range for dimension 2 (4), not for dimension 1 (3)
        for mask in (np.array(rows), rows, torch.tensor(rows)):
            self.assert_same_everywhere(lambda: x[mask, idx])

            def assign(mask=mask):
                y = x.clone()
                y[mask, idx] = -1
                return y

            self.assert_same_everywhere(assign)
        # After an Ellipsis the dimensions are counted from the end.
        x4 = torch.arange(5 * 6 * 3 * 4).reshape(5, 6, 3, 4)
        self.assert_same_everywhere(lambda: x4[..., torch.tensor([5]), torch.ones(3, 4, dtype=torch.bool)])

    def test_a_short_list_of_sequences_is_read_as_a_tuple_of_items(self):
        # torch's (deprecated) numpy heuristic: x[[[0, 1], [1, 2]]] is x[[0, 1], [1, 2]].
        x = torch.arange(6).reshape(2, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.assert_same_everywhere(lambda: x[[[0, 1], [1, 2]]])

    def test_nested_tensor_through_transformer_encoder_layer(self):
        # Only the inference fast path takes NestedTensor input: an active
        # TorchFunctionMode would turn it off and this would raise.
        layer = torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True).eval()
        nested = torch.nested.nested_tensor([torch.randn(3, 16), torch.randn(5, 16)])

        def fn():
            with torch.no_grad():
                return torch.nested.to_padded_tensor(layer(nested), 0.0)

        self.assert_same_everywhere(fn)


class InvalidProgramsFailAsTheyWould(unittest.TestCase):
    def assert_same_error(self, fn, prevented=True):
        results = plain_and_guarded(fn)
        plain = results[0][1]
        self.assertIsInstance(plain, Exception)
        for mode, got in results[1:]:
            self.assertIsInstance(got, Exception, mode)
            if prevented:
                self.assertIsInstance(got, devassert.DeviceAssertPrevented, mode)
                self.assertIs(type(got).__mro__[2], type(plain), mode)
            else:
                self.assertIs(type(got), type(plain), f"{mode}: {got!r}")
            self.assertTrue(str(got).startswith(str(plain)), f"{mode}: {got}")
        return [got for _, got in results[1:]]

    def test_index_select_on_an_empty_dim_raises_torchs_runtime_error(self):
        self.assert_same_error(lambda: torch.index_select(torch.empty(0, 3), 0, torch.tensor([0])), prevented=False)

    def test_a_shape_error_wins_over_bad_values(self):
        x = torch.arange(20.0).reshape(4, 5)
        for got in self.assert_same_error(lambda: torch.gather(x, 1, torch.tensor([0, 9])), prevented=False):
            self.assertIn("same number of dimensions", str(got))
        self.assert_same_error(lambda: F.multi_margin_loss(torch.randn(0), torch.tensor([0])), prevented=False)

    def test_bad_values_keep_torchs_type_and_message(self):
        for got in self.assert_same_error(lambda: F.cross_entropy(torch.randn(3, 4), torch.tensor([0, 255, 2]))):
            self.assertIsInstance(got, IndexError)
            self.assertEqual(got.finding["causes"][0]["id"], "ignore_label_not_ignored")
            self.assertIn("--classes 4 --ignore 255", " ".join(got.finding["fixes"]))
        for got in self.assert_same_error(lambda: torch.multinomial(torch.tensor([[0.5, float("nan")]]), 1)):
            self.assertEqual(got.rule, "DA301")

    def test_an_index_after_a_2d_mask_is_checked_against_its_own_dimension(self):
        x = torch.arange(24).reshape(2, 3, 4)
        rows = [[True, False, True], [False, False, True]]
        for mask in (np.array(rows), rows, torch.tensor(rows)):
            for got in self.assert_same_error(lambda: x[mask, torch.tensor([4, 0, 0])]):
                self.assertIsInstance(got, IndexError)
                self.assertEqual((got.finding["evidence"]["argument"], got.finding["bound"]), ("index (dimension 2)", {"low": -4, "high": 4}))

    def test_a_numpy_integer_index_is_checked(self):
        x = torch.arange(6).reshape(2, 3)
        for got in self.assert_same_error(lambda: x[:, np.array([0, 5])]):
            self.assertEqual((got.finding["evidence"]["argument"], got.finding["values"]), ("index (dimension 1)", [5]))

    def test_the_second_of_two_list_indices_is_checked_against_its_own_dimension(self):
        x = torch.arange(6).reshape(2, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for key in (([0, 1], [1, 5]), [[0, 1], [1, 5]]):  # a tuple, and a list read as one
                for got in self.assert_same_error(lambda: x[key]):
                    self.assertEqual(got.finding["evidence"]["argument"], "index (dimension 1)")

    def test_a_mask_given_as_an_array_after_an_ellipsis_counts_as_one_dimension_there(self):
        # torch sizes the Ellipsis before converting the array: [5] lands on dimension 2 (3), the mask off the end.
        x4 = torch.arange(5 * 6 * 3 * 4).reshape(5, 6, 3, 4)
        for mask in (np.ones((3, 4), dtype=bool), np.ones((3, 4), dtype=bool).tolist()):
            self.assert_same_error(lambda: x4[..., torch.tensor([5]), mask], prevented=False)

    def test_embedding_bag_offsets_name_the_contract_they_break(self):
        w = torch.randn(10, 2)
        ids = torch.tensor([1, 2, 3, 4])
        # A bag that ends before it starts: the CUDA kernel asserts `end >= begin`.
        # Plain torch on CPU reads such a bag out of bounds: garbage sums with
        # one thread (torchrun's default), one of several errors with more,
        # and never an error in mode="max". Every guard path stops it before
        # the op, with the same error whatever the thread count.
        seen = {}
        for n in (1, 2, 3):
            with threads(n):
                for mode, got in plain_and_guarded(lambda: F.embedding_bag(ids, w, torch.tensor([0, 3, 2])), MODES[1:]):
                    self.assertIsInstance(got, devassert.DeviceAssertPrevented, mode)
                    self.assertIs(type(got).__mro__[2], RuntimeError, mode)
                    self.assertEqual((got.rule, got.finding["values"], got.finding["locations"][0]["index"]), ("DA103", [2], 2))
                    self.assertIn("non-decreasing", str(got))
                    self.assertIn("end >= begin", str(got))
                    self.assertNotIn("outside [0, 4]", str(got))
                    self.assertIn("this would fail a CUDA device-side assert", str(got))
                    seen.setdefault(mode, set()).add(str(got))
        self.assertEqual({mode: len(messages) for mode, messages in seen.items()}, dict.fromkeys(GUARDED, 1))
        self.assertTrue(str(next(iter(seen["cpu"]))).startswith("devassert: embedding_bag"), seen["cpu"])
        # The last offset is a bag's end only on CPU (CUDA ends the last bag
        # at len(input)): stopped on the CPU path alone, where it is undefined.
        with threads(1):
            last = F.embedding_bag(ids, w, torch.tensor([0, 3, 2]), mode="max", include_last_offset=True)
            self.assertEqual(last.shape, (2, 2))  # plain torch: no error, whatever the rows hold
            for mode, got in plain_and_guarded(lambda: F.embedding_bag(ids, w, torch.tensor([0, 3, 2]), mode="max", include_last_offset=True), MODES[1:]):
                if mode == "cpu":
                    self.assertIsInstance(got, devassert.DeviceAssertPrevented)
                    self.assertIn("the CPU op's result is undefined on this; on CUDA it fails no device-side assert", str(got))
                else:
                    self.assertNotIsInstance(got, Exception, mode)
        # The CPU op alone rejects a first offset other than 0 (CUDA reads it as 0), whatever the thread count.
        for got in self.assert_same_error(lambda: F.embedding_bag(ids, w, torch.tensor([1, 2]))):
            self.assertEqual((got.finding["values"], got.finding["locations"][0]["index"]), ([1], 0))
            self.assertIn("offsets[0] == 0", str(got))
            self.assertIn("on CUDA it fails no device-side assert", str(got))

    def test_an_op_writing_its_own_index_raises_torchs_overlap_error(self):
        ops = {
            "index_add_": lambda ind: ind.index_add_(0, ind, ind.clone()),
            "scatter_": lambda ind: ind.scatter_(0, ind, ind.clone()),
            "gather out=": lambda ind: torch.gather(ind, 0, ind, out=ind),
        }
        for name, op in ops.items():
            after = {}

            def fn(op=op, after=after):
                ind = torch.tensor([0, 1, 2])
                try:
                    return op(ind)
                finally:
                    after[_intercept.current_level(), _violation.PRECHECK_CPU] = ind.tolist()

            for got in self.assert_same_error(fn, prevented=False):
                self.assertIn("refer to a single memory location", str(got), name)
            self.assertEqual(list(after.values()), [[0, 1, 2]] * 4, (name, after))

    def test_the_true_count_min_and_max_are_reported(self):
        ids = torch.arange(200).unsqueeze(0)
        table = torch.randn(128, 2)
        for got in self.assert_same_error(lambda: F.embedding(ids, table)):
            f = got.finding
            self.assertEqual((f["count"], f["value_min"], f["value_max"]), (72, 128, 199))
            self.assertEqual(f["values"][-1], 199)
            self.assertIn("69 more", str(got))

    def test_exceptions_round_trip_through_pickle_in_a_fresh_process(self):
        _intercept.set_level("on")
        try:
            F.embedding(torch.tensor([5]), torch.randn(3, 2))
        except IndexError as e:
            blob = pickle.dumps(e)
        finally:
            _intercept.set_level("off")
        r = run_script(
            """
            import pickle, sys
            e = pickle.loads(sys.stdin.buffer.read()) if False else pickle.loads(bytes.fromhex(sys.argv[1]))
            assert isinstance(e, IndexError), type(e)
            print(type(e).__name__, e.finding["rule"], e.finding["values"])
            """.replace("sys.argv[1]", repr(blob.hex()))
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "DeviceAssertPreventedIndexError DA101 [5]")


class TheAcceleratorPathChecksWhatCudaAssertsOn(unittest.TestCase):
    def test_embedding_bag_offsets_are_rejected_exactly_where_the_kernel_asserts(self):
        # Bag b runs from offsets[b] (0 for b = 0) to offsets[b + 1] (len(input)
        # for the last bag; with include_last_offset the last offset is not a
        # bag); the kernel asserts end >= begin.
        cases = [
            ([0, 3, 2], False, [2]),
            ([0, 2, 2, 4], False, []),
            ([1, 2], False, []),  # offsets[0] is never read
            ([0, 5], False, [1]),  # the last bag would end (4) before it starts
            ([0, 5], True, []),  # one bag, 0..4: the last offset is not read
            ([0, 3, 2], True, []),
            ([0, 3, 1, 4], True, [2]),
            ([0, -1, 2], False, [1]),
            ([7], False, []),
        ]
        w, ids = torch.randn(10, 2), torch.tensor([1, 2, 3, 4])
        _violation.PRECHECK_CPU = True
        try:
            for offsets, include_last, bad in cases:
                args = (w, ids, torch.tensor(offsets), False, 0, False, None, include_last)
                found = _check_embedding.embedding_bag(args, {}, True, False)
                got = [] if found is None else found.mask.nonzero().flatten().tolist()
                self.assertEqual(got, bad, (offsets, include_last))
        finally:
            _violation.PRECHECK_CPU = False


class TheRestIsUntouched(unittest.TestCase):
    def test_warnings_keep_their_place(self):
        x = torch.randn(2, 3)
        places = {}
        for level in ("off", "on"):
            _intercept.set_level(level)
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    line = sys._getframe().f_lineno + 1
                    F.softmax(x)  # a Python warning of an unguarded op (stacklevel 2)
                    F.cross_entropy(x, torch.tensor([0, 1]), reduce=False)  # of a guarded functional
                    torch.tensor([1.0, 2.0]).log().var(correction=3)  # a C++ warning of an unguarded op
            finally:
                _intercept.set_level("off")
            places[level] = [(os.path.abspath(w.filename), w.lineno, str(w.message)[:40]) for w in caught]
        self.assertEqual(len(places["off"]), 3, places)
        self.assertEqual(places["on"], places["off"])
        self.assertEqual(places["on"][0][:2], (os.path.abspath(__file__), line))

    def test_unguarded_ops_are_not_rerouted(self):
        _intercept.set_level("on")
        try:
            self.assertIs(torch.matmul, torch._C._VariableFunctions.matmul)
            self.assertEqual(torch._C._len_torch_function_stack(), 0)
        finally:
            _intercept.set_level("off")

    def test_compilers_tracers_and_pickle_see_torchs_own_functions(self):
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = torch.nn.Embedding(10, 4)
                self.out = torch.nn.Linear(4, 3)

            def forward(self, ids, y):
                h = self.emb(ids)
                g = torch.gather(h, 2, torch.zeros_like(h, dtype=torch.long))
                z = h[:, torch.tensor([0, 1])]
                return F.cross_entropy(self.out(h + g).reshape(-1, 3), y.reshape(-1)) + z.sum()

        torch.manual_seed(0)
        model = Model()
        ids, y = torch.randint(0, 10, (2, 3)), torch.randint(0, 3, (2, 3))
        expected = model(ids, y)
        _intercept.set_level("on")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                runs = {
                    "compile eager": torch.compile(model, backend="eager", fullgraph=True),
                    "compile aot_eager": torch.compile(model, backend="aot_eager", fullgraph=True),
                    "jit.script": torch.jit.script(model),
                    "jit.trace": torch.jit.trace(model, (ids, y)),
                    "fx": torch.fx.symbolic_trace(model),
                    "export": torch.export.export(model, (ids, y)).module(),
                }
                for name, fn in runs.items():
                    torch.testing.assert_close(fn(ids, y), expected, msg=name)
            self.assertIs(pickle.loads(pickle.dumps(torch.gather)), torch.gather)
            self.assertIs(pickle.loads(pickle.dumps(torch.Tensor.index_add_)), torch.Tensor.index_add_)
        finally:
            _intercept.set_level("off")

    def test_an_expanded_index_is_not_copied_to_be_checked(self):
        code = """
            import resource, torch
            from devassert._guard import intercept as _intercept; from devassert._checks import violation as _violation
            x = torch.zeros(4, 8, dtype=torch.int8)
            idx = torch.tensor([0, 1, 2, 3]).view(4, 1).expand(4, 1 << 24)
            torch.gather(x, 1, idx)  # warm up: the output (64 MiB) exists in both runs
            if MODE:
                _violation.PRECHECK_CPU = True
                _intercept.set_level("on")
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            out = torch.gather(x, 1, idx)
            after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            print((after - before) // 1024)
        """
        grown = {}
        for mode in (0, 1):
            r = run_script(code.replace("MODE", str(mode)))
            self.assertEqual(r.returncode, 0, r.stderr)
            grown[mode] = int(r.stdout.split()[-1])
        # A flat copy of the index would be 512 MiB.
        self.assertLess(grown[1] - grown[0], 64, grown)


class WhereAndWhich(unittest.TestCase):
    def test_a_deep_library_stack_still_names_the_users_line(self):
        for mode in GUARDED:
            with self.subTest(mode):
                self.deep_library_stack(mode)

    def deep_library_stack(self, mode):
        with tempfile.TemporaryDirectory() as tmp:
            lib = os.path.join(tmp, "site-packages", "deeplib")
            os.makedirs(lib)
            body = ["import torch", "def f0(ids, table):", "    return torch.nn.functional.embedding(ids, table)"]
            for i in range(1, 14):
                body += [f"def f{i}(ids, table):", f"    return f{i - 1}(ids, table)"]
            with open(os.path.join(lib, "__init__.py"), "w") as fh:
                fh.write("\n".join(body) + "\n")
            user = os.path.join(tmp, "train.py")
            with open(user, "w") as fh:
                fh.write(
                    "import sys, torch, devassert\n"
                    f"sys.path.insert(0, {os.path.join(tmp, 'site-packages')!r})\n"
                    "import deeplib\n"
                    f"{forced(mode)}\n"
                    "try:\n"
                    "    deeplib.f13(torch.tensor([7]), torch.randn(4, 2))\n"
                    "    _async.poll(wait=True)\n"
                    "except IndexError as e:\n"
                    "    import json; print(json.dumps(e.finding))\n"
                )
            r = subprocess.run([sys.executable, user], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=PYTHONPATH), timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            f = json.loads(r.stdout)
            self.assertEqual((os.path.basename(f["location"]["file"]), f["location"]["line"]), ("train.py", 6))
            self.assertTrue(f["evidence"]["inner_frame"]["file"].endswith(os.path.join("deeplib", "__init__.py")))

    def test_a_caught_finding_and_an_uncaught_one(self):
        code = """
            import torch, devassert
            FORCED
            try:
                torch.gather(torch.zeros(2, 2), 1, torch.tensor([[0, 3], [0, 0]]))
                _async.poll(wait=True)
            except RuntimeError:
                pass
            if UNCAUGHT:
                torch.gather(torch.zeros(2, 2), 1, torch.tensor([[0, 4], [0, 0]]))
                _async.poll(wait=True)
        """
        for mode, uncaught in ((m, u) for m in GUARDED for u in (0, 1)):
            with self.subTest(mode=mode, uncaught=uncaught), tempfile.TemporaryDirectory() as reports:
                r = run_script(code.replace("UNCAUGHT", str(uncaught)).replace("FORCED", forced(mode)), env={"DEVASSERT_REPORT_DIR": reports})
                self.assertEqual(r.returncode, uncaught, r.stderr)
                names = sorted(os.listdir(reports))
                self.assertEqual([n.split("-")[0] for n in names], ["exit", "guard"])
                with open(os.path.join(reports, names[1])) as fh:
                    findings = [json.loads(line) for line in fh]
                with open(os.path.join(reports, names[0])) as fh:
                    record = json.load(fh)
                ids = [f["evidence"]["raise_id"] for f in findings]
                self.assertEqual(len(ids), 1 + uncaught)
                self.assertEqual(record["uncaught"], ids[1:])

    def test_dataset_indices_with_0_and_2_workers(self):
        code = """
            import json, torch, devassert
            from torch.utils.data import DataLoader, Dataset

            class Tokens(Dataset):
                def __len__(self):
                    return 40
                def __getitem__(self, i):
                    bad = i in (13, 27)
                    return {"input_ids": torch.tensor([1, 2, 60 if bad else 3]), "label": torch.tensor(i % 2)}

            if __name__ == "__main__":
                devassert.guard()
                emb = torch.nn.Embedding(50, 4)
                g = torch.Generator().manual_seed(7)
                loader = DataLoader(Tokens(), batch_size=8, shuffle=True, generator=g, num_workers=WORKERS)
                for batch in loader:
                    ids = batch["input_ids"].clone()  # as .to(device) would
                    try:
                        emb(ids)
                    except IndexError as e:
                        print(json.dumps([e.finding["samples"], e.finding["samples_certain"], e.finding["evidence"].get("worker")]))
                        break
        """
        for workers in (0, 2):
            with tempfile.TemporaryDirectory() as tmp:
                script = os.path.join(tmp, "train.py")
                with open(script, "w") as fh:
                    fh.write(textwrap.dedent(code).replace("WORKERS", str(workers)))
                r = subprocess.run([sys.executable, script], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=PYTHONPATH), timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            samples, certain, worker = json.loads(r.stdout)
            self.assertEqual(worker in (0, 1), bool(workers), worker)
            self.assertTrue(certain, workers)
            self.assertTrue(samples, workers)
            for s in samples:
                self.assertIn(s["dataset_index"], (13, 27), samples)


    def test_a_finding_inside_a_worker_names_its_sample_and_the_parent_catches_it(self):
        code = """
            import json, torch, devassert
            from torch.utils.data import DataLoader, Dataset
            table = torch.arange(10.0)

            class Items(Dataset):
                def __len__(self):
                    return 8
                def __getitem__(self, i):
                    return table[torch.tensor([12 if i == 5 else i])]

            if __name__ == "__main__":
                devassert.guard()
                try:
                    for batch in DataLoader(Items(), batch_size=2, num_workers=2):
                        pass
                except IndexError as e:
                    print(type(e).__name__)
        """
        with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as reports:
            script = os.path.join(tmp, "items.py")
            with open(script, "w") as fh:
                fh.write(textwrap.dedent(code))
            r = subprocess.run([sys.executable, script], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=PYTHONPATH, DEVASSERT_REPORT_DIR=reports), timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), "DeviceAssertPreventedIndexError")
            findings = []
            for name in os.listdir(reports):
                if name.startswith("guard-"):
                    with open(os.path.join(reports, name)) as fh:
                        findings += [json.loads(line) for line in fh]
        self.assertEqual(len(findings), 1)
        self.assertEqual(findings[0]["samples"], [{"dataset_index": 5}])
        self.assertIn(findings[0]["evidence"]["worker"], (0, 1))
        self.assertTrue(findings[0]["samples_certain"])


class ThePackageItself(unittest.TestCase):
    def test_guard_without_torch_says_so_in_one_sentence(self):
        # torch made unimportable, as in a Python without it.
        out = run_script(
            """
            import sys
            sys.modules["torch"] = None
            import devassert
            try:
                devassert.guard()
            except ImportError as e:
                print(type(e).__name__, e.name, "|", e, "|", e.__cause__, e.__suppress_context__)
            """
        )
        self.assertEqual(out.returncode, 0, out.stderr)
        first, message, chained = out.stdout.strip().split(" | ")
        self.assertEqual(first, "ModuleNotFoundError torch")
        self.assertRegex(message, r"^devassert\.guard\(\) needs PyTorch, and torch is not installed in this Python \(.+\): install torch, then call it again$")
        self.assertEqual(chained, "None True")  # no torch traceback from inside the guard

    def test_version_is_the_workspace_version_from_a_checkout(self):
        with open(os.path.join(PYTHONPATH, "..", "Cargo.toml"), encoding="utf-8") as f:
            cargo = f.read()
        workspace = cargo[cargo.index("[workspace.package]") :]
        expected = workspace.split('version = "', 1)[1].split('"', 1)[0]
        self.assertEqual(devassert.__version__, expected)

    def test_the_exceptions_are_devassert_s_for_tracebacks_and_pickle(self):
        for cls in (devassert.DeviceAssertPrevented, devassert.DeviceAssertPreventedIndexError, devassert.DeviceAssertPreventedRuntimeError):
            self.assertEqual(cls.__module__, "devassert")
            self.assertIs(pickle.loads(pickle.dumps(cls("m"))).__class__, cls)


if __name__ == "__main__":
    unittest.main()
