"""devassert where you already work. Callbacks that run `devassert.preflight`
when training starts and keep the guard on for the run:
``devassert.integrations.transformers`` (Hugging Face ``Trainer``) and
``devassert.integrations.lightning`` (``lightning.Trainer``), sharing
`_common.py`. Neither library is a dependency of devassert: each module
imports its own when it is imported, and says so when it is missing.

Also here, reached through their entry points rather than imported by users:
the pytest plugin (`pytest_plugin.py`, the options, loaded as
``devassert.pytest_plugin``; `pytest_guard.py`, the per-test hooks, imported
only when the option is on) and the IPython extension (`notebook.py`, loaded
by ``%load_ext devassert``)."""
