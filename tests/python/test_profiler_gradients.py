"""Gradient histograms in rt.profiler: profile(record_gradients=model) records one histogram per parameter
per backward at the profile's step, rt.profiler.record_gradients(model) one per call; the numbers match numpy
(norm, range, NaN/Inf counts, torch.histc-style bins); NaN gradients are counted; schedules number the steps
globally; hooks leave with the profile; the store and the Chrome trace keep the records; errors are clear."""
import json
import math
import sqlite3

import numpy as np
import pytest

import rustytorch as rt
import rustytorch.nn  # noqa: F401
import rustytorch.optim  # noqa: F401
import rustytorch.profiler as profiler
from rustytorch.profiler import ProfilerAction, profile, schedule


def make_model():
    rt.manual_seed(0)
    return rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.ReLU(), rt.nn.Linear(8, 3))


PARAMS = ["0.weight", "0.bias", "2.weight", "2.bias"]


def expected(grad, bins):
    """norm, lo, hi, nan, inf and torch.histc-style counts over the finite values, in float64."""
    g = np.asarray(grad, dtype=np.float64).ravel()
    nan, inf = int(np.isnan(g).sum()), int(np.isinf(g).sum())
    finite = g[np.isfinite(g)]
    norm = math.nan if nan else math.inf if inf else float(np.sqrt(np.sum(finite * finite)))
    if finite.size == 0:
        return norm, 0.0, 0.0, nan, inf, []
    lo, hi = float(finite.min()), float(finite.max())
    if hi > lo:
        idx = np.floor((finite - lo) / (hi - lo) * bins).astype(np.int64)
    else:
        idx = np.zeros(finite.size, dtype=np.int64)
    counts = np.bincount(np.clip(idx, 0, bins - 1), minlength=bins)
    return norm, lo, hi, nan, inf, counts.tolist()


def check_record(h, grad, bins=32):
    norm, lo, hi, nan, inf, counts = expected(grad, bins)
    assert h.numel == np.asarray(grad).size
    if math.isnan(norm):
        assert math.isnan(h.norm)
    else:
        assert h.norm == pytest.approx(norm, rel=1e-12)
    assert (h.lo, h.hi, h.nan_count, h.inf_count) == (lo, hi, nan, inf)
    assert h.counts == counts
    assert sum(h.counts) == h.numel - h.nan_count - h.inf_count


def train(model, steps, prof=None, record=None, x_fn=None):
    """SGD steps; returns each step's gradients as numpy copies {name: array}, taken after backward."""
    opt = rt.optim.SGD(model.parameters(), lr=0.1)
    grads = []
    for i in range(steps):
        x = x_fn(i) if x_fn else rt.randn(6, 4)
        loss = rt.nn.functional.mse_loss(model(x), rt.randn(6, 3))
        loss.backward()
        grads.append({n: p.grad.numpy().copy() for n, p in model.named_parameters()})
        if record is not None:
            record(model)
        opt.step()
        opt.zero_grad()
        if prof is not None:
            prof.step()
    return grads


def by_step_and_name(hs):
    return {(h.step, h.name): h for h in hs}


def test_profile_record_gradients_hooks_every_backward_at_its_step():
    model = make_model()
    with profile(record_gradients=model) as prof:
        grads = train(model, 3, prof)
    hs = prof.gradient_histograms()
    assert len(hs) == 3 * len(PARAMS)
    assert [h.time_ns for h in hs] == sorted(h.time_ns for h in hs)
    table = by_step_and_name(hs)
    assert set(table) == {(s, n) for s in range(3) for n in PARAMS}
    for s in range(3):
        for n in PARAMS:
            check_record(table[(s, n)], grads[s][n])
    assert all(len(h.counts) == 32 for h in hs)
    edges = hs[0].bin_edges()
    assert len(edges) == 33 and edges[0] == hs[0].lo and edges[-1] == hs[0].hi
    assert "GradientHistogram(step=" in repr(hs[0])


def test_record_gradients_one_shot_after_backward_with_bins():
    model = make_model()
    assert profiler.record_gradients(model) == 0  # no profile records: nothing, and no error
    with profile() as prof:
        grads = train(model, 3, prof, record=lambda m: profiler.record_gradients(m.named_parameters(), bins=7))
    hs = prof.gradient_histograms()
    assert len(hs) == 3 * len(PARAMS)
    table = by_step_and_name(hs)
    for s in range(3):
        for n in PARAMS:
            check_record(table[(s, n)], grads[s][n], bins=7)


def test_profile_method_records_and_refuses_when_not_recording():
    model = make_model()
    prof = profile(schedule=schedule(wait=1, warmup=0, active=1, repeat=1))
    with pytest.raises(RuntimeError, match="not recording"):
        prof.record_gradients(model)
    with prof:
        with pytest.raises(RuntimeError, match="not recording .*schedule is in NONE at step 0"):
            prof.record_gradients(model)  # the schedule does nothing at step 0 (wait)
        prof.step()
        loss = model(rt.randn(2, 4)).sum()
        loss.backward()
        assert prof.record_gradients({"w": model[0].weight}) == 1
        prof.step()
    hs = prof.gradient_histograms()
    assert [(h.step, h.name) for h in hs] == [(1, "w")]


def test_a_nan_gradient_is_counted():
    model = make_model()

    def x_fn(i):
        x = rt.randn(6, 4)
        if i == 1:
            x[2, 1] = float("nan")  # poisons column 1 of the first layer's weight gradient, and more
        return x

    with profile(record_gradients=model) as prof:
        grads = train(model, 3, prof, x_fn=x_fn)
    table = by_step_and_name(prof.gradient_histograms())
    poisoned = table[(1, "0.weight")]
    assert poisoned.nan_count == int(np.isnan(grads[1]["0.weight"]).sum()) > 0
    assert math.isnan(poisoned.norm)
    check_record(poisoned, grads[1]["0.weight"])
    assert table[(0, "0.weight")].nan_count == 0


def test_schedule_numbers_steps_globally_and_records_only_while_active():
    model = make_model()
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1), record_gradients=model) as prof:
        train(model, 5, prof)
    steps = sorted({h.step for h in prof.gradient_histograms()})
    assert steps == [2, 3]
    assert len(prof.gradient_histograms()) == 2 * len(PARAMS)


def test_hooks_leave_with_the_profile():
    model = make_model()
    with profile(record_gradients=model) as prof:
        train(model, 1, prof)
    with profile() as later:
        train(model, 2, later)
    assert later.gradient_histograms() == []
    assert later.session.gradient_histogram_count == 0


def test_store_and_chrome_trace_keep_the_histograms(tmp_path):
    store = tmp_path / "runs.sqlite"
    model = make_model()

    def x_fn(i):
        x = rt.randn(6, 4)
        if i == 1:
            x[0, 0] = float("nan")  # every gradient of step 1 is NaN: no finite value, no bins
        return x

    with profile(record_gradients=model, gradient_bins=16, store=store) as prof:
        train(model, 2, prof, x_fn=x_fn)
    con = sqlite3.connect(store)
    rows = con.execute("SELECT step, bins, nanCount, norm FROM GradientHistograms WHERE sessionId = ?",
                       (prof.session_id,)).fetchall()
    assert len(rows) == 2 * len(PARAMS)
    assert {r[0] for r in rows} == {0, 1}
    assert {r[1] for r in rows if r[0] == 0} == {16}
    assert any(r[2] > 0 and r[3] is None for r in rows if r[0] == 1)  # NaN norms are NULL in SQL
    total = con.execute("SELECT sum(value) FROM GradientHistograms, json_each(GradientHistograms.counts) "
                        "WHERE sessionId = ?", (prof.session_id,)).fetchone()[0]
    finite = con.execute("SELECT sum(numel - nanCount - infCount) FROM GradientHistograms WHERE sessionId = ?",
                         (prof.session_id,)).fetchone()[0]
    assert total == finite
    con.close()

    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    doc = json.loads(trace.read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    exported = doc["rtGradientHistograms"]
    assert len(exported) == 2 * len(PARAMS)
    assert {e["name"] for e in exported} == set(PARAMS)
    assert any(e["norm"] == "nan" for e in exported)


def test_bad_arguments_are_refused_with_the_fix():
    model = make_model()
    with pytest.raises(ValueError, match="bins must be an int from 1 to 4096"):
        profiler.record_gradients(model, bins=0)
    with pytest.raises(ValueError, match="bins must be an int from 1 to 4096"):
        profile(record_gradients=model, gradient_bins=10000)
    with pytest.raises(TypeError, match="expected an nn.Module"):
        profiler.record_gradients(42)
    with pytest.raises(TypeError, match="pairs"):
        profile(record_gradients=[model[0].weight])
    frozen = make_model()
    for p in frozen.parameters():
        p.requires_grad_(False)
    with pytest.raises(ValueError, match="no parameter requires a gradient"):
        profile(record_gradients=frozen)
    assert ProfilerAction.RECORD  # the schedule names stay importable beside the gradient API
