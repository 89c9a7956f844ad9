"""Columns of ids or labels held in memory, as numpy: one vectorised min
and max to screen them (`screen`), and the temporary Arrow file a column
found bad is written to, for the scanner to name its rows."""

import os


class Flat:
    """A column as numpy: `values` (1-D), `offsets` (row i is
    values[offsets[i]:offsets[i+1]]; None when each row is one value) and,
    per row, `samples` (dataset index, -1 unknown) and `batches` (batch
    number and row inside it, for loaders), or None when row == sample."""

    def __init__(self, values, offsets=None, samples=None, batches=None):
        self.values = values
        self.offsets = offsets
        self.samples = samples
        self.batches = batches

    @property
    def rows(self):
        return len(self.offsets) - 1 if self.offsets is not None else len(self.values)


def screen(flat, low, high, ignore, max_len):
    """Whether some value lies outside [low, high) (ignore excepted) or some
    row is longer than max_len: one min and one max over the values."""
    import numpy as np

    if max_len is not None and flat.offsets is not None and flat.rows and int(np.diff(flat.offsets).max()) > max_len:
        return True
    return _outside(flat.values, low, high, ignore)


def _outside(v, low, high, ignore):
    if not v.size:
        return False
    lo, hi = v.min(), v.max()
    if ignore is not None and ((lo < low and lo <= ignore) or (hi >= high and hi >= ignore)):
        kept = v[v != ignore]  # only when a sentinel sits at an end
        if not kept.size:
            return False
        lo, hi = kept.min(), kept.max()
    return bool(lo < low or hi >= high)


def flat_from_arrow(column):
    """A pyarrow (chunked) integer or list<integer> column as a Flat, without
    copying the values of a one-level list column."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not _is_list(arr.type):
        return Flat(_ints(arr))
    level = pc.list_flatten(arr)
    if not _is_list(level.type):
        lengths = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False)
        values = _ints(level)
    else:  # nested (masks as lists of rows): each value's row, level by level
        rows = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
        while _is_list(level.type):
            rows = rows[pc.list_parent_indices(level).to_numpy(zero_copy_only=False)]
            level = pc.list_flatten(level)
        values = _ints(level)
        lengths = np.bincount(rows, minlength=len(arr))
    offsets = np.zeros(len(arr) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Flat(values, offsets)


def int_type(t):
    """Whether an Arrow type is an integer or (nested) list of integers."""
    import pyarrow as pa

    while _is_list(t):
        t = t.value_type
    return pa.types.is_integer(t)


class ArrowColumn:
    """A pyarrow column screened chunk by chunk where it lies (no copy of the
    column: an in-memory Dataset's table has one chunk per written batch);
    made a Flat (one copy) only when a scan must name its bad rows."""

    def __init__(self, column):
        import pyarrow as pa

        self.column = column if isinstance(column, pa.ChunkedArray) else pa.chunked_array([column])
        self.rows = len(self.column)

    def screen(self, low, high, ignore, max_len):
        import pyarrow.compute as pc

        for chunk in self.column.chunks:
            if _is_list(chunk.type):
                if _is_list(chunk.type.value_type):  # nested: per row, as a Flat
                    if screen(flat_from_arrow(chunk), low, high, ignore, max_len):
                        return True
                    continue
                if max_len is not None and len(chunk) and (pc.max(pc.list_value_length(chunk)).as_py() or 0) > max_len:
                    return True
                values = pc.list_flatten(chunk)
            else:
                values = chunk
            if _outside(_ints(values), low, high, ignore):
                return True
        return False

    def values_count(self):
        import pyarrow.compute as pc

        return sum(len(pc.list_flatten(c)) if _is_list(c.type) else len(c) for c in self.column.chunks)

    def flat(self):
        return flat_from_arrow(self.column)


def _is_list(t):
    import pyarrow as pa

    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def _ints(arr):
    import pyarrow.compute as pc

    if arr.null_count:
        arr = pc.drop_null(arr)
    return arr.to_numpy(zero_copy_only=False)


def flat_from_array(a):
    """A numpy array or tensor: one row per first-axis entry, the rest of each
    row flattened (a [N, L] batch of ids has rows of L)."""
    import numpy as np

    a = as_numpy(a)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim == 1:
        return Flat(a)
    width = int(np.prod(a.shape[1:]))
    return Flat(a.reshape(-1), np.arange(0, a.shape[0] * width + 1, max(width, 1), dtype=np.int64)[: a.shape[0] + 1] if width else np.zeros(a.shape[0] + 1, dtype=np.int64))


def as_numpy(a):
    import numpy as np

    if hasattr(a, "detach") and hasattr(a, "cpu"):  # a tensor
        return a.detach().cpu().numpy()
    return np.asarray(a)


def integer(a):
    """Whether an array / tensor holds integers (ids and labels do)."""
    import numpy as np

    dtype = getattr(a, "dtype", None)
    if dtype is None:
        return False
    if hasattr(a, "is_floating_point"):  # torch
        return not a.is_floating_point() and not a.is_complex() and str(dtype) != "torch.bool"
    return np.issubdtype(dtype, np.integer)



def flat_from_lists(v):
    import pyarrow as pa

    try:
        arr = pa.array(v)
        if not int_type(arr.type):
            raise TypeError(f"devassert.preflight: a column given as a list holds {arr.type}, not integers")
        return flat_from_arrow(arr)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        raise TypeError(f"devassert.preflight: a column given as a list must hold integers or lists of them: {e}") from None


def write_arrow(flat, column, directory):
    """A temporary Arrow file holding one column, for the scanner."""
    import numpy as np
    import pyarrow as pa

    values = pa.array(flat.values)
    if flat.offsets is None:
        arr = values
    elif flat.offsets[-1] < 2**31:
        arr = pa.ListArray.from_arrays(pa.array(flat.offsets.astype(np.int32)), values)
    else:
        arr = pa.LargeListArray.from_arrays(pa.array(flat.offsets), values)
    table = pa.table({column: arr})
    path = os.path.join(directory, f"{len(os.listdir(directory))}-{column}.arrow")
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return path


def is_array(x):
    return hasattr(x, "dtype") and hasattr(x, "shape")
