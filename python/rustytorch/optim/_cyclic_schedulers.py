"""Schedulers that cycle the learning rate per batch and, optionally, the momentum against it:
CyclicLR (Smith, 2017) and OneCycleLR (Smith & Topin, 2018), with PyTorch's formulas. Exported by
rustytorch.optim.lr_scheduler.

    opt = rt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = rt.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, epochs=10, steps_per_epoch=len(loader))
    sched = rt.optim.lr_scheduler.CyclicLR(opt, base_lr=1e-3, max_lr=0.1, step_size_up=200, mode="triangular2")

Momentum: with cycle_momentum, the optimizer's group["momentum"] (SGD, RMSprop) or beta1 in
group["betas"] (Adam and its family) moves opposite to the lr. OneCycleLR accepts both, as PyTorch
1.13's does; CyclicLR accepts both too, where 1.13's takes "momentum" only (betas came in 2.0).
"""
import math
import types

from .lr_scheduler import LRScheduler, _check_optimizer

__all__ = ["CyclicLR", "OneCycleLR"]


def _per_group(name, optimizer, value):
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"expected {n} values for {name}, got {len(value)}")
        return list(value)
    return [value] * n


def _momentum_key(optimizer, scheduler):
    """"betas" or "momentum": which group entry the scheduler's momentum drives."""
    if "betas" in optimizer.defaults:
        return "betas"
    if "momentum" in optimizer.defaults:
        return "momentum"
    raise ValueError(f"{scheduler}: optimizer {type(optimizer).__name__} has no momentum or betas; pass "
                     "cycle_momentum=False")


def _set_momentum(group, key, value):
    if key == "betas":
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _get_momentum(group, key):
    return group["betas"][0] if key == "betas" else group["momentum"]


class CyclicLR(LRScheduler):
    """The lr moves between base_lr and max_lr in cycles of step_size_up + step_size_down steps;
    mode scales each cycle's amplitude: "triangular" (constant), "triangular2" (halved every cycle),
    "exp_range" (gamma ** iteration), or scale_fn(x) with x the cycle ("cycle") or the iteration."""

    _MODES = ("triangular", "triangular2", "exp_range")

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        if scale_fn is None and mode not in self._MODES:
            raise ValueError(f"CyclicLR: mode must be one of {self._MODES} or a scale_fn given, got {mode!r}")
        if scale_fn is not None and scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"CyclicLR: scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}")
        if step_size_up <= 0 or (step_size_down is not None and step_size_down < 0):
            raise ValueError("CyclicLR: step_size_up must be positive and step_size_down non-negative")
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else ("iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._momentum_key = _momentum_key(optimizer, "CyclicLR")
            base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for momentum, group in zip(base_momentums, optimizer.param_groups):
                    _set_momentum(group, self._momentum_key, momentum)
            self.base_momentums = [_get_momentum(g, self._momentum_key) for g in optimizer.param_groups]
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
        super().__init__(optimizer, last_epoch, verbose)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # position in the cycle, [0, 1)
        if x <= self.step_ratio:
            rising = x / self.step_ratio
        else:
            rising = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * rising * scale for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, self._momentum_key, high - (high - low) * rising * scale)
        return lrs

    def state_dict(self):
        state = super().state_dict()
        if isinstance(state.get("_scale_fn_custom"), (types.FunctionType, types.MethodType)):
            state["_scale_fn_custom"] = None  # a function is the constructor's to give, as LambdaLR's
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        if state_dict.get("_scale_fn_custom") is None:
            state_dict.pop("_scale_fn_custom", None)
        super().load_state_dict(state_dict)


class OneCycleLR(LRScheduler):
    """The 1cycle policy over total_steps (or epochs * steps_per_epoch) batches: lr from
    max_lr / div_factor up to max_lr over pct_start of the steps, then down to
    initial_lr / final_div_factor (three_phase: back to the initial lr first, then down), annealed
    by cosine ("cos") or linearly ("linear"); momentum moves from max_momentum to base_momentum and
    back, against the lr. Stepping past total_steps raises ValueError."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.total_steps = self._count_steps(total_steps, epochs, steps_per_epoch)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        up_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                dict(end_step=up_end, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=float(2 * pct_start * self.total_steps) - 2, start_lr="max_lr", end_lr="initial_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum"),
                dict(end_step=self.total_steps - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum"),
            ]
        else:
            self._schedule_phases = [
                dict(end_step=up_end, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=self.total_steps - 1, start_lr="max_lr", end_lr="min_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum"),
            ]
        if last_epoch == -1:
            for peak, group in zip(_per_group("max_lr", optimizer, max_lr), optimizer.param_groups):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._momentum_key = _momentum_key(optimizer, "OneCycleLR")
            self.use_beta1 = self._momentum_key == "betas"
            if last_epoch == -1:
                for high, low, group in zip(_per_group("max_momentum", optimizer, max_momentum),
                                            _per_group("base_momentum", optimizer, base_momentum),
                                            optimizer.param_groups):
                    _set_momentum(group, self._momentum_key, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch, verbose)

    @staticmethod
    def _count_steps(total_steps, epochs, steps_per_epoch):
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            return total_steps
        if epochs is None or steps_per_epoch is None:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
        return epochs * steps_per_epoch

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step + 1} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0
            for i, phase in enumerate(self._schedule_phases):
                if step <= phase["end_step"] or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (phase["end_step"] - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        _set_momentum(group, self._momentum_key, self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct))
                    break
                start_step = phase["end_step"]
        return lrs
