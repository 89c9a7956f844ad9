"""``lightning.Trainer(callbacks=[DevassertCallback()])``: at
``on_fit_start`` (before the sanity check's validation batches),
`devassert.preflight` of the LightningModule (or the model it holds), its
tokenizer and the train / val loaders of the datamodule or the trainer;
the findings go to Lightning's logger, an error stops the fit before its
first step (``warn_only=True`` only logs), and the guard is on until the
fit ends or fails."""

import logging

try:
    import lightning.pytorch as pl
except ImportError:
    try:
        import pytorch_lightning as pl
    except ImportError as e:  # not a dependency of devassert
        raise ImportError(
            "devassert.integrations.lightning needs the lightning package (or pytorch_lightning), which "
            f"devassert does not install: pip install lightning ({e})"
        ) from None

from ._common import Session, options, tokenizer_of

logger = logging.getLogger(pl.__name__)


class DevassertCallback(pl.Callback):
    """Preflight when ``trainer.fit`` starts, and the guard for the fit.

    ``tokenizer``: the tokenizer to check against (default: a ``tokenizer``
    attribute of the LightningModule or the datamodule). Other options as
    for the transformers callback (``on_bad_batch``, ``quarantine``,
    ``max_skips`` included); ``.report`` holds the last report.
    """

    def __init__(self, tokenizer=None, *, warn_only=False, guard="on", num_classes=None, ignore_index=-100, label_key="labels", max_rows=10000, on_bad_batch=None, quarantine=None, max_skips=None):
        self.tokenizer = tokenizer
        self._session = Session(options(warn_only, guard, num_classes, ignore_index, label_key, max_rows, on_bad_batch, quarantine, max_skips))

    @property
    def report(self):
        return self._session.report

    def on_fit_start(self, trainer, pl_module):
        datamodule = getattr(trainer, "datamodule", None)
        tok = tokenizer_of(self.tokenizer or getattr(pl_module, "tokenizer", None) or getattr(datamodule, "tokenizer", None))
        self._session.begin(logger, pl_module, tok, _loaders(trainer), "DevassertCallback, lightning.Trainer")

    def on_fit_end(self, trainer, pl_module):
        self._session.end(logger)

    def on_exception(self, trainer, pl_module, exception):
        self._session.end(logger)


def _loaders(trainer):
    """{name: DataLoader} of the fit: asked from the same source Lightning
    asks (the datamodule's or the module's hooks, or the loaders given to
    fit()); Lightning asks again when it sets up its loops."""
    from torch.utils.data import DataLoader

    out = {}
    sources = [("train", getattr(trainer.fit_loop, "_data_source", None))]
    val_loop = getattr(getattr(trainer.fit_loop, "epoch_loop", None), "val_loop", None)
    sources.append(("val", getattr(val_loop, "_data_source", None)))
    for name, source in sources:
        if source is None or not source.is_defined():
            continue
        loaders = source.dataloader()
        if isinstance(loaders, DataLoader):
            out[name] = loaders
        elif isinstance(loaders, dict):
            out.update({f"{name}[{k}]": v for k, v in loaders.items() if isinstance(v, DataLoader)})
        elif isinstance(loaders, (list, tuple)):
            out.update({f"{name}[{i}]": v for i, v in enumerate(loaders) if isinstance(v, DataLoader)})
    return out
