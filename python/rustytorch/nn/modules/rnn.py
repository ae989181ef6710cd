"""Recurrent layers with PyTorch's names, shapes, parameters and init (torch.nn.RNN/LSTM/GRU and cells).

    lstm = rt.nn.LSTM(10, 20, num_layers=2, batch_first=True, dropout=0.1, bidirectional=True)
    out, (h_n, c_n) = lstm(x)              # x [B, T, 10] -> out [B, T, 40]; h_n, c_n [4, B, 20]
    out, h_n = rt.nn.GRU(10, 20)(packed)   # a PackedSequence in -> a PackedSequence out
    h = rt.nn.GRUCell(10, 20)(x_t, h)      # one step: x_t [B, 10], h [B, 20]

Shapes (D = 2 if bidirectional else 1, H_out = proj_size or hidden_size): input [T, B, I] ([B, T, I] with
batch_first; unbatched [T, I]); h_0 [num_layers * D, B, H_out], LSTM's c_0 [num_layers * D, B, hidden_size];
zeros when not given. output [T, B, D * H_out] holds the last layer's h at every step, directions
concatenated; h_n (and c_n) the final state of every layer and direction (index layer * D + direction).
Parameters: weight_ih_l{k}{_reverse} [G * hidden, I or D * H_out], weight_hh_l{k}{_reverse}
[G * hidden, H_out], bias_ih_l{k}{_reverse} and bias_hh_l{k}{_reverse} [G * hidden], and for LSTM with
proj_size weight_hr_l{k}{_reverse} [proj_size, hidden], with G = 4 (LSTM: i, f, g, o), 3 (GRU: r, z, n)
or 1; every one ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), so a PyTorch state_dict loads as it is.
dropout is applied to every layer's output except the last, in training mode only.
The time loop is in recurrence.py (one input-projection matmul per layer-direction, then per step only
h @ W_hh^T, the gates and the state update).
"""
import math
import numbers
import warnings

import rustytorch as rt

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from . import recurrence
from .module import Module, empty_tensor


def _shape(t):
    return list(t.shape)


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU; mode is 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU'."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if mode not in recurrence.GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode} (expected one of {', '.join(recurrence.GATES)})")
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             f"element being zeroed, got {dropout!r}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers),
                            ("proj_size", proj_size)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
        if hidden_size <= 0:
            raise ValueError(f"hidden_size must be greater than zero, got {hidden_size}")
        if num_layers <= 0:
            raise ValueError(f"num_layers must be greater than zero, got {num_layers}")
        if proj_size < 0:
            raise ValueError(f"proj_size should be a positive integer or zero to disable projections, got "
                             f"{proj_size}")
        if proj_size >= hidden_size:
            raise ValueError(f"proj_size has to be smaller than hidden_size (got proj_size={proj_size}, "
                             f"hidden_size={hidden_size})")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = recurrence.GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for kind, shape in shapes:
                    setattr(self, kind + suffix, Parameter(empty_tensor(shape, device, dtype)))
                    names.append(kind + suffix)
                self._all_weights.append(names)
        self._flat_weights_names = [name for names in self._all_weights for name in names]
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """Does nothing, by design: PyTorch calls this to copy the weights into one contiguous cuDNN buffer;
        rustytorch has no such buffer and always computes with the registered parameters in place, so they
        are already in the layout every call uses. Kept so that PyTorch code calling it runs unchanged."""

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters of each layer-direction: [[weight_ih, weight_hh, bias_ih, bias_hh, (weight_hr)], ...]."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- forward ----------------------------------------------------------------------------
    def _name(self):
        return type(self).__name__

    def _state_shapes(self, batch):
        directions = 2 if self.bidirectional else 1
        h_out = self.proj_size if self.proj_size > 0 else self.hidden_size
        shapes = [(self.num_layers * directions, batch, h_out)]
        if self.mode == "LSTM":
            shapes.append((self.num_layers * directions, batch, self.hidden_size))
        return shapes

    def _initial_state(self, hx, batch, unbatched, like):
        """hx as a list of [L * D, B, *] tensors (h, or h and c), validated; zeros when hx is None."""
        shapes = self._state_shapes(batch)
        if hx is None:
            zeros = [rt.zeros(shape, dtype=like.dtype, device=like.device) for shape in shapes]
            return zeros
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"{self._name()}: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
            states = list(hx)
        else:
            if not isinstance(hx, rt.Tensor):
                raise TypeError(f"{self._name()}: hx must be a tensor, got {type(hx).__name__}")
            states = [hx]
        names = ["h_0", "c_0"]
        wanted = 2 if unbatched else 3
        for i, s in enumerate(states):
            if s.dim() != wanted:
                kind = "unbatched 2-D" if unbatched else "batched 3-D"
                raise RuntimeError(f"{self._name()}: for {kind} input, {names[i]} should also be {wanted}-D but got "
                                   f"a {s.dim()}-D tensor of shape {_shape(s)}")
        if unbatched:
            states = [s.unsqueeze(1) for s in states]
        for i, (s, shape) in enumerate(zip(states, shapes)):
            if tuple(s.shape) != shape:
                expected = list(shape) if not unbatched else [shape[0], shape[2]]
                got = _shape(s) if not unbatched else [s.shape[0], s.shape[2]]
                raise RuntimeError(f"{self._name()}: expected {names[i]} of size {expected}, got {got} "
                                   "(num_layers * num_directions, batch, "
                                   f"{'hidden_size' if i or not self.proj_size else 'proj_size'})")
            if s.dtype != like.dtype:
                raise RuntimeError(f"{self._name()}: {names[i]} must have the type {like.dtype} like the input, "
                                   f"got {s.dtype}")
        return states

    def _check_input(self, rows):
        weight = self.weight_ih_l0
        if rows.shape[-1] != self.input_size:
            raise RuntimeError(f"{self._name()}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {rows.shape[-1]} (input of shape {_shape(rows)}); "
                               "build the module with the input's feature size or fix the input")
        if rows.dtype != weight.dtype:
            raise RuntimeError(f"{self._name()}: input must have the type {weight.dtype} like the module's "
                               f"weights, got {rows.dtype}; convert the input or the module (.to(dtype))")

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            if data.dim() != 2:
                raise RuntimeError(f"{self._name()}: a PackedSequence's data must be 2-D [sum(batch_sizes), "
                                   f"input_size], got shape {_shape(data)}")
            batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
            rows, unbatched = data, False
            batch = batch_sizes[0]
        else:
            if not isinstance(input, rt.Tensor):
                raise TypeError(f"{self._name()}: input must be a Tensor or a PackedSequence, got "
                                f"{type(input).__name__}")
            if input.dim() not in (2, 3):
                raise ValueError(f"{self._name()}: Expected input to be 2-D or 3-D but received {input.dim()}-D "
                                 f"tensor of shape {_shape(input)} (expected [T, B, input_size], [B, T, input_size] "
                                 "with batch_first=True, or unbatched [T, input_size])")
            unbatched = input.dim() == 2
            x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first else input)
            steps, batch = x.shape[0], x.shape[1]
            if steps == 0:
                raise ValueError(f"{self._name()}: the input has no time steps (shape {_shape(input)})")
            rows = x.reshape((steps * batch, x.shape[2]))
            batch_sizes = [batch] * steps
        self._check_input(rows)
        states = self._initial_state(hx, batch, unbatched, rows)
        if packed and sorted_indices is not None:
            states = [s.index_select(1, sorted_indices) for s in states]
        out_rows, finals = self._run_layers(rows, states, batch_sizes)
        finals = [rt.stack(f, 0) for f in finals]
        if packed:
            if unsorted_indices is not None:
                finals = [f.index_select(1, unsorted_indices) for f in finals]
            output = PackedSequence(out_rows, batch_sizes_t, sorted_indices, unsorted_indices)
        else:
            output = out_rows.reshape((steps, batch, out_rows.shape[1]))
            if unbatched:
                output = output.squeeze(1)
                finals = [f.squeeze(1) for f in finals]
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, (tuple(finals) if self.mode == "LSTM" else finals[0])

    def _run_layers(self, rows, states, batch_sizes):
        """All layers over time-major rows; returns the last layer's output rows and, per state, the list of
        final states of every layer-direction."""
        mode = self.mode
        directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                rows = F.dropout(rows, self.dropout, True)
            outputs = []
            for direction, names in enumerate(self._all_weights[layer * directions:(layer + 1) * directions]):
                weights = [getattr(self, name) for name in names]
                w_ih, w_hh = weights[0], weights[1]
                b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
                w_hr = weights[-1] if self.proj_size > 0 else None
                projections, step_weights = recurrence.prepare(mode, rows, w_ih, w_hh, b_ih, b_hh, w_hr)
                index = layer * directions + direction
                state = tuple(s[index] for s in states)
                out, state = recurrence.run_direction(mode, projections, state, step_weights, batch_sizes,
                                                      reverse=direction == 1)
                outputs.append(out)
                for k, s in enumerate(state):
                    finals[k].append(s)
            rows = outputs[0] if directions == 1 else rt.cat(outputs, 1)
        return rows, finals


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu with nonlinearity='relu')."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, proj_size=None):
        if proj_size is not None:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory; forward(input, (h_0, c_0)) -> output, (h_n, c_n). With proj_size > 0 the hidden
    state is projected: h_t = (o_t * tanh(c_t)) W_hr^T, of size proj_size."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit; forward(input, h_0) -> output, h_n."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, proj_size=None):
        if proj_size is not None:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)


class RNNCellBase(Module):
    """One time step: weight_ih [G * hidden, input], weight_hh [G * hidden, hidden], bias_ih, bias_hh [G * hidden],
    all ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)). Input [B, input] or unbatched [input]."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{type(self).__name__}: {name} must be a positive int, got {value!r}")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty_tensor((num_chunks * hidden_size, input_size), device, dtype))
        self.weight_hh = Parameter(empty_tensor((num_chunks * hidden_size, hidden_size), device, dtype))
        if bias:
            self.bias_ih = Parameter(empty_tensor((num_chunks * hidden_size,), device, dtype))
            self.bias_hh = Parameter(empty_tensor((num_chunks * hidden_size,), device, dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _step(self, mode, input, hx, n_states):
        """Validates input/hx, runs one step of `mode`, returns the new state tuple (unbatched when input is)."""
        name = type(self).__name__
        if not isinstance(input, rt.Tensor):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1-D or 2-D but received {input.dim()}-D tensor of shape "
                             f"{_shape(input)} (expected [batch, input_size] or unbatched [input_size])")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input has inconsistent input_size: got {input.shape[-1]} expected "
                               f"{self.input_size} (input of shape {_shape(input)})")
        if input.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"{name}: input must have the type {self.weight_ih.dtype} like the cell's weights, "
                               f"got {input.dtype}; convert the input or the module (.to(dtype))")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        batch = x.shape[0]
        if hx is None:
            states = [rt.zeros((batch, self.hidden_size), dtype=x.dtype, device=x.device)] * n_states
        else:
            states = list(hx) if n_states == 2 else [hx]
            if n_states == 2 and len(states) != 2:
                raise TypeError(f"{name}: hx must be a tuple (h_0, c_0)")
            labels = ["h_0", "c_0"] if n_states == 2 else ["hx"]
            for i, s in enumerate(states):
                if s.dim() != input.dim():
                    raise RuntimeError(f"{name}: {labels[i]} must be {input.dim()}-D like the input, got shape "
                                       f"{_shape(s)}")
                s = s.unsqueeze(0) if unbatched else s
                if s.shape[0] != batch:
                    raise RuntimeError(f"{name}: Input batch size {batch} doesn't match {labels[i]} batch size "
                                       f"{s.shape[0]}")
                if s.shape[1] != self.hidden_size:
                    raise RuntimeError(f"{name}: {labels[i]} has inconsistent hidden_size: got {s.shape[1]}, "
                                       f"expected {self.hidden_size}")
                states[i] = s
        out = recurrence.cell_step(mode, x, tuple(states), self.weight_ih, self.weight_hh, self.bias_ih,
                                   self.bias_hh)
        return tuple(s.squeeze(0) for s in out) if unbatched else out


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (relu with nonlinearity='relu')."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}. Select from 'tanh' or 'relu'.")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return self._step(mode, input, hx, 1)[0]


class LSTMCell(RNNCellBase):
    """forward(input, (h, c)) -> (h', c'), gates i, f, g, o as in LSTM."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        return self._step("LSTM", input, hx, 2)


class GRUCell(RNNCellBase):
    """forward(input, h) -> h', gates r, z, n as in GRU."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        return self._step("GRU", input, hx, 1)[0]
