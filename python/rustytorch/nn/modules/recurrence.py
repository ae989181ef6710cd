"""The per-step cell math and the time loop shared by rt.nn.RNN/LSTM/GRU and their *Cell modules.

Every sequence is handled as time-major rows: a padded [T, B, I] input is viewed as [T * B, I] with
batch_sizes [B] * T, and a PackedSequence's data already is [sum(batch_sizes), I] (batch_sizes
non-increasing). One layer-direction then costs:

    projections = rows @ W_ih^T + bias                    # one matmul for every time step (GRU: two)
    pieces = split_rows(projections, batch_sizes)          # one backward node: see Note [Row split backward]
    for each step t: state = step(pieces[t], state, weights)

so a step only does h @ W_hh^T, the gate nonlinearities and the state update. Gate layouts are
PyTorch's: LSTM (i, f, g, o), GRU (r, z, n). RNN and LSTM fold both biases into the input projection
(b_ih + b_hh); GRU projects its r/z rows and its n rows separately (W_ih and W_hh are used through row
views), so that r and z come out of one addmm + sigmoid per step and b_hn stays inside r * (h W_hn^T + b_hn).

Note [Row split backward]: the engine's slice/select backward gives each piece a zero gradient of the
whole tensor's size and copies its part in, so taking T steps out of a [T * B, G] tensor with narrow costs
T full-size gradients (the LSTM word-model benchmark spent 60% of its backward there). split_rows is a
custom Function whose one backward concatenates the T piece gradients. Like every rt.autograd.Function
backward, that one is not differentiated again (create_graph), so double backward through these modules
waits for the engine to give split/unbind a single-node backward.

Sequences that end early (packed input) leave the batch from its end: the forward direction narrows
the state when batch_sizes shrinks and keeps the rows that finished as their final state; the reverse
direction starts with the shortest batch and appends rows of the initial state as sequences begin.
"""
from collections import namedtuple

import rustytorch as rt

# Per layer-direction weights as the step sees them: W_hh^T (GRU: its r and z rows), GRU's W_hn^T and b_hn,
# LSTM's W_hr^T with proj_size (None where unused).
StepWeights = namedtuple("StepWeights", ["hh_t", "hn_t", "b_hn", "hr_t"])

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_tanh_step(xs, state, w):
    return (rt.addmm(xs[0], state[0], w.hh_t).tanh(),)


def _rnn_relu_step(xs, state, w):
    return (rt.addmm(xs[0], state[0], w.hh_t).relu(),)


def _lstm_step(xs, state, w):
    h, c = state
    i, f, g, o = rt.addmm(xs[0], h, w.hh_t).chunk(4, 1)
    c = rt.addcmul(f.sigmoid() * c, i.sigmoid(), g.tanh())
    h = o.sigmoid() * c.tanh()
    if w.hr_t is not None:
        h = h.mm(w.hr_t)
    return h, c


def _gru_step(xs, state, w):
    x_rz, x_n = xs
    h = state[0]
    r, z = rt.addmm(x_rz, h, w.hh_t).sigmoid().chunk(2, 1)
    h_n = h.mm(w.hn_t) if w.b_hn is None else rt.addmm(w.b_hn, h, w.hn_t)
    n = rt.addcmul(x_n, r, h_n).tanh()
    return (rt.lerp(n, h, z),)  # (1 - z) * n + z * h


STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step, "GRU": _gru_step}


def _project(rows, w_ih, bias):
    """rows @ W_ih^T (+ bias) for all the rows at once."""
    return rows.mm(w_ih.t()) if bias is None else rt.addmm(bias, rows, w_ih.t())


def prepare(mode, rows, w_ih, w_hh, b_ih, b_hh, w_hr):
    """The input projections of all rows (a tuple: GRU's r/z part and n part, else one tensor) and StepWeights.

    RNN and LSTM fold b_ih + b_hh into the projection; GRU folds the r and z parts of b_hh and keeps b_hn in
    the step, since n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))."""
    if mode != "GRU":
        bias = None if b_ih is None else b_ih + b_hh
        return (_project(rows, w_ih, bias),), StepWeights(w_hh.t(), None, None, None if w_hr is None else w_hr.t())
    two = 2 * w_hh.shape[1]
    n = w_hh.shape[0] - two
    rz_bias = None if b_ih is None else b_ih.narrow(0, 0, two) + b_hh.narrow(0, 0, two)
    n_bias = None if b_ih is None else b_ih.narrow(0, two, n)
    projections = (_project(rows, w_ih.narrow(0, 0, two), rz_bias), _project(rows, w_ih.narrow(0, two, n), n_bias))
    b_hn = None if b_hh is None else b_hh.narrow(0, two, n)
    return projections, StepWeights(w_hh.narrow(0, 0, two).t(), w_hh.narrow(0, two, n).t(), b_hn, None)


def cell_step(mode, x, state, w_ih, w_hh, b_ih, b_hh):
    """One step of an RNNCell/LSTMCell/GRUCell on a batched [B, I] input."""
    projections, weights = prepare(mode, x, w_ih, w_hh, b_ih, b_hh, None)
    return STEPS[mode](projections, state, weights)


class _SplitRows(rt.autograd.Function):
    """rows.split(sizes) with one backward node that concatenates the pieces' gradients; see Note [Row split
    backward]."""

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


def run_direction(mode, projections, state, weights, batch_sizes, reverse):
    """Runs one layer-direction over its input projections ([sum(batch_sizes), *] each, time-major rows).

    state is a tuple of [batch_sizes[0], *] tensors (h, or (h, c) for LSTM). Returns the outputs
    ([sum(batch_sizes), H_out], rows in the same order as the input) and the final state tuple.
    """
    step = STEPS[mode]
    steps = list(zip(*(split_rows(p, batch_sizes) for p in projections)))
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
