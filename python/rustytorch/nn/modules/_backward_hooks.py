"""Module backward hooks: the machinery behind Module.register_full_backward_hook, register_full_backward_pre_hook
and the legacy register_backward_hook.

A call of a module with full backward hooks (or pre-hooks) passes its tensor inputs through an identity autograd
Function before forward, and its tensor outputs through another after the forward hooks, as torch does. When
backward reaches the outputs' identity node, its grads are grad_output: the pre-hooks run there (each may return
a replacement) and the result is kept. When backward reaches the inputs' identity node, every gradient with
respect to the module's inputs has been accumulated: the full hooks run there with (module, grad_input,
grad_output), each may return a replacement grad_input, and what the last one leaves flows on to the inputs.

torch's conventions, kept: grad_input and grad_output have one entry per positional argument / output, None for
those that are not tensors; an output that got no gradient gives None; a tensor input that does not require grad
(when another does) gives zeros; when no input requires grad the full hooks run at the outputs' node with
grad_input all None and must return None; forward receives views (new tensors) of the inputs, and the caller a
view of each output.
"""
import warnings

from ... import _C
from ...autograd.function import Function

_Tensor = _C.Tensor


class BackwardHookFunction(Function):
    """Identity over a module's tensor inputs or outputs (torch's name); its backward calls on_backward with the
    incoming gradients and passes on what that returns. materialize=False: a tensor that got no gradient
    shows as None (outputs); True: as zeros (inputs, as torch)."""

    @staticmethod
    def forward(ctx, on_backward, materialize, *tensors):
        ctx._on_backward = on_backward
        ctx.set_materialize_grads(materialize)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, None) + tuple(ctx._on_backward(grads))


def _spread(indices, values, size):
    """values at the positions `indices` of a tuple of `size`, None elsewhere."""
    out = [None] * size
    for i, v in zip(indices, values):
        out[i] = v
    return tuple(out)


class BackwardHook:
    """One module call's full backward hooks: wrap its inputs (setup_input_hook) and outputs
    (setup_output_hook); the hooks run when backward reaches them."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = -1
        self.input_tensors_index = None
        self.n_outputs = -1
        self.output_tensors_index = None

    @staticmethod
    def _wrap(on_backward, materialize, args):
        indices = [i for i, a in enumerate(args) if isinstance(a, _Tensor)]
        tensors = [args[i] for i in indices]
        if not (_C.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None
        views = BackwardHookFunction.apply(on_backward, materialize, *tensors)
        wrapped = list(args)
        for i, v in zip(indices, views):
            wrapped[i] = v
        return tuple(wrapped), indices

    def setup_input_hook(self, args):
        wrapped, self.input_tensors_index = self._wrap(self._on_input_grads, True, args)
        self.n_inputs = len(args)
        return wrapped

    def setup_output_hook(self, result):
        is_tuple = isinstance(result, tuple)
        outputs = result if is_tuple else (result,)
        wrapped, self.output_tensors_index = self._wrap(self._on_output_grads, False, outputs)
        self.n_outputs = len(outputs)
        return wrapped if is_tuple else wrapped[0]

    def _on_output_grads(self, grads):
        self.grad_outputs = _spread(self.output_tensors_index, grads, self.n_outputs)
        for pre_hook in self.user_pre_hooks:
            replaced = pre_hook(self.module, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(replaced)}, "
                                   f"but expected {len(self.grad_outputs)}")
            self.grad_outputs = tuple(replaced)
        grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:  # nothing will reach the inputs: the full hooks run now
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(g is None for g in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return [grad_outputs[i] for i in self.output_tensors_index]

    def _on_input_grads(self, grads):
        if self.grad_outputs is None:  # the gradient reached the inputs without passing through the outputs
            return grads
        grad_inputs = _spread(self.input_tensors_index, grads, self.n_inputs)
        for hook in self.user_hooks:
            replaced = hook(self.module, grad_inputs, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != len(grad_inputs):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(replaced)}, but "
                                   f"expected {len(grad_inputs)}")
            grad_inputs = tuple(replaced)
        self.grad_outputs = None
        return [grad_inputs[i] for i in self.input_tensors_index]


class _LegacyHook:
    """A register_backward_hook hook, registered on the grad_fn of the module's first output tensor."""

    def __init__(self, hook, module):
        self.hook = hook
        self.module = module

    def __call__(self, grad_inputs, grad_outputs):
        return self.hook(self.module, grad_inputs, grad_outputs)


def _first_tensor(result):
    value = result
    while not isinstance(value, _Tensor):
        if isinstance(value, dict):
            value = next(v for v in value.values() if isinstance(v, _Tensor))
        else:
            value = value[0]
    return value


def register_legacy_hooks(module, inputs, result, hooks):
    """torch's register_backward_hook: each hook on the node that made the first output tensor; warns as torch
    where that node does not see every input and output of the module."""
    grad_fn = _first_tensor(result).grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(_LegacyHook(hook, module))
    _warn_partial_legacy_hook(inputs, result, grad_fn)


def _warn_partial_legacy_hook(inputs, result, grad_fn):
    advice = "Please use register_full_backward_hook to get the documented behavior."
    if isinstance(result, _Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, _Tensor) for r in result)):
        warnings.warn("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                      "Tensors is deprecated and will be removed in future versions. This hook will be missing some "
                      "of the grad_output. " + advice)
        return
    if isinstance(inputs, _Tensor):
        inputs = (inputs,)
    elif not (isinstance(inputs, tuple) and all(isinstance(i, _Tensor) for i in inputs)):
        warnings.warn("Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                      "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
                      "missing some of the grad_input. " + advice)
        return
    out_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_nodes or (len(out_nodes) == 1 and grad_fn not in out_nodes):
        warnings.warn("Using a non-full backward hook when outputs are nested in python data structure is "
                      "deprecated and will be removed in future versions. This hook will be missing some "
                      "grad_output.")
    elif len(out_nodes) > 1:
        warnings.warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                      "deprecated and will be removed in future versions. This hook will be missing some "
                      "grad_output. " + advice)
    else:
        input_nodes = {i.grad_fn for i in inputs if i.grad_fn is not None}
        next_nodes = {n for n, _ in grad_fn.next_functions}
        if input_nodes != next_nodes:
            warnings.warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                          "deprecated and will be removed in future versions. This hook will be missing some "
                          "grad_input. " + advice)
