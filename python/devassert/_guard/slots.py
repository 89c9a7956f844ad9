"""Keeping torch.Tensor a non-sequence while its __getitem__/__setitem__ are wrapped.

Assigning a Python ``__getitem__`` to a class fills its mapping slot (what
``x[k]`` calls) and also its sequence slot ``sq_item`` (``__setitem__``:
``sq_ass_item``). C code tells a sequence by ``PySequence_Check``, which reads
``sq_item``: torch's list-to-tensor code (``torch.tensor([t0, t1])``,
``as_tensor``, ``LongTensor([...])``) and numpy would then take every tensor
for a list and call ``len()`` on 0-d ones. torch.Tensor has no sequence slots
(its C base defines only the mapping ones), so they are put back to what they
were, on Tensor and on every subclass, and on subclasses made later
(``__init_subclass__``). ``restore()`` undoes it all after the wrappers are
removed, so that CPython recomputes the slots exactly as before the guard.

The slots are reached through the type object's ``tp_as_sequence`` field. The
field's place is checked before use (on a heap type it must point inside the
type object itself); on an interpreter where it does not, nothing is touched
and torch.tensor of a list of 0-d tensors fails as it did before this module.
"""

import ctypes
import weakref

import torch

_P = ctypes.POINTER(ctypes.c_void_p)
_AS_SEQUENCE = 13  # pointer-sized fields before tp_as_sequence in PyTypeObject
_AS_MAPPING = 14
_SQ_ITEM, _SQ_ASS_ITEM = 3, 5  # in PySequenceMethods

_saved = weakref.WeakKeyDictionary()  # type -> (sq_item, sq_ass_item) without the guard
_hooked = False


def _methods(tp):
    """The type's PySequenceMethods as an array of pointers, or None."""
    try:
        base = ctypes.cast(id(tp), _P)
        start, end = id(tp), id(tp) + type.__sizeof__(tp)
        seq, mapping = base[_AS_SEQUENCE], base[_AS_MAPPING]
    except Exception:  # noqa: BLE001
        return None
    if not (seq and mapping and start < mapping < seq < end):
        return None
    return ctypes.cast(seq, _P)


def _family():
    out, todo = [], [torch.Tensor]
    while todo:
        tp = todo.pop()
        out.append(tp)
        todo.extend(tp.__subclasses__())
    return out


def save():
    """Note the sequence slots of Tensor and its subclasses (before wrapping)."""
    for tp in _family():
        m = _methods(tp)
        if m is not None and tp not in _saved:
            _saved[tp] = (m[_SQ_ITEM], m[_SQ_ASS_ITEM])


def _put_back(tp):
    m = _methods(tp)
    if m is not None and tp in _saved:
        m[_SQ_ITEM], m[_SQ_ASS_ITEM] = _saved[tp]


def keep():
    """After wrapping: the saved slots back, and the same for later subclasses."""
    global _hooked
    for tp in list(_saved):
        _put_back(tp)
    if "__init_subclass__" not in torch.Tensor.__dict__:
        torch.Tensor.__init_subclass__ = classmethod(_init_subclass)
        _hooked = True


def _from_tensor(cls, name):
    """Whether `cls` inherits `name` from torch.Tensor (the wrapper), not from
    a class of its own line."""
    owner = next((k for k in cls.__mro__ if name in k.__dict__), None)
    return owner is torch.Tensor


def _init_subclass(cls, **kwargs):
    # A class made while the guard is on gets its sequence slots from the
    # wrappers: put back the NULL that torch.Tensor's own slot gives it.
    m = _methods(cls)
    if m is not None:
        item = None if _from_tensor(cls, "__getitem__") else m[_SQ_ITEM]
        ass_item = None if _from_tensor(cls, "__setitem__") else m[_SQ_ASS_ITEM]
        _saved[cls] = (item, ass_item)
        _put_back(cls)
    super(torch.Tensor, cls).__init_subclass__(**kwargs)


def restore():
    """After the wrappers are removed (CPython has recomputed the slots from
    the slots it saw): the saved slots once more, and no subclass hook."""
    global _hooked
    for tp in list(_saved):
        _put_back(tp)
    if _hooked:
        del torch.Tensor.__init_subclass__
        _hooked = False
