"""Optimizer: the base of rt.optim's optimizers, with PyTorch's param_groups, state and state_dict format.

    opt = rt.optim.SGD([{"params": model.body.parameters()},
                        {"params": model.head.parameters(), "lr": 1e-3}], lr=1e-2, momentum=0.9)
    opt.zero_grad(); loss.backward(); opt.step()
    sd = opt.state_dict()      # {"state": {0: {"momentum_buffer": ...}}, "param_groups": [{"lr": ..., "params": [0, 1]}]}
    opt.load_state_dict(sd)    # state tensors are cast to their parameter's dtype ("step" excepted)

Contracts (those of torch.optim.Optimizer):
- param_groups is a list of dicts; each holds "params" (a list of leaf tensors) and every default
  option not given in the group. A parameter may appear in one group only (ValueError).
- state maps each parameter (by identity) to its dict of state, filled lazily by step().
- state_dict() numbers parameters 0, 1, ... across groups in order; its tensors alias the live
  state. load_state_dict() checks group count and sizes (ValueError) and deep-copies values.
- Under rt.profiler.profile, step() and zero_grad() appear as the ranges PyTorch records:
  "Optimizer.step#SGD.step" and "Optimizer.zero_grad#SGD.zero_grad".
"""
import functools
from collections.abc import MutableMapping

import rustytorch as rt
from rustytorch.profiler._ranges import record_function


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


class ParamState(MutableMapping):
    """Per-parameter state keyed by tensor identity (Tensor's == is elementwise, so not hashable by value)."""

    def __init__(self):
        self._items = {}

    def __getitem__(self, param):
        entry = self._items.get(id(param))
        if entry is None:
            self._items[id(param)] = entry = (param, {})
        return entry[1]

    def __setitem__(self, param, value):
        self._items[id(param)] = (param, value)

    def __delitem__(self, param):
        del self._items[id(param)]

    def __contains__(self, param):
        return id(param) in self._items

    def __iter__(self):
        return (p for p, _ in self._items.values())

    def __len__(self):
        return len(self._items)

    def __repr__(self):
        return f"ParamState({len(self)} parameters)"


def _profiled_step(step, range_name):
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with record_function(range_name):
            return step(self, *args, **kwargs)

    wrapper._profiled = True
    return wrapper


class Optimizer:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_profiled", False):
            cls.step = _profiled_step(step, f"Optimizer.step#{cls.__name__}.step")

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = ParamState()
        self.param_groups = []
        if isinstance(params, rt.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}"
            for key in sorted(group):
                if key != "params":
                    text += f"\n    {key}: {group[key]}"
        return text + "\n)"

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, rt.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, rt.Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(param).__name__}")
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        ids = [id(p) for p in param_group["params"]]
        if len(set(ids)) != len(ids):
            raise ValueError("optimizer contains a parameter group with duplicate parameters")
        if seen & set(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        with record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):
            self._zero_grad(set_to_none)

    def _zero_grad(self, set_to_none):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError(f"{type(self).__name__} does not implement step(); subclasses of "
                                  "rt.optim.Optimizer must define it")

    def _step_each_parameter(self, closure):
        """step() of an optimizer that updates each parameter on its own: runs `closure` (with grad), then
        self._update(param, group) without grad for every parameter that has a gradient; returns the loss."""
        loss = self._run_closure(closure)
        with rt.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, group)
        return loss

    def _step_each_group(self, closure):
        """step() of an optimizer that updates a whole group in one fused call: runs `closure` (with grad), then
        self._update_group(group) without grad for every group; returns the loss."""
        loss = self._run_closure(closure)
        with rt.no_grad():
            for group in self.param_groups:
                self._update_group(group)
        return loss

    @staticmethod
    def _run_closure(closure):
        if closure is None:
            return None
        with rt.enable_grad():
            return closure()

    def _check_unsupported(self, **flags):
        for name, value in flags.items():
            if value:
                raise NotImplementedError(f"{type(self).__name__}({name}=True) is not supported by rustytorch; "
                                          f"leave {name} at its default")

    def state_dict(self):
        index, packed_groups, next_index = {}, [], 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                if id(p) not in index:
                    index[id(p)] = next_index
                    next_index += 1
            packed["params"] = [index[id(p)] for p in group["params"]]
            packed_groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": packed_groups}

    def load_state_dict(self, state_dict):
        state_dict = _detached(state_dict)
        groups, saved_groups = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups ({len(saved_groups)}) "
                             f"than the optimizer ({len(groups)})")
        for g, (group, saved) in enumerate(zip(groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(f"loaded state dict contains a parameter group ({g}) that doesn't match the size "
                                 f"of optimizer's group: {len(saved['params'])} vs {len(group['params'])} parameters")
        id_map = {old: p for group, saved in zip(groups, saved_groups)
                  for old, p in zip(saved["params"], group["params"])}
        self.state = ParamState()
        for key, value in state_dict["state"].items():
            key = int(key)
            if key not in id_map:
                raise ValueError(f"loaded state dict has state for parameter {key}, which no group contains")
            param = id_map[key]
            self.state[param] = {name: _cast_state(param, name, v) for name, v in value.items()}
        self.param_groups = [dict(saved, params=group["params"]) for group, saved in zip(groups, saved_groups)]


def _detached(obj):
    """A deep copy of a state dict: tensors cloned, containers rebuilt, everything else shared (immutable)."""
    if isinstance(obj, rt.Tensor):
        return obj.detach().clone()
    if isinstance(obj, dict):
        return {k: _detached(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_detached(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_detached(v) for v in obj)
    return obj


def _cast_state(param, name, value):
    if not isinstance(value, rt.Tensor) or name == "step":
        return value
    if tuple(value.shape) != tuple(param.shape) and value.numel() != 1:
        raise ValueError(f"loaded optimizer state '{name}' has shape {list(value.shape)} but its parameter has "
                         f"shape {list(param.shape)}; the state dict belongs to a different model")
    return value.to(param.dtype) if value.dtype != param.dtype and param.dtype in (rt.float32, rt.float64) \
        else value
