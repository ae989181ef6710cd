"""rt.debug: the backward debugger from Python (headless handler, blocking mode driven by a
second thread, NaN breakpoints, stop), gradient statistics and graph snapshots."""
import math
import threading

import pytest

import rustytorch as rt
from rustytorch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def make(dbg=None):
    rt.manual_seed(0)
    net = Net()
    x = rt.randn(5, 4)
    if dbg is None:
        return net, net(x).pow(2).sum()
    with dbg:  # nodes record their op and module only while observed
        loss = net(x).pow(2).sum()
    return net, loss


def grads(net):
    return [p.grad.clone() for p in net.parameters()]


class Recorder:
    def __init__(self, action="step"):
        self.states = []
        self.action = action

    def __call__(self, state):
        self.states.append(state)
        return self.action


def test_on_break_headless_steps_every_node_in_backward_order():
    dbg = rt.debug.Debugger(pause_at_start=True)
    net, loss = make(dbg)
    rec = dbg.on_break(Recorder("step"))
    snapshot = rt.debug.graph(loss)
    with dbg:
        loss.backward()
    ids = [s.node.id for s in rec.states]
    assert ids == dbg.execution_order
    assert [s.index for s in rec.states] == list(range(len(ids)))
    assert sorted(ids) == sorted(n.id for n in snapshot.nodes)
    # Without leaves, the order is the snapshot's (descending sequence numbers).
    inner = [s.node.id for s in rec.states if not s.node.is_leaf]
    assert inner == [n.id for n in snapshot.nodes if not n.is_leaf]
    assert rec.states[0].reason == "start"
    assert all(s.reason == "step" and s.phase == "before" for s in rec.states[1:])
    first = rec.states[0]
    assert first.node.name == "SumBackward0"
    assert first.grad_outputs[0].shape == rt.Size([])
    assert "SumBackward0" in str(first) and "grad_outputs[0]" in str(first)
    assert repr(first).startswith("PausedState(node=")
    assert dbg.backward_count == 1
    assert not dbg.running


def test_handler_sees_modules_ops_and_gradient_stats():
    dbg = rt.debug.Debugger()
    bp = dbg.break_on_module("fc2")
    net, loss = make(dbg)
    rec = dbg.on_break(Recorder(None))  # None means continue
    with dbg:
        loss.backward()
    names = [(s.node.name, s.node.module) for s in rec.states]
    assert names == [("AddmmBackward0", "fc2"), ("AccumulateGrad", "fc2"), ("AccumulateGrad", "fc2")]
    assert rec.states[0].node.forward_op == "linear"
    assert rec.states[0].breakpoints == [bp]
    g = rec.states[1].grad_outputs[0]  # fc2.weight's or fc2.bias's gradient
    assert g.dtype == rt.float32 and g.nan_count == 0 and g.inf_count == 0
    assert sum(g.histogram.counts) == g.finite_count == g.numel
    assert len(g.histogram.edges) == len(g.histogram.counts) + 1
    ref = next(p.grad for p in (net.fc2.weight, net.fc2.bias) if rt.Size(p.shape) == g.shape)
    assert g.norm == pytest.approx(ref.double().norm().item(), rel=1e-6)
    assert g.min == pytest.approx(ref.min().item()) and g.max == pytest.approx(ref.max().item())
    assert dbg.breakpoints[0].hits == 3


def test_nan_breakpoint_stops_where_the_nan_appears():
    dbg = rt.debug.Debugger()
    dbg.break_on_nan()
    w = rt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with dbg:
        y = rt.log(rt.tensor([1.0, -1.0, 2.0]))  # NaN
        prod = w * y
        loss = prod.sum()
        rec = dbg.on_break(Recorder("continue"))
        loss.backward()
    assert len(rec.states) == 1
    s = rec.states[0]
    assert s.node.name == "MulBackward0" and s.node.id == rt.debug.graph(prod).nodes[0].id
    assert s.phase == "after" and s.reason == "breakpoint"
    assert s.grad_inputs[0].nan_count == 1
    assert "NaN" in s.description
    assert math.isnan(w.grad[1].item())


def test_stop_raises_a_clear_runtime_error_and_a_later_backward_works():
    net, loss = make()
    loss.backward()
    reference = grads(net)

    dbg = rt.debug.Debugger()
    net, loss = make(dbg)
    dbg.break_on_op("linear")
    dbg.on_break(lambda state: "stop")
    with dbg:
        with pytest.raises(RuntimeError, match="backward stopped by the debugger") as info:
            loss.backward()
    assert isinstance(info.value, rt.debug.BackwardStopped)
    assert "AddmmBackward0" in str(info.value)
    assert not dbg.running
    net.zero_grad()
    loss.backward()  # the graph was kept
    for got, want in zip(grads(net), reference):
        assert rt.equal(got, want)


def test_unknown_action_names_the_valid_ones():
    dbg = rt.debug.Debugger(pause_at_start=True)
    dbg.on_break(lambda state: "jump")
    w = rt.ones(3, requires_grad=True)
    with dbg:
        with pytest.raises(ValueError, match="'jump'.*'step', 'step_over', 'continue' or 'stop'"):
            (w * 2).sum().backward()
    with pytest.raises(TypeError, match="callable"):
        dbg.on_break(3)


def test_errors_from_the_handler_reach_the_caller():
    dbg = rt.debug.Debugger(pause_at_start=True)

    def handler(state):
        raise KeyError("from the handler")

    dbg.on_break(handler)
    w = rt.ones(3, requires_grad=True)
    with dbg:
        with pytest.raises(KeyError, match="from the handler"):
            (w * 2).sum().backward()


def test_blocking_mode_driven_from_another_thread_gives_the_same_gradients():
    net, loss = make()
    loss.backward()
    reference = grads(net)

    dbg = rt.debug.Debugger(pause_at_start=True)
    net, loss = make(dbg)
    dbg.attach()
    errors = []

    def run():
        try:
            loss.backward()
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    seen = []
    while True:
        state = dbg.wait_for_pause(timeout=60)
        if state is None:
            break
        assert dbg.state is not None and dbg.state.node.id == state.node.id
        seen.append(state.node.id)
        if state.node.module == "fc2":
            stepped_over = state.node.id
            dbg.step_over()  # skips fc2's AccumulateGrad nodes
        else:
            dbg.step()
    worker.join()
    dbg.detach()
    assert not errors
    order = dbg.execution_order
    skipped = [i for i in order if i not in seen]
    at = order.index(stepped_over)
    assert len(skipped) == 2 and skipped == order[at + 1:at + 3]
    for got, want in zip(grads(net), reference):
        assert rt.equal(got, want)


def test_run_to_and_breakpoint_management():
    dbg = rt.debug.Debugger(pause_at_start=True)
    net, loss = make(dbg)
    target = rt.debug.graph(loss).nodes[2]
    calls = []

    @dbg.on_break
    def handle(state):
        calls.append(state)
        return rt.debug.Action.run_to(sequence_nr=target.sequence_nr) if len(calls) == 1 else "continue"

    with dbg:
        loss.backward(retain_graph=True)
    assert [c.reason for c in calls] == ["start", "run_to"]
    assert calls[1].node.id == target.id
    assert repr(rt.debug.Action.run_to(sequence_nr=3)) == "Action.run_to(sequence_nr=3)"
    with pytest.raises(ValueError, match="exactly one"):
        rt.debug.Action.run_to()

    bp = dbg.break_on_grad_norm(1e9)
    dbg.disable(bp)
    assert not dbg.breakpoints[0].enabled
    assert "grad_norm" in repr(dbg.breakpoints[0])
    dbg.remove(bp)
    with pytest.raises(IndexError, match="no breakpoint with id"):
        dbg.remove(bp)
    with pytest.raises(ValueError):
        dbg.break_on_op("")


def test_graph_structure():
    dbg = rt.debug.Debugger()
    net, loss = make(dbg)
    g = rt.debug.graph(loss)
    assert [n.name for n in g.nodes] == ["SumBackward0", "PowBackward0", "AddmmBackward0", "ReluBackward0",
                                         "AddmmBackward0"] + ["AccumulateGrad"] * 4
    assert [n.module for n in g.nodes[:5]] == ["", "", "fc2", "act", "fc1"]
    assert [n.leaf_shape for n in g.nodes[5:]] == [rt.Size([2, 6]), rt.Size([2]), rt.Size([6, 4]), rt.Size([6])]
    assert g.nodes[2].output_shapes == [rt.Size([5, 2])]
    ids = {n.id: i for i, n in enumerate(g.nodes)}
    assert sorted((ids[e.from_], ids[e.to], e.input_nr) for e in g.edges) == [
        (0, 1, 0), (1, 2, 0), (2, 3, 0), (2, 5, 0), (2, 6, 0), (3, 4, 0), (4, 7, 0), (4, 8, 0)]
    assert rt.debug.graph([loss, loss]).nodes[0].id == g.nodes[0].id
    assert repr(g) == "GraphSnapshot(nodes=9, edges=8)"
    del loss, net
    assert g.nodes[0].name == "SumBackward0"


def test_gradient_stats_and_grad_norm_history():
    t = rt.tensor([1.0, float("nan"), -2.0, float("inf"), 3.0])
    s = rt.debug.gradient_stats(t, bins=4)
    assert (s.nan_count, s.inf_count, s.finite_count) == (1, 1, 3)
    assert (s.min, s.max) == (-2.0, 3.0) and s.mean == pytest.approx(2 / 3)
    assert math.isnan(s.norm)
    assert s.histogram.counts == [1, 0, 1, 1]
    assert "nan_count=1" in repr(s)

    history = rt.debug.GradNormHistory(exploding_above=10.0)
    w = rt.ones(4, requires_grad=True)
    for scale in (1.0, 1.0, 1.0, 100.0):
        w.grad = rt.full((4,), scale)
        step = history.record([("w", w)])
    assert step.exploding == ["w"]
    assert history.series("w") == [2.0, 2.0, 2.0, 200.0]
    assert len(history) == 4


def test_a_paused_backward_on_the_main_thread_ends_with_keyboard_interrupt():
    dbg = rt.debug.Debugger(pause_at_start=True)
    w = rt.ones(3, requires_grad=True)
    loss = (w * 3).sum()

    def interrupt():  # what Ctrl+C does while an engine call runs without the GIL
        if dbg.wait_for_pause(timeout=60) is not None:
            rt._C._request_cancel()

    helper = threading.Thread(target=interrupt)
    helper.start()
    with dbg:
        with pytest.raises(KeyboardInterrupt):
            loss.backward()
    helper.join()
    dbg.pause_at_start = False
    with dbg:
        loss.backward()
    assert w.grad.tolist() == [3.0, 3.0, 3.0]
