"""An optimizer wrapper of the shape of DeepSpeed's ZeRO stage 1/2
(`deepspeed/runtime/zero/stage_1_and_2.py`), small enough to run here:
DeepSpeed is not in the test environment. Its `step()` checks overflow,
updates its own dynamic loss scaler, then calls the wrapped torch optimizer's
``step()`` once per parameter group (with ``param_groups`` narrowed to that
group, as DeepSpeed's ``_optimizer_step`` does) on fp32 master copies, and
copies the masters back into the model's parameters. skip_engine.py loads it
under DeepSpeed's module name, so the guard wraps it as it wraps DeepSpeed's."""

import torch


class DynamicLossScaler:
    """DeepSpeed's rule: halve on overflow; double after `scale_window` steps
    without one; count every step."""

    def __init__(self, init_scale=2.0**8, scale_factor=2.0, scale_window=2, min_scale=1.0):
        self.cur_scale = init_scale
        self.cur_iter = 0
        self.last_overflow_iter = -1
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.min_scale = min_scale

    def update_scale(self, overflow):
        if overflow:
            self.cur_scale = max(self.cur_scale / self.scale_factor, self.min_scale)
            self.last_overflow_iter = self.cur_iter
        else:
            stable = self.cur_iter - self.last_overflow_iter - 1
            if stable > 0 and stable % self.scale_window == 0:
                self.cur_scale *= self.scale_factor
        self.cur_iter += 1


class DeepSpeedZeroOptimizer:
    def __init__(self, optimizer_cls, groups, **kwargs):
        self.model_groups = [list(g) for g in groups]
        self.fp32_groups = [torch.cat([p.detach().reshape(-1) for p in g]).float().clone() for g in self.model_groups]
        self.optimizer = optimizer_cls([{"params": [flat]} for flat in self.fp32_groups], **kwargs)
        self.loss_scaler = DynamicLossScaler()
        self.overflow = False

    def backward(self, loss):
        (loss * self.loss_scaler.cur_scale).backward()

    def _optimizer_step(self, i):
        groups = self.optimizer.param_groups
        self.optimizer.param_groups = [groups[i]]
        self.optimizer.step()
        self.optimizer.param_groups = groups

    def step(self):
        grads = [torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in g]).float() for g in self.model_groups]
        self.overflow = not all(bool(torch.isfinite(g).all()) for g in grads)
        self.loss_scaler.update_scale(self.overflow)
        if not self.overflow:
            for i, flat in enumerate(self.fp32_groups):
                flat.grad = grads[i] / self.loss_scaler.cur_scale
                self._optimizer_step(i)
                flat.grad = None
                for p, new in zip(self.model_groups[i], torch._utils._unflatten_dense_tensors(flat, self.model_groups[i])):
                    p.data.copy_(new)
        self.zero_grad()

    def zero_grad(self):
        for g in self.model_groups:
            for p in g:
                p.grad = None


class Engine:
    """DeepSpeedEngine's loop (`_take_model_step`): backward through the
    wrapper's scale; step() runs the wrapper's step, then reads its
    `overflow`: counts the step in skipped_steps, or steps the LR scheduler."""

    def __init__(self, wrapper, scheduler):
        self.optimizer = wrapper
        self.lr_scheduler = scheduler
        self.global_steps = 0
        self.skipped_steps = 0

    def backward(self, loss):
        self.optimizer.backward(loss)

    def step(self):
        self.optimizer.step()
        if self.optimizer.overflow:
            self.skipped_steps += 1
        else:
            self.lr_scheduler.step()
        self.global_steps += 1
