"""The dtype/device conversions and deep copy that Module inherits (torch.nn.Module's _apply family).

    model.double()                  # floating parameters and buffers -> float64; ints stay int64
    model.to(rt.float32); model.to("cpu")
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
        for module in self.children():
            module._apply(fn)
        with rt.no_grad():
            for key, param in self._parameters.items():
                if param is None:
                    continue
                applied = fn(param)
                if applied is param:
                    continue
                new = Parameter(applied, param.requires_grad)
                if param.grad is not None:
                    new.grad = fn(param.grad)
                self._parameters[key] = new
            for key, buf in self._buffers.items():
                if buf is not None:
                    self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """to(dtype) converts floating parameters and buffers (integer ones keep their dtype);
        to(device) / to("cpu") moves every tensor; to(tensor) takes both from `tensor`."""
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        if kwargs:
            raise TypeError(f"Module.to() got unexpected keyword arguments {sorted(kwargs)}")
        for arg in args:
            if isinstance(arg, rt.Tensor):
                device, dtype = arg.device, arg.dtype
            elif isinstance(arg, str) or type(arg).__name__ == "device":
                device = arg
            else:
                dtype = arg
        if dtype is not None and not _is_floating_dtype(dtype):
            raise TypeError(f"Module.to only accepts floating point dtypes, but got desired dtype={dtype}")

        def convert(t):
            out = t if device is None else t.to(device)
            if dtype is not None and _is_floating_dtype(t.dtype) and t.dtype != dtype:
                out = out.to(dtype)
            return out
        return self._apply(convert)

    def float(self):
        return self.to(rt.float32)

    def double(self):
        return self.to(rt.float64)

    def cpu(self):
        return self.to("cpu")

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
