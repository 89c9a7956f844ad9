"""Callbacks that run `devassert.preflight` when training starts and keep the
guard on for the run: ``devassert.integrations.transformers`` (Hugging Face
``Trainer``) and ``devassert.integrations.lightning`` (``lightning.Trainer``).
Neither library is a dependency of devassert: each module imports its own
when it is imported, and says so when it is missing."""
