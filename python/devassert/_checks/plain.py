"""Plain tensors for the checks when an op gets tensor subclasses.

Wrapper subclasses (``_make_wrapper_subclass`` + ``__torch_dispatch__``: DTensor,
FSDP2's parameters, torchao) and jagged nested tensors hold their values in
plain tensors of their own; torch ops on them (``.tolist()``, ``t[mask]``) do
not give values back. The checks run on each subclass's own way to a plain
tensor, read without communication (a collective on one rank's error path
would hang the others):

- DTensor: the local tensor. Replicated, it is the whole tensor. Sharded, an
  integer tensor (an index) is checked on the rank's own shard and its places
  are reported in global coordinates, with the rank that holds them; a
  floating tensor (a table, logits) or Partial values stand in as a tensor
  of the global shape whose values are unknown: it gives the bound
  (``num_embeddings``, the class count) and no finding is ever made on it.
- a jagged NestedTensor: its packed ``values()``; places become (batch row,
  position in the row, ...).
- another wrapper: its one inner tensor of the same shape and dtype when it
  says so (``__tensor_flatten__``); otherwise a stand-in of unknown values:
  the op's other arguments are still checked, and an error in its own
  values passes unchanged, as the op raised it.

A sharded DTensor's op can run without the error plain torch raises (a
row-sharded embedding masks the ids outside each shard: ids past the table
silently embed to zeros), so a subclass's values are checked before the op
at every level, not only after it raised.
"""

import sys

import torch

_DISPATCH_DEFAULT = torch.Tensor.__torch_dispatch__
_PLAIN = (torch.Tensor, torch.nn.Parameter)


def _is_wrapper(x):
    t = type(x)
    return t not in _PLAIN and isinstance(x, torch.Tensor) and (
        getattr(t, "__torch_dispatch__", _DISPATCH_DEFAULT) is not _DISPATCH_DEFAULT or _njt(x)
    )


def _njt(x):
    nested = sys.modules.get("torch.nested._internal.nested_tensor")
    return nested is not None and isinstance(x, nested.NestedTensor)


def _dtensor(x):
    api = sys.modules.get("torch.distributed.tensor._api")
    return api is not None and isinstance(x, api.DTensor)


def wrapped(args, kwargs):
    """Whether any argument (or item of a list argument) is a wrapper subclass."""
    for v in (*args, *kwargs.values()) if kwargs else args:
        if type(v) in _PLAIN or not isinstance(v, (torch.Tensor, list, tuple)):
            continue
        if isinstance(v, (list, tuple)):
            if any(_is_wrapper(i) for i in v):
                return True
        elif _is_wrapper(v):
            return True
    return False


class Views:
    """The arguments as plain tensors, and what each plain tensor stands for."""

    def __init__(self):
        self.args = ()
        self.kwargs = {}
        self.info = {}  # id(plain tensor) -> what it stands for (evidence)
        self.standins = set()  # ids of plain tensors whose values are unknown
        self.keep = []  # the plain tensors, alive while their ids are keys

    def plain(self, x):
        if isinstance(x, (list, tuple)) and type(x) in (list, tuple):
            return type(x)(self.plain(i) for i in x)
        if not _is_wrapper(x):
            return x
        if _dtensor(x):
            return self._dtensor(x)
        if _njt(x):
            values = x.values()
            self._note(values, {"subclass": "NestedTensor", "layout": "jagged", "shape": _shape(x), "offsets": x.offsets().tolist(), "ragged_dim": x._ragged_idx})
            return values
        inner = _only_inner(x)
        if inner is None:
            return self._standin(x, {"subclass": type(x).__name__, "values": "unreadable"})
        plain = self.plain(inner)
        self.info.setdefault(id(plain), {"subclass": type(x).__name__})
        return plain

    def _dtensor(self, x):
        from torch.distributed.tensor import Replicate, Shard

        local = x._local_tensor
        placements = list(x.placements)
        info = {"subclass": "DTensor", "placements": [str(p) for p in placements], "global_shape": list(x.shape), "rank": _rank()}
        if all(isinstance(p, Replicate) for p in placements):
            self._note(local, info)
            return local
        integer = not (local.is_floating_point() or local.is_complex())
        if integer and all(isinstance(p, (Shard, Replicate)) for p in placements):
            from torch.distributed.tensor._utils import compute_local_shape_and_global_offset

            _, offset = compute_local_shape_and_global_offset(x.shape, x.device_mesh, placements)
            info["offset"] = list(offset)
            self._note(local, info)
            return local
        # A sharded table or logits (only its shape and dtype matter to a
        # check, and they are global), or Partial values (not values yet).
        return self._standin(x, info)

    def _standin(self, x, info):
        """A tensor of `x`'s shape and dtype whose values are unknown (zeros,
        expanded: no memory): no finding is ever made on it."""
        standin = torch.zeros((), dtype=x.dtype, device=x.device).expand(x.shape)
        self._note(standin, info)
        self.standins.add(id(standin))
        return standin

    def _note(self, plain, info):
        self.info[id(plain)] = info
        self.keep.append(plain)

    def usable(self, found):
        """`found`, unless it was made on a stand-in (values unknown)."""
        if found is None or id(found.tensor) in self.standins:
            return None
        return found

    def locate(self, found, desc):
        """`desc` with its places in the subclass's own coordinates (a
        sharded DTensor's global places, a nested tensor's rows)."""
        info = self.info.get(id(found.tensor))
        if info is None or not desc.get("locations"):
            return desc
        out = []
        for loc in desc["locations"]:
            pos = loc.get("position")
            if pos is None:
                out.append(loc)
                continue
            mapped = _global(pos, info)
            if mapped is None:
                out.append(loc)
                continue
            if mapped == list(pos):
                out.append(loc)
                continue
            new = dict(loc, position=mapped, local_position=pos)
            shape = info.get("global_shape")
            if shape is not None:
                new["index"] = _flat(mapped, shape)
            if info.get("rank") is not None and info.get("offset") is not None:
                new["rank"] = info["rank"]
            out.append(new)
        return dict(desc, locations=out)

    def evidence(self, found):
        """What the checked tensor stands for, for the finding's evidence."""
        info = self.info.get(id(found.tensor))
        if info is None:
            return None
        return {k: v for k, v in info.items() if k != "offsets"}


def unwrap(args, kwargs):
    """Views of `args` / `kwargs` with every wrapper subclass made plain."""
    views = Views()
    views.args = tuple(views.plain(a) for a in args)
    views.kwargs = {k: views.plain(v) for k, v in kwargs.items()}
    return views


def before(check, args, kwargs, strict):
    """check.before on the plain arguments: (found, args, kwargs, views);
    views is None when no argument is a subclass. A subclass's values are
    checked whatever the level (its op may not raise what plain torch raises)."""
    if not wrapped(args, kwargs):
        return check.before(args, kwargs, strict), args, kwargs, None
    views = unwrap(args, kwargs)
    return views.usable(check.before(views.args, views.kwargs, True)), views.args, views.kwargs, views


def after(check, args, kwargs, strict):
    """check.after, as `before`, once the op raised."""
    if not wrapped(args, kwargs):
        return check.after(args, kwargs, strict), args, kwargs, None
    views = unwrap(args, kwargs)
    return views.usable(check.after(views.args, views.kwargs, True)), views.args, views.kwargs, views


def _only_inner(x):
    """The one inner tensor a traceable wrapper declares, when it has the
    wrapper's shape and dtype (so its values are the wrapper's)."""
    flatten = getattr(x, "__tensor_flatten__", None)
    if flatten is None:
        return None
    try:
        names, _ = flatten()
    except Exception:  # noqa: BLE001 - a user's subclass: unreadable, not an error
        return None
    if len(names) != 1:
        return None
    inner = getattr(x, names[0], None)
    if isinstance(inner, torch.Tensor) and inner.shape == x.shape and inner.dtype == x.dtype:
        return inner
    return None


def _global(pos, info):
    offset = info.get("offset")
    if offset is not None:
        return [p + o for p, o in zip(pos, offset)] + list(pos[len(offset) :])
    offsets = info.get("offsets")
    if offsets is not None and info.get("ragged_dim") == 1 and pos:
        i = pos[0]
        row = max(b for b in range(len(offsets) - 1) if offsets[b] <= i) if i >= offsets[0] else 0
        return [row, i - offsets[row], *pos[1:]]
    return list(pos)


def _flat(pos, shape):
    idx = 0
    for p, s in zip(pos, shape):
        idx = idx * s + p
    return idx


def _shape(x):
    return [s if isinstance(s, int) else None for s in x.shape]


def _rank():
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except Exception:  # noqa: BLE001
        pass
    return None
