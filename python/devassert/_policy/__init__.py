"""The policy for a violation in training: ``guard(on_bad_batch="skip")``.

- `state.py`: the settings, the findings met, the count of skipped steps, the
  summary at exit;
- `absorb.py`: a guarded op whose values are bad runs on values made safe,
  and its finding is kept instead of raised (called by the wrappers);
- `step.py`: the optimizer step decides: a step that met a bad batch (on any
  rank) changes no parameter, optimizer state or gradient-scaler state;
- `engines.py`: optimizer wrappers with a step and a loss scaler of their
  own (DeepSpeed's) decide once per step and keep their loss-scale state;
- `accelerated.py`: accelerate's AcceleratedOptimizer reads a skipped step
  as skipped (its LR scheduler waits, as after an AMP overflow);
- `loaded.py`: wrapping those libraries' classes when their modules load;
- `quarantine.py` (public, one level up): the file of skipped samples, and
  ``exclude(dataset, path)`` for the resumed run.

Importing this never imports torch.
"""
