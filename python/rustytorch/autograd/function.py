"""rt.autograd.Function: an op whose forward and backward are your own code (torch.autograd.Function).

    class Exp(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_y):
            y, = ctx.saved_tensors
            return grad_y * y               # one gradient per forward input (None for non-tensors)

    y = Exp.apply(x)                        # y.grad_fn.name() == "ExpBackward"

forward runs with grad mode off; its outputs get one backward node, "<Class>Backward", whose
edges are the forward's tensor inputs. The ctx methods are torch's: save_for_backward and
saved_tensors (checked against in-place modification), needs_input_grad, mark_dirty (an input
modified in place and returned), mark_non_differentiable, set_materialize_grads. forward may also
take no ctx when the class defines setup_context(ctx, inputs, output). Differences from torch:
backward is never differentiated again (create_graph is not supported, so once_differentiable is
what every backward is); saved tensors, and outputs kept as ctx attributes, come back as detached
aliases (the engine's graph is C++, invisible to Python's garbage collector, so an output held by
ctx would otherwise keep itself alive); y.grad_fn is the engine's node, which answers for ctx's
attributes (y.grad_fn.saved_tensors) but is not ctx itself; there is no jvp/vmap.
"""
import functools
import inspect

import rustytorch as rt
from .. import _C
from .._grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

_P = _C._profiler


class FunctionCtx:
    """What forward and backward share: the `ctx` argument."""

    def save_for_backward(self, *tensors):
        """Keeps tensors (or None) for backward; read them back with ctx.saved_tensors there. Only
        inputs, outputs and tensors made in forward may be saved this way; anything else, keep as an
        attribute of ctx."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self):
        saved = getattr(self, "_saved", None)
        if saved is None:
            if getattr(self, "_to_save", None) is not None:
                raise RuntimeError("saved_tensors can be read in backward (or after forward returned), not in "
                                   "forward: use the tensors themselves there")
            return ()
        return tuple(None if s is None else s.unpack() for s in saved)

    def mark_dirty(self, *tensors):
        """Declares inputs that forward modified in place (and returns): their history moves to this node."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declares outputs that get no gradient (indices, masks): they do not require grad, and backward
        receives zeros (or None, see set_materialize_grads) for them."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """True (the default): backward receives zeros for outputs that got no gradient. False: None."""
        self._materialize_grads = bool(value)


_Tensor = _C.Tensor


def _is_tensor(x):
    return isinstance(x, _Tensor)


def _contains(objs, x):
    return any(o is x for o in objs)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"


class Function(metaclass=_FunctionMeta):
    """Base class of custom autograd ops: define forward and backward as staticmethods, call apply."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use new-style "
                           "autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def vjp(cls, ctx, *grad_outputs):
        return cls.backward(ctx, *grad_outputs)

    @classmethod
    def apply(cls, *args, **kwargs):
        uses_setup_context = cls.setup_context is not Function.setup_context
        if kwargs:
            if not uses_setup_context:
                raise TypeError(f"{cls.__name__}.apply() takes no keyword arguments: pass them positionally (only "
                                f"positional tensors get gradients), or define setup_context")
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)  # as torch: they become positional inputs
            bound.apply_defaults()
            args, kwargs = bound.args, {}
        ctx = FunctionCtx()
        arg_is_tensor = [isinstance(a, _Tensor) for a in args]
        tensor_inputs = [a for a, is_tensor in zip(args, arg_is_tensor) if is_tensor]
        grad_enabled = _C.is_grad_enabled()
        record = grad_enabled and any(t.requires_grad for t in tensor_inputs)
        ctx.needs_input_grad = tuple(record and is_tensor and a.requires_grad for a, is_tensor in zip(args, arg_is_tensor))
        ctx._materialize_grads = True
        span = _P.OpenRange(cls.__name__) if _P.profiling_active() else None
        _C._set_grad_enabled(False)  # forward runs without recording, as torch's
        try:
            if uses_setup_context:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        finally:
            _C._set_grad_enabled(grad_enabled)
            if span is not None:
                span.close()
        if not record:
            return output
        return cls._record(ctx, arg_is_tensor, tensor_inputs, output)

    @classmethod
    def _record(cls, ctx, arg_is_tensor, tensor_inputs, output):
        is_tuple = isinstance(output, tuple)
        outputs = list(output) if is_tuple else [output]
        input_ids = {id(t) for t in tensor_inputs}
        dirty = ctx.__dict__.get("_dirty", ())
        dirty_ids = {id(t) for t in dirty}
        for t in dirty:
            if id(t) not in input_ids:
                raise RuntimeError(f"{cls.__name__}: mark_dirty was given a tensor that is not an input of forward")
            if not _contains(outputs, t):
                raise RuntimeError(f"{cls.__name__}: Some elements marked as dirty weren't returned as outputs; return "
                                   "each input you modified in place")
        non_diff_ids = {id(t) for t in ctx.__dict__.get("_non_differentiable", ())}
        originals = list(outputs)
        differentiable, metas = [], []
        for i, o in enumerate(outputs):
            if not isinstance(o, _Tensor):
                metas.append(None)
                continue
            if id(o) in input_ids and id(o) not in dirty_ids:
                # An input returned unchanged becomes a new tensor (a view of it), so that the input keeps its own
                # history; one modified in place (mark_dirty) is the output itself, rebased.
                outputs[i] = o.detach()
            if id(o) not in non_diff_ids:
                differentiable.append(i)
            metas.append((o.shape, o.dtype, o.device))
        n_outputs = len(outputs)
        backward_name = cls._backward_name
        materialize = ctx._materialize_grads

        def run_backward(*grads):
            full = [None] * n_outputs
            for slot, g in zip(differentiable, grads):
                full[slot] = g
            if materialize:
                for slot in range(n_outputs):
                    if full[slot] is None and metas[slot] is not None:
                        shape, dtype, device = metas[slot]
                        full[slot] = rt.zeros(shape, dtype=dtype, device=device)
            result = cls.backward(ctx, *full)
            return _tensor_input_grads(backward_name, result, arg_is_tensor)

        def release_saved():  # after a backward without retain_graph, as torch frees saved tensors
            for saved in ctx.__dict__.get("_saved") or ():
                if saved is not None:
                    saved.reset()

        _C._record_custom_function(backward_name, tensor_inputs, [outputs[i] for i in differentiable],
                                   run_backward, materialize, cls.__name__, release_saved, ctx)
        # The marks were for recording only: a dirty input, now an output of the node, would hold the node through
        # ctx (held by the node), a cycle through C++ that Python's garbage collector cannot see.
        ctx.__dict__.pop("_dirty", None)
        ctx.__dict__.pop("_non_differentiable", None)
        _alias_outputs_kept_on(ctx, outputs)
        # Saved after the node exists: an output is saved as a detached alias, so that ctx (held by the
        # node) does not hold the node through the output's grad_fn.
        to_save = ctx.__dict__.get("_to_save")
        if to_save is not None:
            replaced = {id(o): outputs[i] for i, o in enumerate(originals) if outputs[i] is not o}
            ctx._saved = [None if t is None else _C._SavedTensor(replaced.get(id(t), t)) for t in to_save]
            ctx._to_save = None
        return tuple(outputs) if is_tuple else outputs[0]


def _alias_outputs_kept_on(ctx, outputs):
    """An output kept as an attribute of ctx (ctx.out = y, ctx.outs = [y]) would make a reference cycle through
    the C++ node, which Python's garbage collector cannot see: it is kept as a detached alias instead (same
    storage and version, no history), as save_for_backward keeps outputs."""
    aliases = {}

    def alias(value):  # an input returned unchanged was replaced by a new output: holding it makes no cycle
        for i, o in enumerate(outputs):
            if value is o:
                if i not in aliases:
                    aliases[i] = outputs[i].detach()
                return aliases[i]
        return value

    kept = [(name, value) for name, value in vars(ctx).items() if name[0] != "_" and name != "needs_input_grad"]
    for name, value in kept:
        if _is_tensor(value):
            setattr(ctx, name, alias(value))
        elif type(value) in (list, tuple):
            setattr(ctx, name, type(value)(alias(v) if _is_tensor(v) else v for v in value))
        elif type(value) is dict:
            setattr(ctx, name, {k: alias(v) if _is_tensor(v) else v for k, v in value.items()})


def _tensor_input_grads(backward_name, result, arg_is_tensor):
    """backward's result (one gradient per forward argument) -> one per tensor argument, checked as torch."""
    grads = result if isinstance(result, tuple) else (result,)
    n = len(arg_is_tensor)
    if len(grads) != n:
        if len(grads) < n or any(g is not None for g in grads[n:]):
            raise RuntimeError(f"function {backward_name} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(grads)})")
        grads = grads[:n]
    out = []
    for i, (g, is_tensor) in enumerate(zip(grads, arg_is_tensor)):
        if not is_tensor:
            if g is not None:
                raise RuntimeError(f"function {backward_name} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
            continue
        if g is not None and not _is_tensor(g):
            raise RuntimeError(f"function {backward_name} returned an object of type {type(g).__name__} as the "
                            f"gradient at position {i + 1}; expected a Tensor or None")
        out.append(g)
    return out


def once_differentiable(fn):
    """Marks a backward that cannot itself be differentiated. rustytorch never differentiates a backward
    (create_graph=True is not supported), so every backward already is; kept for torch's code."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper

