"""The dtype/device conversions and deep copy that Module inherits (torch.nn.Module's _apply family).

    model.double()                  # floating parameters and buffers -> float64; ints stay int64
    model.to(rt.float32); model.to("cpu")
    model.cuda()                    # parameters stay the same objects (an optimizer keeps working)
    clone = copy.deepcopy(model)    # independent Parameters (same requires_grad) and buffers
"""
import copy

import rustytorch as rt

from ..parameter import Parameter


def _is_floating_dtype(dtype):
    floating = [getattr(rt, name) for name in ("float16", "bfloat16", "float32", "float64") if hasattr(rt, name)]
    return any(dtype == f for f in floating) or getattr(dtype, "is_floating_point", False) is True


class TensorConversions:
    def _apply(self, fn):
        """Applies fn to every parameter (and its .grad) and buffer of this module and its
        submodules. Parameters stay the same objects, leaves with the same requires_grad: their
        .data is replaced, as torch's _apply does, so an optimizer made earlier still holds them.
        Every result is computed before any is stored: when fn fails for one tensor (no GPU, an
        unsupported dtype), the module is left unchanged and the error propagates."""
        params, buffers = {}, []
        for module in self.modules():
            for param in module._parameters.values():
                if param is not None:
                    params.setdefault(id(param), param)
            buffers.extend((module._buffers, key, buf) for key, buf in module._buffers.items() if buf is not None)
        with rt.no_grad():
            new_params = [(p, fn(p), None if p.grad is None else fn(p.grad)) for p in params.values()]
            new_buffers = [(store, key, fn(buf)) for store, key, buf in buffers]
        for param, data, grad in new_params:
            if data is not param:
                param.data = data
            if grad is not None and grad is not param.grad:
                param.grad.data = grad
        for store, key, buf in new_buffers:
            store[key] = buf
        return self

    def to(self, *args, **kwargs):
        """to(dtype) converts floating parameters and buffers (integer ones keep their dtype);
        to(device) / to("cpu") / to(0) moves every tensor; to(tensor) takes both from `tensor`.
        non_blocking is accepted and ignored: parameters move with synchronous copies."""
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"Module.to() got unexpected keyword arguments {sorted(kwargs)}")
        for arg in args:
            if isinstance(arg, rt.Tensor):
                device, dtype = arg.device, arg.dtype
            elif isinstance(arg, (str, rt.device)):
                device = arg
            elif isinstance(arg, int) and not isinstance(arg, bool):
                device = rt.device("cuda", arg)
            elif isinstance(arg, bool):
                continue  # to(device, dtype, non_blocking) positionally
            else:
                dtype = arg
        if dtype is not None and not _is_floating_dtype(dtype):
            raise TypeError(f"Module.to only accepts floating point dtypes, but got desired dtype={dtype}")

        def convert(t):
            target = dtype if dtype is not None and _is_floating_dtype(t.dtype) else None
            return t.to(device=device, dtype=target)
        return self._apply(convert)

    def float(self):
        return self.to(rt.float32)

    def double(self):
        return self.to(rt.float64)

    def cpu(self):
        """Moves every parameter and buffer to the CPU (in place; returns self)."""
        return self.to("cpu")

    def cuda(self, device=None):
        """Moves every parameter and buffer to CUDA device `device` (None: the current device), in
        place; returns self. Without a usable device it raises RuntimeError and changes nothing."""
        if device is None:
            device = rt.cuda.current_device() if rt.cuda.is_available() else 0
        return self.to(rt.device("cuda", device) if isinstance(device, int) else rt.device(device))

    def type(self, dst_type):
        return self._apply(lambda t: t.to(dst_type))

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            new.__dict__[key] = copy.deepcopy(value, memo) if not isinstance(value, rt.Tensor) \
                else _copy_tensor(value, memo)
        for key in ("_parameters", "_buffers"):
            for name, t in self.__dict__[key].items():
                if t is not None:
                    new.__dict__[key][name] = _copy_tensor(t, memo)
        return new


def _copy_tensor(t, memo):
    if id(t) in memo:
        return memo[id(t)]
    if isinstance(t, Parameter):
        out = Parameter(t.detach().clone(), t.requires_grad)
    else:
        out = t.detach().clone()
        if t.requires_grad:
            out.requires_grad_(True)
    memo[id(t)] = out
    return out
