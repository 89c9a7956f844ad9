"""Turning the guard on and off: the level and ``guard()`` (`level.py`), the
wrappers put on the guarded entry points and the compiled-region hook
(`intercept.py`), torch.Tensor's slots kept as they were (`slots.py`), and
installing it when torch is imported (`hook.py`, for `devassert run`, the
notebook and pytest). The top of the guard: it uses `_checks` and
`_compiled`, which never import it."""
