"""GradScaler: loss scaling for float16 training, with torch.amp.GradScaler's API and state machine.

Per iteration: scale(loss).backward(), optionally unscale_(opt) (to clip gradients), step(opt),
update(). step() skips the optimizer step when any gradient holds an inf or NaN; update() then
multiplies the scale by backoff_factor, and after growth_interval clean steps in a row by
growth_factor. The unscale and the update run on the device (rt.amp's C++ steps in
engine/include/rt/amp/grad_scaling.h); step() reads one flag per device back to the host.
"""
import warnings
from collections import defaultdict
from enum import Enum

import rustytorch as rt
from rustytorch import _C

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


_NO_SCALE = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."


class GradScaler:
    """Scales losses so float16 gradients do not underflow, and unscales them before each step.

    scaler = rt.amp.GradScaler("cuda")          # init_scale=2**16, growth_factor=2, backoff_factor=0.5
    scaler.scale(loss).backward()
    scaler.unscale_(opt)                         # only when the grads are needed unscaled (clipping)
    rt.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()

    enabled=False makes every method a pass-through, so one script runs with and without AMP.
    On a machine without a usable GPU a "cuda" scaler warns and disables itself, as in torch.
    """

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if device not in ("cuda", "cpu"):
            raise ValueError(f"GradScaler: device '{device}' is not supported; use 'cuda' or 'cpu'")
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda" and not rt.cuda.is_available():
            warnings.warn("rustytorch.amp.GradScaler is enabled, but CUDA is not available. Disabling "
                          f"({rt.cuda.unavailable_reason()})")
            self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise ValueError(f"GradScaler: growth_factor must be > 1.0, got {growth_factor}")
            if not 0.0 < backoff_factor < 1.0:
                raise ValueError(f"GradScaler: backoff_factor must be in (0, 1), got {backoff_factor}")
            if not isinstance(growth_interval, int) or growth_interval <= 0:
                raise ValueError(f"GradScaler: growth_interval must be a positive int, got {growth_interval!r}")
        self._init_scale = float(init_scale)
        self._scale = None
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ---- scaling ---------------------------------------------------------------------------
    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = rt.full((), self._init_scale, dtype=rt.float32, device=dev)
        self._growth_tracker = rt.full((), self._init_growth_tracker, dtype=rt.int32, device=dev)

    def scale(self, outputs):
        """outputs times the scale: a tensor, or lists/tuples of them (returned in the same structure)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, rt.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(outputs.device)

        def apply(value):
            if isinstance(value, rt.Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(value.device)
                return value * self._scale.to(value.device)
            if isinstance(value, (list, tuple)):
                mapped = [apply(v) for v in value]
                return type(value)(mapped) if isinstance(value, list) else tuple(mapped)
            raise ValueError("GradScaler.scale: outputs must be a Tensor or a list/tuple of Tensors, "
                             f"got {type(value).__name__}")

        return apply(outputs)

    def _check_scale_growth_tracker(self, funcname):
        if self._scale is None:
            raise RuntimeError(f"Attempted {funcname} but _scale is None.  " + _NO_SCALE)
        if self._growth_tracker is None:
            raise RuntimeError(f"Attempted {funcname} but _growth_tracker is None.  " + _NO_SCALE)
        return self._scale, self._growth_tracker

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        per_device = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if not allow_fp16 and grad.dtype == rt.float16:
                    raise ValueError("Attempting to unscale FP16 gradients. Keep the parameters in float32 and "
                                     "let rt.autocast cast them (the optimizer then updates float32 weights).")
                per_device.setdefault(str(grad.device), []).append(grad)
        found_inf_per_device = {}
        for dev, grads in per_device.items():
            found_inf = rt.full((), 0.0, dtype=rt.float32, device=dev)
            _C._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale.to(dev))
            found_inf_per_device[dev] = found_inf
        return found_inf_per_device

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale in place (once per step) and records infs/NaNs."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.reciprocal()
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, allow_fp16=False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscales (unless unscale_ already did) and runs optimizer.step(*args, **kwargs) unless a
        gradient was inf/NaN. Returns what optimizer.step returned, or None when the step was skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise RuntimeError("No inf checks were recorded for this optimizer: none of its parameters has a "
                               "gradient. Call backward() on the scaled loss before step().")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Adjusts the scale from this iteration's infs (or sets it to new_scale) and resets per-step state."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, (int, float)):
                scale.fill_(float(new_scale))
            else:
                if (not isinstance(new_scale, rt.Tensor) or new_scale.numel() != 1 or new_scale.dtype != rt.float32
                        or new_scale.requires_grad):
                    raise ValueError("new_scale should be a float or a 1-element float32 Tensor with "
                                     "requires_grad=False.")
                scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [found_inf.to(scale.device) for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if not found_infs:
                raise RuntimeError("No inf checks were recorded prior to update.")
            combined = found_infs[0]
            for other in found_infs[1:]:
                combined = combined + other
            _C._amp_update_scale_(scale, growth_tracker, combined, self._growth_factor, self._backoff_factor,
                                  self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ---- settings and state ----------------------------------------------------------------
    def get_scale(self):
        """The current scale as a float (1.0 when disabled); reading it synchronizes with the device."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}; {} when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        missing = {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"} - set(state_dict)
        if missing:
            raise KeyError(f"GradScaler.load_state_dict: missing {sorted(missing)}")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(self._init_growth_tracker)

    def __repr__(self):
        return (f"GradScaler(device='{self._device}', scale={self.get_scale()}, growth_factor={self._growth_factor}, "
                f"backoff_factor={self._backoff_factor}, growth_interval={self._growth_interval}, "
                f"enabled={self._enabled})")
