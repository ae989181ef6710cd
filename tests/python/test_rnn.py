"""Parity with PyTorch 1.13 for the recurrent modules (rt.nn.RNN/LSTM/GRU, RNNCell/LSTMCell/GRUCell) and
rt.nn.utils.rnn's packed sequences. PyTorch's weights are copied into ours through load_state_dict, then
outputs, final states and the gradients of the input, the initial states and every parameter are compared
(float64 to 1e-10, float32 to 1e-5) for every option: layers, bias, batch_first, bidirectional, proj_size,
initial states given or not, unbatched input, PackedSequence input (sorted or not), dropout in eval and
training. Also: parameter names, shapes and init, repr, a PyTorch state_dict round trip both ways, a short SGD
trajectory, and the errors for bad arguments and shapes."""
import itertools
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import rustytorch as rt
from conftest import assert_close
from rustytorch.nn.utils import rnn as rnn_utils

torch = pytest.importorskip("torch")
import torch.nn.utils.rnn as torch_rnn_utils  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODES = ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"]
DTYPES = {"float64": (torch.float64, rt.float64), "float32": (torch.float32, rt.float32)}


def module_pair(mode, input_size, hidden_size, dtype="float64", **kw):
    """A PyTorch module and ours with PyTorch's weights."""
    tdtype, rdtype = DTYPES[dtype]
    if mode.startswith("RNN_"):
        kw["nonlinearity"] = mode[4:].lower()
        tcls, rcls = torch.nn.RNN, rt.nn.RNN
    else:
        tcls, rcls = getattr(torch.nn, mode), getattr(rt.nn, mode)
    torch.manual_seed(0)
    tm = tcls(input_size, hidden_size, **kw).to(tdtype)
    rm = rcls(input_size, hidden_size, **kw).to(rdtype)
    rm.load_state_dict({k: rt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, rm


def leaf(rng, shape, dtype):
    a = rng.standard_normal(shape)
    t = torch.tensor(a, dtype=DTYPES[dtype][0], requires_grad=True)
    r = rt.tensor(a, dtype=DTYPES[dtype][1]).requires_grad_()
    return t, r


def states_of(h):
    return list(h) if isinstance(h, tuple) else [h]


def loss_of(lib, outputs, weights):
    total = None
    for out, w in zip(outputs, weights):
        term = (out * lib.tensor(w, dtype=out.dtype)).sum()
        total = term if total is None else total + term
    return total


def check_run(tm, rm, t_in, r_in, t_hx, r_hx, leaves, dtype, what):
    """Runs both modules, compares outputs and states, then the gradients of leaves and parameters."""
    t_out, t_h = tm(t_in, t_hx) if t_hx is not None else tm(t_in)
    r_out, r_h = rm(r_in, r_hx) if r_hx is not None else rm(r_in)
    if isinstance(t_out, torch_rnn_utils.PackedSequence):
        assert isinstance(r_out, rnn_utils.PackedSequence), what
        np.testing.assert_array_equal(r_out.batch_sizes.numpy(), t_out.batch_sizes.numpy())
        t_out, r_out = t_out.data, r_out.data
    t_states, r_states = states_of(t_h), states_of(r_h)
    assert isinstance(r_h, tuple) == isinstance(t_h, tuple), what
    assert_close(r_out, t_out, dtype, f"{what}: output")
    for i, (r, t) in enumerate(zip(r_states, t_states)):
        assert_close(r, t, dtype, f"{what}: state {i}")
    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(tuple(t.shape)) for t in [t_out] + t_states]
    loss_of(torch, [t_out] + t_states, weights).backward()
    loss_of(rt, [r_out] + r_states, weights).backward()
    for i, (t, r) in enumerate(leaves):
        assert_close(r.grad, t.grad, dtype, f"{what}: grad of leaf {i}")
    r_params = dict(rm.named_parameters())
    assert list(r_params) == [n for n, _ in tm.named_parameters()], what
    for name, p in tm.named_parameters():
        assert_close(r_params[name].grad, p.grad, dtype, f"{what}: grad of {name}")


def initial_states(rng, mode, layers, directions, batch, hidden, proj, dtype, unbatched=False):
    lead = (layers * directions,) if unbatched else (layers * directions, batch)
    h = leaf(rng, lead + (proj or hidden,), dtype)
    if mode != "LSTM":
        return h[0], h[1], [h]
    c = leaf(rng, lead + (hidden,), dtype)
    return (h[0], c[0]), (h[1], c[1]), [h, c]


def run_padded_case(mode, dtype, layers=1, bidirectional=False, batch_first=False, bias=True, with_hx=True,
                    proj_size=0, unbatched=False, steps=5, batch=3, input_size=4, hidden=6):
    kw = dict(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
    if proj_size:
        kw["proj_size"] = proj_size
    tm, rm = module_pair(mode, input_size, hidden, dtype, **kw)
    rng = np.random.default_rng(0)
    if unbatched:
        shape = (steps, input_size)
    else:
        shape = (batch, steps, input_size) if batch_first else (steps, batch, input_size)
    tx, rx = leaf(rng, shape, dtype)
    leaves = [(tx, rx)]
    t_hx = r_hx = None
    if with_hx:
        t_hx, r_hx, hx_leaves = initial_states(rng, mode, layers, 2 if bidirectional else 1, batch, hidden,
                                                proj_size, dtype, unbatched)
        leaves += hx_leaves
    check_run(tm, rm, tx, rx, t_hx, r_hx, leaves, dtype, f"{mode} {kw} hx={with_hx} unbatched={unbatched}")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layers,bidirectional", [(1, False), (1, True), (2, False), (2, True)])
@pytest.mark.parametrize("batch_first,bias,with_hx", [(False, True, True), (True, True, False),
                                                      (False, False, False), (True, False, True)])
def test_module_parity_float64(mode, layers, bidirectional, batch_first, bias, with_hx):
    run_padded_case(mode, "float64", layers, bidirectional, batch_first, bias, with_hx)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_module_parity_float32(mode, bidirectional):
    run_padded_case(mode, "float32", layers=2, bidirectional=bidirectional, batch_first=True, with_hx=True,
                    steps=7, batch=4, input_size=5, hidden=8)


@pytest.mark.parametrize("layers,bidirectional,batch_first,with_hx",
                         [(1, False, False, True), (1, True, True, False), (2, False, True, True),
                          (2, True, False, True), (3, True, True, False)])
def test_lstm_proj_size_parity(layers, bidirectional, batch_first, with_hx):
    run_padded_case("LSTM", "float64", layers, bidirectional, batch_first, with_hx=with_hx, proj_size=3)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional,with_hx", [(False, True), (True, False), (True, True)])
def test_unbatched_input_parity(mode, bidirectional, with_hx):
    run_padded_case(mode, "float64", layers=2, bidirectional=bidirectional, with_hx=with_hx, unbatched=True)


def test_unbatched_lstm_with_projection_shapes():
    run_padded_case("LSTM", "float64", layers=2, bidirectional=True, with_hx=True, unbatched=True, proj_size=2)
    out, (h, c) = rt.nn.LSTM(4, 6, 2, proj_size=2, bidirectional=True)(rt.randn(5, 4))
    assert (tuple(out.shape), tuple(h.shape), tuple(c.shape)) == ((5, 4), (4, 2), (4, 6))


def test_single_step_and_batch_of_one():
    run_padded_case("LSTM", "float64", layers=2, bidirectional=True, steps=1, batch=1)
    run_padded_case("GRU", "float64", layers=1, bidirectional=True, steps=1, batch=2)


# ---- packed sequences through the modules ------------------------------------------------------------
PACKED_CASES = [(mode, enforce_sorted, bidirectional) for mode in MODES for enforce_sorted in (True, False)
                for bidirectional in (False, True)]


def run_packed_case(mode, enforce_sorted, bidirectional, with_hx=True, proj_size=0, dtype="float64",
                    batch_first=False, layers=2):
    lengths = [6, 4, 4, 1, 2] if not enforce_sorted else [6, 4, 4, 2, 1]
    batch, steps, input_size, hidden = len(lengths), max(lengths), 3, 5
    kw = dict(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
    if proj_size:
        kw["proj_size"] = proj_size
    tm, rm = module_pair(mode, input_size, hidden, dtype, **kw)
    rng = np.random.default_rng(2)
    shape = (batch, steps, input_size) if batch_first else (steps, batch, input_size)
    tx, rx = leaf(rng, shape, dtype)
    t_packed = torch_rnn_utils.pack_padded_sequence(tx, torch.tensor(lengths), batch_first=batch_first,
                                                    enforce_sorted=enforce_sorted)
    r_packed = rnn_utils.pack_padded_sequence(rx, rt.tensor(lengths), batch_first=batch_first,
                                              enforce_sorted=enforce_sorted)
    leaves = [(tx, rx)]
    t_hx = r_hx = None
    if with_hx:
        t_hx, r_hx, hx_leaves = initial_states(rng, mode, layers, 2 if bidirectional else 1, batch, hidden,
                                                proj_size, dtype)
        leaves += hx_leaves
    check_run(tm, rm, t_packed, r_packed, t_hx, r_hx, leaves, dtype,
              f"packed {mode} {kw} enforce_sorted={enforce_sorted} hx={with_hx}")


@pytest.mark.parametrize("mode,enforce_sorted,bidirectional", PACKED_CASES)
def test_packed_input_parity(mode, enforce_sorted, bidirectional):
    run_packed_case(mode, enforce_sorted, bidirectional)


@pytest.mark.parametrize("bidirectional,enforce_sorted", [(False, False), (True, True), (True, False)])
def test_packed_lstm_projection_and_default_state(bidirectional, enforce_sorted):
    run_packed_case("LSTM", enforce_sorted, bidirectional, with_hx=False, proj_size=2, batch_first=True)


def test_packed_float32_and_output_unpacks_like_torch():
    run_packed_case("GRU", False, True, dtype="float32", layers=1)
    lengths = [3, 5, 2]
    tm, rm = module_pair("LSTM", 2, 4, bidirectional=True)
    x = np.random.default_rng(3).standard_normal((3, 5, 2))
    t_out, _ = tm(torch_rnn_utils.pack_padded_sequence(torch.tensor(x), lengths, True, enforce_sorted=False))
    r_out, _ = rm(rnn_utils.pack_padded_sequence(rt.tensor(x), lengths, True, enforce_sorted=False))
    t_pad, t_len = torch_rnn_utils.pad_packed_sequence(t_out, batch_first=True, padding_value=-1.0)
    r_pad, r_len = rnn_utils.pad_packed_sequence(r_out, batch_first=True, padding_value=-1.0)
    assert_close(r_pad, t_pad, "float64", "padded output")
    np.testing.assert_array_equal(r_len.numpy(), t_len.numpy())


# ---- dropout between layers ----------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_dropout_is_identity_in_eval(mode):
    tm, rm = module_pair(mode, 3, 4, num_layers=3, dropout=0.5, bidirectional=True)
    tm.eval()
    rm.eval()
    rng = np.random.default_rng(4)
    tx, rx = leaf(rng, (5, 2, 3), "float64")
    check_run(tm, rm, tx, rx, None, None, [(tx, rx)], "float64", f"{mode} eval with dropout")


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_dropout_one_in_training_zeroes_the_next_layers_input(mode):
    # p = 1 is deterministic: layer 2 sees zeros, in PyTorch as here.
    tm, rm = module_pair(mode, 3, 4, num_layers=2, dropout=1.0)
    rng = np.random.default_rng(5)
    tx, rx = leaf(rng, (4, 2, 3), "float64")
    check_run(tm, rm, tx, rx, None, None, [(tx, rx)], "float64", f"{mode} training with dropout=1")


def test_dropout_in_training_is_random_and_only_between_layers():
    rt.manual_seed(0)
    lstm = rt.nn.LSTM(3, 8, num_layers=2, dropout=0.5).double()
    x = rt.randn(6, 2, 3, dtype=rt.float64)
    lstm.eval()
    reference, _ = lstm(x)
    lstm.train()
    first, _ = lstm(x)
    second, _ = lstm(x)
    assert not np.allclose(first.detach().numpy(), reference.detach().numpy())
    assert not np.allclose(first.detach().numpy(), second.detach().numpy())
    single = rt.nn.GRU(3, 8, num_layers=1).double()  # no layer after the first: nothing to drop
    single.train()
    a, _ = single(x)
    single.eval()
    b, _ = single(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_dropout_with_one_layer_warns_like_torch():
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        rt.nn.LSTM(3, 4, dropout=0.2)


# ---- cells ----------------------------------------------------------------------------------------
CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}), ("GRUCell", {})]


@pytest.mark.parametrize("name,kw", CELLS)
@pytest.mark.parametrize("bias,with_hx,unbatched", [(True, True, False), (False, True, False), (True, False, False),
                                                    (True, True, True), (False, False, True)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cell_parity_over_three_steps(name, kw, bias, with_hx, unbatched, dtype):
    tdtype, rdtype = DTYPES[dtype]
    torch.manual_seed(0)
    tc = getattr(torch.nn, name)(4, 5, bias=bias, **kw).to(tdtype)
    rc = getattr(rt.nn, name)(4, 5, bias=bias, **kw).to(rdtype)
    rc.load_state_dict({k: rt.tensor(v.detach().numpy()) for k, v in tc.state_dict().items()})
    rng = np.random.default_rng(6)
    lead = () if unbatched else (3,)
    xs = [leaf(rng, lead + (4,), dtype) for _ in range(3)]
    leaves = list(xs)
    t_h = r_h = None
    if with_hx:
        h = leaf(rng, lead + (5,), dtype)
        leaves.append(h)
        t_h, r_h = h
        if name == "LSTMCell":
            c = leaf(rng, lead + (5,), dtype)
            leaves.append(c)
            t_h, r_h = (t_h, c[0]), (r_h, c[1])
    t_outs, r_outs = [], []
    for tx, rx in xs:
        t_h = tc(tx, t_h)
        r_h = rc(rx, r_h)
        t_outs += states_of(t_h)
        r_outs += states_of(r_h)
    for i, (r, t) in enumerate(zip(r_outs, t_outs)):
        assert_close(r, t, dtype, f"{name} output {i}")
    weights = [np.random.default_rng(7 + i).standard_normal(tuple(t.shape)) for i, t in enumerate(t_outs)]
    loss_of(torch, t_outs, weights).backward()
    loss_of(rt, r_outs, weights).backward()
    for i, (t, r) in enumerate(leaves):
        assert_close(r.grad, t.grad, dtype, f"{name}: grad of leaf {i}")
    r_params = dict(rc.named_parameters())
    assert list(r_params) == [n for n, _ in tc.named_parameters()]
    for n, p in tc.named_parameters():
        assert_close(r_params[n].grad, p.grad, dtype, f"{name}: grad of {n}")


# ---- parameters, init, repr, state_dict ------------------------------------------------------------
CONFIGS = [("RNN", dict(num_layers=2, nonlinearity="relu", bias=False)),
           ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=3)),
           ("LSTM", dict(batch_first=True, dropout=0.0)),
           ("GRU", dict(num_layers=3, bidirectional=True, batch_first=True, dropout=0.25))]


@pytest.mark.parametrize("name,kw", CONFIGS)
def test_parameter_names_shapes_repr_and_init_match_torch(name, kw):
    tm = getattr(torch.nn, name)(7, 6, **kw)
    rm = getattr(rt.nn, name)(7, 6, **kw)
    assert [(n, tuple(p.shape)) for n, p in rm.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert repr(rm) == repr(tm)
    assert [[getattr(tm, n) is not None for n in names] for names in tm._all_weights] == \
           [[p is not None for p in ws] for ws in rm.all_weights]
    assert rm._flat_weights_names == tm._flat_weights_names
    bound = 1 / np.sqrt(6)
    for n, p in rm.named_parameters():
        values = p.detach().numpy()
        assert np.all(np.abs(values) <= bound), n
        assert values.std() > bound / 4, f"{n} does not look uniform in +-1/sqrt(hidden_size)"


@pytest.mark.parametrize("name,kw", [("RNNCell", dict(nonlinearity="relu")), ("LSTMCell", {}),
                                     ("GRUCell", dict(bias=False))])
def test_cell_parameters_repr_and_init_match_torch(name, kw):
    tc = getattr(torch.nn, name)(7, 6, **kw)
    rc = getattr(rt.nn, name)(7, 6, **kw)
    assert [(n, tuple(p.shape)) for n, p in rc.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in tc.named_parameters()]
    assert repr(rc) == repr(tc)
    for n, p in rc.named_parameters():
        assert np.all(np.abs(p.detach().numpy()) <= 1 / np.sqrt(6)), n


def test_our_state_dict_loads_in_torch_and_gives_the_same_outputs():
    rt.manual_seed(3)
    rm = rt.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2).double()
    tm = torch.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2).double()
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in rm.state_dict().items()})
    x = np.random.default_rng(8).standard_normal((4, 2, 3))
    r_out, (r_h, r_c) = rm(rt.tensor(x))
    t_out, (t_h, t_c) = tm(torch.tensor(x))
    assert_close(r_out, t_out, "float64", "output")
    assert_close(r_c, t_c, "float64", "c_n")


def test_flatten_parameters_keeps_parameters_and_results():
    lstm = rt.nn.LSTM(3, 4, 2).double()
    x = rt.randn(5, 2, 3, dtype=rt.float64)
    before, _ = lstm(x)
    params = [p for p in lstm.parameters()]
    assert lstm.flatten_parameters() is None
    assert all(a is b for a, b in zip(params, lstm.parameters()))
    after, _ = lstm(x)
    np.testing.assert_array_equal(before.detach().numpy(), after.detach().numpy())
    assert "in place" in lstm.flatten_parameters.__doc__


def test_sgd_trajectory_matches_torch():
    """A small sequence classifier: LSTM + Linear, five SGD steps, float64."""
    torch.manual_seed(0)
    t_lstm, t_fc = torch.nn.LSTM(3, 6, 2, batch_first=True).double(), torch.nn.Linear(6, 2).double()
    r_lstm, r_fc = rt.nn.LSTM(3, 6, 2, batch_first=True).double(), rt.nn.Linear(6, 2).double()
    for t_mod, r_mod in ((t_lstm, r_lstm), (t_fc, r_fc)):
        r_mod.load_state_dict({k: rt.tensor(v.detach().numpy()) for k, v in t_mod.state_dict().items()})
    t_params = list(t_lstm.parameters()) + list(t_fc.parameters())
    r_params = list(r_lstm.parameters()) + list(r_fc.parameters())
    t_opt, r_opt = torch.optim.SGD(t_params, lr=0.5, momentum=0.9), rt.optim.SGD(r_params, lr=0.5, momentum=0.9)
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal((4, 7, 3)), rng.integers(0, 2, 4)
    for _ in range(5):
        for lib, lstm, fc, opt in ((torch, t_lstm, t_fc, t_opt), (rt, r_lstm, r_fc, r_opt)):
            opt.zero_grad()
            out, (h, _) = lstm(lib.tensor(x))
            loss = lib.nn.functional.cross_entropy(fc(h[-1]), lib.tensor(y))
            loss.backward()
            opt.step()
    for r, t in zip(r_params, t_params):
        assert_close(r, t, "float64", "parameters after 5 steps")


# ---- rt.nn.utils.rnn --------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first,enforce_sorted", list(itertools.product([False, True], [True, False])))
def test_pack_padded_sequence_matches_torch(batch_first, enforce_sorted):
    lengths = [5, 3, 2, 1] if enforce_sorted else [2, 5, 1, 3]
    rng = np.random.default_rng(10)
    shape = (4, 5, 3, 2) if batch_first else (5, 4, 3, 2)
    tx, rx = leaf(rng, shape, "float64")
    tp = torch_rnn_utils.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted)
    rp = rnn_utils.pack_padded_sequence(rx, lengths, batch_first, enforce_sorted)
    assert isinstance(rp, tuple) and rp._fields == tp._fields
    assert_close(rp.data, tp.data, "float64", "data")
    assert rp.batch_sizes.dtype == rt.int64
    np.testing.assert_array_equal(rp.batch_sizes.numpy(), tp.batch_sizes.numpy())
    for r, t in ((rp.sorted_indices, tp.sorted_indices), (rp.unsorted_indices, tp.unsorted_indices)):
        assert (r is None) == (t is None)
        if t is not None:
            np.testing.assert_array_equal(r.numpy(), t.numpy())
    w = rng.standard_normal(tuple(tp.data.shape))
    (tp.data * torch.tensor(w)).sum().backward()
    (rp.data * rt.tensor(w)).sum().backward()
    assert_close(rx.grad, tx.grad, "float64", "grad through packing")


@pytest.mark.parametrize("batch_first,padding_value,total_length", [(False, 0.0, None), (True, -2.5, None),
                                                                    (False, 1.0, 7), (True, 0.0, 6)])
def test_pad_packed_sequence_matches_torch(batch_first, padding_value, total_length):
    rng = np.random.default_rng(11)
    lengths = [3, 6, 1, 4]
    tx, rx = leaf(rng, (6, 4, 2), "float64")
    tp = torch_rnn_utils.pack_padded_sequence(tx, lengths, enforce_sorted=False)
    rp = rnn_utils.pack_padded_sequence(rx, lengths, enforce_sorted=False)
    t_pad, t_len = torch_rnn_utils.pad_packed_sequence(tp, batch_first, padding_value, total_length)
    r_pad, r_len = rnn_utils.pad_packed_sequence(rp, batch_first, padding_value, total_length)
    assert_close(r_pad, t_pad, "float64", "padded")
    assert r_len.dtype == rt.int64
    np.testing.assert_array_equal(r_len.numpy(), t_len.numpy())
    w = rng.standard_normal(tuple(t_pad.shape))
    (t_pad * torch.tensor(w)).sum().backward()
    (r_pad * rt.tensor(w)).sum().backward()
    assert_close(rx.grad, tx.grad, "float64", "grad through pack and pad")


@pytest.mark.parametrize("batch_first,padding_value", [(False, 0.0), (True, 3.0)])
def test_pad_sequence_and_pack_sequence_match_torch(batch_first, padding_value):
    rng = np.random.default_rng(12)
    pairs = [leaf(rng, (n, 2, 3), "float64") for n in (2, 5, 3)]
    t_pad = torch_rnn_utils.pad_sequence([t for t, _ in pairs], batch_first, padding_value)
    r_pad = rnn_utils.pad_sequence([r for _, r in pairs], batch_first, padding_value)
    assert_close(r_pad, t_pad, "float64", "pad_sequence")
    w = rng.standard_normal(tuple(t_pad.shape))
    (t_pad * torch.tensor(w)).sum().backward()
    (r_pad * rt.tensor(w)).sum().backward()
    for t, r in pairs:
        assert_close(r.grad, t.grad, "float64", "grad through pad_sequence")
    tp = torch_rnn_utils.pack_sequence([t for t, _ in pairs], enforce_sorted=False)
    rp = rnn_utils.pack_sequence([r for _, r in pairs], enforce_sorted=False)
    assert_close(rp.data, tp.data, "float64", "pack_sequence")
    np.testing.assert_array_equal(rp.sorted_indices.numpy(), tp.sorted_indices.numpy())
    for r, t in zip(rnn_utils.unpack_sequence(rp), torch_rnn_utils.unpack_sequence(tp)):
        assert_close(r, t, "float64", "unpack_sequence")
    lengths = [2, 5, 3]
    for r, t in zip(rnn_utils.unpad_sequence(r_pad, lengths, batch_first),
                    torch_rnn_utils.unpad_sequence(t_pad, torch.tensor(lengths), batch_first)):
        assert_close(r, t, "float64", "unpad_sequence")


def test_pad_sequence_accepts_a_tensor_and_packed_sequence_converts():
    x = rt.randn(3, 4, 2)
    np.testing.assert_array_equal(rnn_utils.pad_sequence(x).numpy(),
                                  torch_rnn_utils.pad_sequence(torch.tensor(x.numpy())).numpy())
    packed = rnn_utils.pack_sequence([rt.randn(3, 2), rt.randn(1, 2)])
    doubled = packed.double()
    assert isinstance(doubled, rnn_utils.PackedSequence) and doubled.data.dtype == rt.float64
    assert doubled.batch_sizes is packed.batch_sizes
    assert packed.to(rt.float32) is packed
    assert not packed.is_cuda
    perm = rt.tensor([2, 0, 3, 1])
    np.testing.assert_array_equal(rnn_utils.invert_permutation(perm).numpy(),
                                  torch_rnn_utils.invert_permutation(torch.tensor([2, 0, 3, 1])).numpy())
    assert rnn_utils.invert_permutation(None) is None
    shuffled = rnn_utils.PackedSequence(packed.data, packed.batch_sizes, rt.tensor([1, 0]))
    np.testing.assert_array_equal(shuffled.unsorted_indices.numpy(), [1, 0])


# ---- errors ------------------------------------------------------------------------------------------
ERRORS = [
    ("input size", lambda: rt.nn.LSTM(4, 5)(rt.randn(3, 2, 6)), RuntimeError, "Expected 4, got 6"),
    ("input dims", lambda: rt.nn.GRU(4, 5)(rt.randn(3, 2, 4, 1)), ValueError, "2-D or 3-D but received 4-D"),
    ("h0 shape", lambda: rt.nn.GRU(4, 5, 2)(rt.randn(3, 2, 4), rt.zeros(1, 2, 5)), RuntimeError,
     "expected h_0 of size [2, 2, 5], got [1, 2, 5]"),
    ("c0 shape", lambda: rt.nn.LSTM(4, 5)(rt.randn(3, 2, 4), (rt.zeros(1, 2, 5), rt.zeros(1, 2, 4))),
     RuntimeError, "expected c_0 of size [1, 2, 5], got [1, 2, 4]"),
    ("proj h0 shape", lambda: rt.nn.LSTM(4, 5, proj_size=2)(rt.randn(3, 2, 4), (rt.zeros(1, 2, 5),
                                                                              rt.zeros(1, 2, 5))),
     RuntimeError, "proj_size"),
    ("h0 dims batched", lambda: rt.nn.RNN(4, 5)(rt.randn(3, 2, 4), rt.zeros(1, 5)), RuntimeError,
     "batched 3-D input, h_0 should also be 3-D"),
    ("h0 dims unbatched", lambda: rt.nn.RNN(4, 5)(rt.randn(3, 4), rt.zeros(1, 1, 5)), RuntimeError,
     "unbatched 2-D input, h_0 should also be 2-D"),
    ("lstm hx not a tuple", lambda: rt.nn.LSTM(4, 5)(rt.randn(3, 2, 4), rt.zeros(1, 2, 5)), TypeError,
     "(h_0, c_0)"),
    ("dtype", lambda: rt.nn.GRU(4, 5)(rt.randn(3, 2, 4, dtype=rt.float64)), RuntimeError,
     "must have the type rustytorch.float32"),
    ("proj too large", lambda: rt.nn.LSTM(4, 5, proj_size=5), ValueError, "proj_size has to be smaller"),
    ("proj negative", lambda: rt.nn.LSTM(4, 5, proj_size=-1), ValueError, "positive integer or zero"),
    ("proj on GRU", lambda: rt.nn.GRU(4, 5, proj_size=2), ValueError, "only supported for LSTM"),
    ("proj on RNN", lambda: rt.nn.RNN(4, 5, proj_size=2), ValueError, "only supported for LSTM"),
    ("nonlinearity", lambda: rt.nn.RNN(4, 5, nonlinearity="sigmoid"), ValueError, "Unknown nonlinearity"),
    ("dropout range", lambda: rt.nn.LSTM(4, 5, 2, dropout=1.5), ValueError, "range [0, 1]"),
    ("hidden size", lambda: rt.nn.LSTM(4, 0), ValueError, "hidden_size must be greater than zero"),
    ("num layers", lambda: rt.nn.GRU(4, 3, num_layers=0), ValueError, "num_layers must be greater than zero"),
    ("hidden type", lambda: rt.nn.GRU(4, 3.5), TypeError, "hidden_size should be of type int"),
    ("mode", lambda: rt.nn.RNNBase("PEEPHOLE", 4, 5), ValueError, "Unrecognized RNN mode"),
    ("no time steps", lambda: rt.nn.GRU(4, 5)(rt.randn(0, 2, 4)), ValueError, "no time steps"),
    ("cell input size", lambda: rt.nn.LSTMCell(4, 5)(rt.randn(2, 3)), RuntimeError,
     "got 3 expected 4"),
    ("cell input dims", lambda: rt.nn.GRUCell(4, 5)(rt.randn(2, 3, 4)), ValueError, "1-D or 2-D"),
    ("cell batch", lambda: rt.nn.GRUCell(4, 5)(rt.randn(2, 4), rt.zeros(3, 5)), RuntimeError,
     "Input batch size 2 doesn't match hx batch size 3"),
    ("cell hidden", lambda: rt.nn.RNNCell(4, 5)(rt.randn(2, 4), rt.zeros(2, 6)), RuntimeError,
     "inconsistent hidden_size: got 6, expected 5"),
    ("cell hx dims", lambda: rt.nn.RNNCell(4, 5)(rt.randn(4), rt.zeros(2, 5)), RuntimeError, "must be 1-D"),
    ("cell nonlinearity", lambda: rt.nn.RNNCell(4, 5, nonlinearity="gelu"), ValueError, "Unknown nonlinearity"),
    ("unsorted lengths", lambda: rnn_utils.pack_padded_sequence(rt.randn(4, 2, 1), [2, 4]), RuntimeError,
     "enforce_sorted=False"),
    ("zero length", lambda: rnn_utils.pack_padded_sequence(rt.randn(4, 2, 1), [4, 0]), RuntimeError,
     "greater than 0"),
    ("length too long", lambda: rnn_utils.pack_padded_sequence(rt.randn(4, 2, 1), [5, 1]), ValueError,
     "only 4 time steps"),
    ("lengths count", lambda: rnn_utils.pack_padded_sequence(rt.randn(4, 2, 1), [4, 2, 1]), ValueError,
     "got 3 (batch_size=2)"),
    ("total_length", lambda: rnn_utils.pad_packed_sequence(rnn_utils.pack_sequence([rt.randn(3, 1)]),
                                                            total_length=2), ValueError,
     "total_length=2 and max sequence length being 3"),
    ("pad trailing", lambda: rnn_utils.pad_sequence([rt.randn(2, 3), rt.randn(2, 4)]), RuntimeError,
     "sequence 1 has shape [2, 4]"),
    ("pad empty", lambda: rnn_utils.pad_sequence([]), RuntimeError, "empty list"),
    ("packed no sizes", lambda: rnn_utils.PackedSequence(rt.randn(3, 2)), TypeError, "batch_sizes is required"),
]


@pytest.mark.parametrize("name,fn,exc,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_the_problem(name, fn, exc, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc) as info:
            fn()
    assert message in str(info.value)


def test_lstm_bench_runs():
    """bench/lstm_bench.py (interleaved timing against PyTorch) still runs; a smoke run, no timing checks."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "lstm_bench.py"), "--quick", "--seq", "4",
                          "--hidden", "8"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ratio rustytorch/torch" in out.stdout
