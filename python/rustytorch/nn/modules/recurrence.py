"""The per-step cell math and the time loop shared by rt.nn.RNN/LSTM/GRU and their *Cell modules.

Every sequence is handled as time-major rows: a padded [T, B, I] input is viewed as [T * B, I] with
batch_sizes [B] * T, and a PackedSequence's data already is [sum(batch_sizes), I] (batch_sizes
non-increasing). One layer-direction then costs:

    xw = addmm(input_bias, rows, W_ih^T)                  # one matmul for every time step
    for each step t: state = step(xw[offset_t : offset_t + batch_sizes[t]], state, weights)

so a step only does h @ W_hh^T, the gate nonlinearities and the state update. Gate layouts are
PyTorch's: LSTM (i, f, g, o), GRU (r, z, n). For RNN and LSTM both biases are folded into the input
projection (b_ih + b_hh); GRU keeps b_hh in the step, since its n gate multiplies (W_hn h + b_hn) by r.

Sequences that end early (packed input) leave the batch from its end: the forward direction narrows
the state when batch_sizes shrinks and keeps the rows that finished as their final state; the reverse
direction starts with the shortest batch and appends rows of the initial state as sequences begin.
"""
from collections import namedtuple

import rustytorch as rt

# Per layer-direction weights as the step sees them: W_hh^T, b_hh (GRU only, else None), W_hr^T (LSTM with
# proj_size, else None).
StepWeights = namedtuple("StepWeights", ["hh_t", "b_hh", "hr_t"])

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_tanh_step(xw, state, w):
    return (rt.addmm(xw, state[0], w.hh_t).tanh(),)


def _rnn_relu_step(xw, state, w):
    return (rt.addmm(xw, state[0], w.hh_t).relu(),)


def _lstm_step(xw, state, w):
    h, c = state
    i, f, g, o = rt.addmm(xw, h, w.hh_t).chunk(4, 1)
    c = rt.addcmul(f.sigmoid() * c, i.sigmoid(), g.tanh())
    h = o.sigmoid() * c.tanh()
    if w.hr_t is not None:
        h = h.mm(w.hr_t)
    return h, c


def _gru_step(xw, state, w):
    h = state[0]
    gh = h.mm(w.hh_t) if w.b_hh is None else rt.addmm(w.b_hh, h, w.hh_t)
    x_r, x_z, x_n = xw.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = (x_r + h_r).sigmoid()
    z = (x_z + h_z).sigmoid()
    n = rt.addcmul(x_n, r, h_n).tanh()
    return (rt.lerp(n, h, z),)  # (1 - z) * n + z * h


STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step, "GRU": _gru_step}


def input_bias(mode, b_ih, b_hh):
    """The bias added to the input projection: b_ih + b_hh, except for GRU (b_ih only); None without bias."""
    if b_ih is None:
        return None
    return b_ih if mode == "GRU" else b_ih + b_hh


def step_weights(mode, w_hh, b_hh, w_hr):
    return StepWeights(w_hh.t(), b_hh if mode == "GRU" else None, None if w_hr is None else w_hr.t())


def project(rows, w_ih, bias):
    """rows @ W_ih^T (+ bias) for all the rows at once."""
    return rows.mm(w_ih.t()) if bias is None else rt.addmm(bias, rows, w_ih.t())


def cell_step(mode, x, state, w_ih, w_hh, b_ih, b_hh):
    """One step of an RNNCell/LSTMCell/GRUCell on a batched [B, I] input."""
    xw = project(x, w_ih, input_bias(mode, b_ih, b_hh))
    return STEPS[mode](xw, state, step_weights(mode, w_hh, b_hh, None))


class _SplitRows(rt.autograd.Function):
    """rows.split(sizes) with one backward node that concatenates the pieces' gradients.

    See Note [Row split backward]: the engine's slice backward gives every piece a full-size zero
    gradient, which for T pieces costs T times the tensor's size; this costs it once."""

    @staticmethod
    def forward(ctx, rows, sizes):
        return tuple(rows.split(sizes, 0))

    @staticmethod
    def backward(ctx, *grads):
        return rt.cat(grads, 0), None


def split_rows(rows, sizes):
    """rows.split(sizes, 0) whose backward is one cat (rows.split's own backward when no grad is needed)."""
    if rows.requires_grad and rt.is_grad_enabled():
        return _SplitRows.apply(rows, list(sizes))
    return rows.split(list(sizes), 0)


def _narrow_rows(state, start, length):
    return tuple(s.narrow(0, start, length) for s in state)


def run_direction(mode, xw, state, weights, batch_sizes, reverse):
    """Runs one layer-direction over xw ([sum(batch_sizes), G] input projections, time-major rows).

    state is a tuple of [batch_sizes[0], *] tensors (h, or (h, c) for LSTM). Returns the outputs
    ([sum(batch_sizes), H_out], rows in the same order as xw) and the final state tuple.
    """
    step = STEPS[mode]
    steps = split_rows(xw, batch_sizes)
    outputs = []
    if not reverse:
        finished = []  # final states of sequences that ended, the highest rows first
        rows = batch_sizes[0]
        for t, bs in enumerate(batch_sizes):
            if bs < rows:
                finished.append(_narrow_rows(state, bs, rows - bs))
                state, rows = _narrow_rows(state, 0, bs), bs
            state = step(steps[t], state, weights)
            outputs.append(state[0])
        if finished:
            state = tuple(rt.cat([s] + [f[k] for f in reversed(finished)], 0) for k, s in enumerate(state))
    else:
        initial = state
        rows = batch_sizes[-1]
        if rows < batch_sizes[0]:
            state = _narrow_rows(initial, 0, rows)
        for t in range(len(batch_sizes) - 1, -1, -1):
            bs = batch_sizes[t]
            if bs > rows:
                state = tuple(rt.cat([s, s0.narrow(0, rows, bs - rows)], 0) for s, s0 in zip(state, initial))
                rows = bs
            state = step(steps[t], state, weights)
            outputs.append(state[0])
        outputs.reverse()
    return rt.cat(outputs, 0), state
