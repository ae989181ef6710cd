"""rt.ops — ops that plugins add, as torch.ops.

    import rustytorch as rt
    rt.ops.load_library("build/plugins/fused-bias-gelu")   # a plugin folder, its plugin.json, or its .so
    rt.ops.load_library("org.rustytorch.fused-bias-gelu")  # or its id, found in the plugin search paths
    y = rt.ops.rtx.fused_bias_gelu(x, b)                    # profiled, recorded by autograd, under autocast
    y.grad_fn                                               # <FusedBiasGeluBackward0>
    rt.ops.registered()                                     # [OpInfo(name='rtx::fused_bias_gelu', ...)]

An op takes its arguments as its schema declares them ("fused_bias_gelu(Tensor x, Tensor b) -> Tensor"):
Tensor -> a rustytorch.Tensor, Tensor? -> a Tensor or None, float -> a float or int, int -> an int, bool -> a
bool; by position or by keyword, trailing ones with defaults may be left out. A schema returning one Tensor gives a
Tensor, one returning (Tensor, ...) a tuple. Loading goes through the process's plugin manager (the same one the
CLI and the studio use), so a plugin loads once and `rtorch launch` ranks that load it share its op names.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Tuple

from . import _C

__all__ = ["load_library", "registered", "OpInfo"]

_ops = _C._ops


@dataclass(frozen=True)
class OpInfo:
    """One registered plugin op: what `rtorch plugin list` and rt.ops.registered() show."""

    name: str  # "rtx::fused_bias_gelu"
    namespace: str
    op: str
    schema: str
    doc: str
    plugin: str  # "org.rustytorch.fused-bias-gelu"
    devices: Tuple[str, ...]  # where it has a kernel: ("cpu", "cuda")
    differentiable: bool
    backward_devices: Tuple[str, ...]
    backward_node: str  # "FusedBiasGeluBackward0"
    autocast: str  # "none", "lower_precision", "fp32", "promote"
    arguments: Tuple[str, ...]

    @staticmethod
    def _from(d: dict) -> "OpInfo":
        return OpInfo(
            name=d["name"], namespace=d["namespace"], op=d["op"], schema=d["schema"], doc=d["doc"],
            plugin=d["plugin"], devices=tuple(d["devices"]), differentiable=d["differentiable"],
            backward_devices=tuple(d["backward_devices"]), backward_node=d["backward_node"],
            autocast=d["autocast"], arguments=tuple(d["arguments"]))


def load_library(path) -> dict:
    """Loads and initializes the plugin at `path` (its folder, its plugin.json, or its library with plugin.json
    beside it) and registers its ops; loading it again returns the same plugin. `path` may also be a plugin's id
    ("org.rustytorch.fused-bias-gelu"), found in the plugin search paths (the build's or install's plugins,
    ~/.local/share/rustytorch/plugins, $RT_PLUGIN_PATH). Returns {"id", "version", "folder", "namespaces", "ops"}.
    Raises RuntimeError with the plugin manager's message when it fails."""
    return dict(_ops.load_library(os.fspath(path)))


def registered() -> List[OpInfo]:
    """Every plugin op registered in this process, by name."""
    return [OpInfo._from(d) for d in _ops.registered()]


def _namespaces() -> List[str]:
    return sorted({d["namespace"] for d in _ops.registered()})


class PluginOp:
    """A callable plugin op: rt.ops.rtx.fused_bias_gelu."""

    def __init__(self, info: OpInfo):
        self._info = info
        self.__name__ = info.op
        self.__qualname__ = info.name
        self.__doc__ = f"{info.schema}\n\n{info.doc}\n\n(plugin {info.plugin}; kernels: {', '.join(info.devices)})"

    @property
    def info(self) -> OpInfo:
        return self._info

    @property
    def schema(self) -> str:
        return self._info.schema

    def __call__(self, *args, **kwargs):
        return _ops.call(self._info.name, *args, **kwargs)

    def __repr__(self):
        return f"<plugin op {self._info.name}: {self._info.schema}>"


class OpNamespace:
    """rt.ops.<namespace>: its ops as attributes. Ops are never unregistered, so an op found once is kept as an
    attribute of the namespace: later lookups cost what any attribute costs."""

    def __init__(self, name: str):
        self._name = name

    def _ops(self) -> List[OpInfo]:
        return [o for o in registered() if o.namespace == self._name]

    def __getattr__(self, op: str):
        if op.startswith("__"):
            raise AttributeError(op)
        for info in self._ops():
            if info.op == op:
                found = PluginOp(info)
                setattr(self, op, found)
                return found
        known = ", ".join(o.op for o in self._ops()) or "none"
        raise AttributeError(
            f"rt.ops.{self._name} has no op '{op}' (its ops: {known}); a plugin that defines it must be loaded "
            f"first with rt.ops.load_library(path)")

    def __dir__(self):
        return sorted(set(super().__dir__()) | {o.op for o in self._ops()})

    def __repr__(self):
        return f"<rt.ops namespace '{self._name}': {', '.join(o.op for o in self._ops())}>"


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _namespaces():
        namespace = OpNamespace(name)
        globals()[name] = namespace  # found once, then a plain module attribute
        return namespace
    known = ", ".join(_namespaces()) or "none loaded"
    raise AttributeError(
        f"rt.ops has no namespace '{name}' (namespaces: {known}); load the plugin that defines it with "
        f"rt.ops.load_library(path) (a plugin folder, its plugin.json or its .so)")


def __dir__():
    return sorted(set(globals()) | set(_namespaces()))
