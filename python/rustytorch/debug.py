"""rustytorch.debug: pause the backward pass node by node and inspect every gradient.

    import rustytorch as rt
    dbg = rt.debug.Debugger()
    dbg.break_on_nan()                    # where a NaN/Inf first appears
    dbg.break_on_op("linear")             # forward op or node name ("AddmmBackward0")
    dbg.break_on_module("fc2")            # fc2 and everything inside it
    dbg.break_on_grad_norm(1e3)

    @dbg.on_break
    def handle(state):                    # on the backward thread; return what to do next
        print(state)                      # node, why it paused, every gradient's stats
        return "step"                     # "step_over", "continue" (or None), "stop"

    with dbg:                             # attached for the block: put the forward inside it too,
        loss = model(x).sum()             # so nodes carry their forward op and module
        loss.backward()

    rt.debug.graph(loss)                  # GraphSnapshot: .nodes, .edges (plain copies)

Without a handler the backward blocks at each pause until another thread calls step(),
step_over(), continue_(), run_to(...) or stop() (the studio's debugger panel does this);
wait_for_pause() helps a controlling thread. stop() makes backward() raise
rt.debug.BackwardStopped, a RuntimeError; the graph is kept, so after zero_grad() the same
backward can run again. The C++ contracts are in engine/include/rt/debug/backward_debugger.h.
"""
from ._C import _debug as _ext

Action = _ext.Action
BackwardStopped = _ext.BackwardStopped
Breakpoint = _ext.Breakpoint
GradientStats = _ext.GradientStats
GradNormHistory = _ext.GradNormHistory
GraphSnapshot = _ext.GraphSnapshot
Histogram = _ext.Histogram
NodeInfo = _ext.NodeInfo
PausedState = _ext.PausedState
gradient_stats = _ext.gradient_stats

for _cls in (Action, BackwardStopped, Breakpoint, GradientStats, GradNormHistory, GraphSnapshot, Histogram,
             NodeInfo, PausedState, _ext.GraphNode, _ext.GraphEdge, _ext.GradNormStep, _ext.ParameterGradNorm):
    _cls.__module__ = __name__
del _cls

__all__ = ["Action", "BackwardStopped", "Breakpoint", "Debugger", "GradNormHistory", "GradientStats",
           "GraphSnapshot", "Histogram", "NodeInfo", "PausedState", "graph", "gradient_stats"]


def graph(tensors):
    """The backward graph behind `tensors` (a Tensor or a sequence of them) as plain data.

    nodes: GraphNode (id, name, sequence_nr, forward_op, module, output_shapes, is_leaf,
    leaf_shape) in the order backward runs them, AccumulateGrad leaves last; edges: GraphEdge
    (from_, to, input_nr, shape). Ids are stable while the graph lives; the snapshot stays valid
    after it is freed.
    """
    return _ext.snapshot_graph(tensors)


class Debugger:
    """A step-through debugger for the backward pass (see the module docstring)."""

    def __init__(self, pause_at_start=False):
        self._dbg = _ext.BackwardDebugger()
        self._handler = None
        self._pause_at_start = False
        self.pause_at_start = pause_at_start

    # ---- attaching ----------------------------------------------------------------------
    def attach(self):
        """Start observing ops and backward passes (attach before the forward, see module doc)."""
        self._dbg.attach()
        return self

    def detach(self):
        """Stop observing; a backward running under the debugger finishes without pausing."""
        self._dbg.detach()

    @property
    def attached(self):
        return self._dbg.attached

    def __enter__(self):
        return self.attach()

    def __exit__(self, *exc):
        self.detach()
        return False

    # ---- breakpoints --------------------------------------------------------------------
    def break_on_nan(self):
        """Pause where a NaN or Inf first appears in a gradient. Returns the breakpoint id."""
        return self._dbg.break_on_non_finite()

    break_on_inf = break_on_nan

    def break_on_op(self, name):
        """Pause before nodes whose forward op or node name is `name` ("linear", "AddmmBackward0")."""
        return self._dbg.break_on_op(name)

    def break_on_module(self, prefix):
        """Pause before nodes of module `prefix` or inside it ("encoder" matches "encoder.layer0.fc1")."""
        return self._dbg.break_on_module(prefix)

    def break_on_grad_norm(self, threshold):
        """Pause where a gradient's L2 norm exceeds `threshold`."""
        return self._dbg.break_on_grad_norm(float(threshold))

    def enable(self, breakpoint_id):
        self._dbg.set_breakpoint_enabled(breakpoint_id, True)

    def disable(self, breakpoint_id):
        self._dbg.set_breakpoint_enabled(breakpoint_id, False)

    def remove(self, breakpoint_id):
        self._dbg.remove_breakpoint(breakpoint_id)

    def clear(self):
        self._dbg.clear_breakpoints()

    @property
    def breakpoints(self):
        return self._dbg.breakpoints

    @property
    def pause_at_start(self):
        """Pause before the first node of every backward."""
        return self._pause_at_start

    @pause_at_start.setter
    def pause_at_start(self, on):
        self._pause_at_start = bool(on)
        self._dbg.set_pause_at_start(self._pause_at_start)

    # ---- headless mode ------------------------------------------------------------------
    def on_break(self, handler):
        """Calls handler(state) at every pause instead of blocking; usable as a decorator.

        The handler returns "step", "step_over", "continue" (or None), "stop", or
        rt.debug.Action.run_to(sequence_nr=...) / (node_id=...). on_break(None) removes it.
        """
        self._dbg.on_break(handler)
        self._handler = handler
        return handler

    # ---- controls (any thread) ----------------------------------------------------------
    def step(self):
        """Run the current node and pause before the next. False when no backward runs."""
        return self._dbg.step()

    def step_over(self):
        """Pause at the next node outside the current node's module."""
        return self._dbg.step_over()

    def continue_(self):
        """Run to the next breakpoint (or the end)."""
        return self._dbg.resume()

    resume = continue_

    def run_to(self, *, sequence_nr=None, node_id=None):
        """Pause before the node with this sequence number or graph id."""
        return self._dbg.run_to(sequence_nr=sequence_nr, node_id=node_id)

    def stop(self):
        """Abort the backward: backward() raises rt.debug.BackwardStopped."""
        return self._dbg.stop()

    def pause(self):
        """Pause before the next node."""
        return self._dbg.pause()

    # ---- state --------------------------------------------------------------------------
    @property
    def state(self):
        """The PausedState while paused (blocking mode), else None."""
        return self._dbg.paused_state

    @property
    def running(self):
        return self._dbg.running

    def wait_for_pause(self, timeout=None):
        """Blocks (without the GIL) until paused; returns the state, or None when the backward
        ended or `timeout` seconds passed."""
        return self._dbg.wait_for_pause(timeout)

    @property
    def execution_order(self):
        """Graph ids of the nodes reached in the current or last backward."""
        return self._dbg.execution_order

    @property
    def backward_count(self):
        return self._dbg.backward_count

    def __repr__(self):
        bps = ", ".join(str(b) for b in self.breakpoints) or "no breakpoints"
        mode = "handler" if self._handler is not None else "blocking"
        status = "attached" if self.attached else "detached"
        return f"Debugger({status}, {mode}, {bps})"
