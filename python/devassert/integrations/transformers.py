"""``Trainer(callbacks=[DevassertCallback()])``: at ``on_train_begin``,
`devassert.preflight` of the model, the processing class (tokenizer) and
the train / eval datasets; the findings go to the Trainer's logger, an
error stops the run before its first step (``warn_only=True`` only logs),
and the guard is on until ``on_train_end``."""

import sys

try:
    from transformers import Trainer, TrainerCallback
    from transformers.utils import logging as _hf_logging
except ImportError as e:  # not a dependency of devassert
    raise ImportError(
        "devassert.integrations.transformers needs the transformers package, which devassert does not "
        f"install: pip install transformers ({e})"
    ) from None

from ._common import Session, options, tokenizer_of

logger = _hf_logging.get_logger("transformers.trainer")


class DevassertCallback(TrainerCallback):
    """Preflight at the start of ``trainer.train()``, and the guard for the run.

    ``warn_only``: log errors instead of raising :class:`devassert.PreflightError`.
    ``guard``: the guard level held during training ("on", "async",
    "strict"; None leaves it alone). ``num_classes``, ``ignore_index``,
    ``label_key``, ``max_rows``: as for :func:`devassert.preflight`
    (``max_rows`` bounds the samples drawn through a torch dataset's
    collator; a ``datasets.Dataset`` is read whole). ``.report`` holds the
    last report. ``on_bad_batch``, ``quarantine``, ``max_skips``: as for
    :func:`devassert.guard` ("skip": a bad batch's update is skipped on every
    rank and its samples quarantined; the Trainer's ``global_step`` and LR
    scheduler still advance). At the end the log says how many steps were skipped.
    """

    def __init__(self, *, warn_only=False, guard="on", num_classes=None, ignore_index=-100, label_key="labels", max_rows=10000, on_bad_batch=None, quarantine=None, max_skips=None):
        self._session = Session(options(warn_only, guard, num_classes, ignore_index, label_key, max_rows, on_bad_batch, quarantine, max_skips))

    @property
    def report(self):
        return self._session.report

    def on_train_begin(self, args, state, control, model=None, processing_class=None, train_dataloader=None, **kwargs):
        trainer = _trainer_on_stack()
        data = _datasets(trainer, args, train_dataloader)
        # transformers before 4.46 hands the tokenizer as `tokenizer`.
        tokenizer = processing_class if processing_class is not None else kwargs.get("tokenizer")
        self._session.begin(logger, model, tokenizer_of(tokenizer), data, "DevassertCallback, transformers.Trainer")

    def on_train_end(self, args, state, control, **kwargs):
        self._session.end(logger)


def _trainer_on_stack():
    """The Trainer whose train() called this hook: callbacks are given the
    train dataloader but not the eval dataset, which only the Trainer holds."""
    frame = sys._getframe(1)
    while frame is not None:
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, Trainer):
            return candidate
        frame = frame.f_back
    return None


def _datasets(trainer, args, train_dataloader):
    """{name: source}: a datasets.Dataset is read whole from its Arrow files;
    any other dataset through the loader and collator the Trainer uses."""
    out = {}
    if trainer is None:
        if train_dataloader is not None:
            out["train"] = train_dataloader
        return out
    train = trainer.train_dataset
    if train is not None:
        out["train_dataset"] = train if _is_hf(train) or train_dataloader is None else train_dataloader
    evals = trainer.eval_dataset
    if evals is not None:
        items = evals.items() if isinstance(evals, dict) else [(None, evals)]
        for key, ds in items:
            name = "eval_dataset" if key is None else f"eval_dataset[{key}]"
            out[name] = ds if _is_hf(ds) else _eval_loader(trainer, args, ds)
    return out


def _is_hf(ds):
    t = type(ds)
    return t.__name__ == "Dataset" and t.__module__.startswith("datasets.")


def _eval_loader(trainer, args, ds):
    from torch.utils.data import DataLoader

    return DataLoader(ds, batch_size=args.per_device_eval_batch_size, collate_fn=trainer.data_collator, shuffle=False)
