"""rt.profiler (torch.profiler's API): a recorded training step has every op with its nesting,
shapes and memory; key_averages counts calls exactly; the Chrome trace and memory timeline exports
load; record_function nests and guards its rules; schedules pick PyTorch's steps; errors are clear."""
import gzip
import json
import sqlite3
import threading
from xml.etree import ElementTree

import pytest

import rustytorch as rt
import rustytorch.nn  # noqa: F401
import rustytorch.optim  # noqa: F401
import rustytorch.profiler as profiler
from rustytorch.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def make_model():
    rt.manual_seed(0)
    return rt.nn.Sequential(rt.nn.Linear(8, 16), rt.nn.ReLU(), rt.nn.Linear(16, 4))


def train_steps(prof, model, opt, steps):
    for i in range(steps):
        x, y = rt.randn(5, 8), rt.randn(5, 4)
        with record_function("train_step"):
            with record_function("forward"):
                loss = rt.nn.functional.mse_loss(model(x), y)
            with record_function("backward"):
                loss.backward()
            with record_function("optimizer.step"):
                opt.step()
                opt.zero_grad()
        prof.add_counter("loss", loss)
        prof.step()


@pytest.fixture
def trained():
    model = make_model()
    opt = rt.optim.SGD(model.parameters(), lr=0.1)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
                 with_stack=True) as prof:
        train_steps(prof, model, opt, 3)
    return prof


def by_key(rows):
    return {r.key: r for r in rows}


# -- recording --------------------------------------------------------------------------------


def test_training_step_ops_counts_and_nesting(trained):
    rows = by_key(trained.key_averages())
    assert rows["train_step"].count == 3
    for name in ("forward", "backward", "optimizer.step"):
        assert rows[name].count == 3, name
    assert rows["linear"].count == 6  # two Linear layers x 3 steps
    assert rows["relu"].count == 3
    assert rows["mse_loss"].count == 3
    for r in rows.values():
        assert 0 <= r.self_cpu_time_total <= r.cpu_time_total + 1e-9, r.key
    assert any("Backward" in k for k in rows), sorted(rows)
    # The optimizer's own ranges, named as PyTorch names them, nest inside the user's range.
    assert rows["Optimizer.step#SGD.step"].count == 3
    assert rows["Optimizer.zero_grad#SGD.zero_grad"].count == 3

    events = trained.events()
    steps = [e for e in events if e.name == "train_step"]
    assert all(e.cpu_parent is None and e.depth == 0 for e in steps)
    for e in events:
        if e.name == "linear":
            chain = []
            p = e.cpu_parent
            while p is not None:
                chain.append(p.name)
                p = p.cpu_parent
            assert chain[-2:] == ["forward", "train_step"], chain
            assert e.depth == len(chain)
            assert e.start_ns >= e.cpu_parent.start_ns and e.end_ns <= e.cpu_parent.end_ns
    backward_nodes = [e for e in events if e.is_backward]
    linked = [e for e in backward_nodes if e.name != "AccumulateGrad"]  # leaves have no sequence number
    assert linked and all(e.sequence_nr >= 0 for e in linked)
    forward_seq = {e.sequence_nr for e in events if e.kind == "op" and e.sequence_nr >= 0}
    assert {e.sequence_nr for e in linked} <= forward_seq


def test_input_shapes_grouping(trained):
    rows = trained.key_averages(group_by_input_shape=True)
    linear = [r for r in rows if r.key == "linear"]
    shapes = sorted(r.input_shapes[0] for r in linear)
    assert shapes == [[5, 8], [5, 16]]
    assert sum(r.count for r in linear) == 6
    first = next(e for e in trained.events() if e.name == "linear")
    assert first.input_shapes[:2] == [[5, 8], [16, 8]]
    assert first.input_dtypes[0] == "float32"


def test_steps_and_counters(trained):
    data = trained.session
    assert [s[0] for s in data.steps()] == [0, 1, 2, 3]  # step 3 is the empty tail after the last step()
    losses = [c for c in data.counters() if c[1] == "loss"]
    assert len(losses) == 3 and all(v > 0 for _, _, v in losses)
    assert trained.step_num == 3


def test_memory_balances_and_categories():
    with profile(profile_memory=True) as prof:
        a = rt.randn(64, 64)
        b = (a * 2).relu()
        del a, b
    data = prof.session
    assert data.memory_count >= 4
    times, sizes, categories, peak, _ = data.memory_timeline(None)
    assert categories == ["parameter", "gradient", "activation", "optimizer_state", "temporary", "other"]
    assert sum(sizes[-1]) == 0
    assert peak >= 2 * 64 * 64 * 4


def test_with_stack_records_module_scope():
    scopes = rt._C._profiler
    with profile(with_stack=True) as prof:
        outer = scopes.OpenModuleScope("net")
        inner = scopes.OpenModuleScope("encoder")
        assert scopes.current_module_path() == "net.encoder"
        rt.randn(2).relu()
        inner.close()
        outer.close()
        rt.randn(2).tanh()
    events = {e.name: e for e in prof.events()}
    assert events["relu"].scope == "net.encoder"
    assert events["tanh"].scope == ""


def test_python_modules_give_module_paths_and_memory_categories(tmp_path):
    class Encoder(rt.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = rt.nn.Linear(16, 16)

        def forward(self, x):
            return self.fc(x).relu()

    with profile(profile_memory=True, with_stack=True) as prof:
        model = rt.nn.Sequential(Encoder(), rt.nn.Linear(16, 4))
        opt = rt.optim.Adam(model.parameters(), lr=0.1)
        loss = model(rt.randn(8, 16)).square().mean()
        loss.backward()
        opt.step()
        del model, opt, loss
    scopes = {e.name: e.scope for e in prof.events() if e.name in ("addmm", "relu", "linear")}
    assert scopes["relu"] == "0"
    assert {e.scope for e in prof.events() if e.name in ("addmm", "linear")} >= {"0.fc", "1"}
    prof.export_memory_timeline(tmp_path / "m.json")
    times, sizes, categories = json.loads((tmp_path / "m.json").read_text())
    peaks = {c: max(row[i] for row in sizes) for i, c in enumerate(categories)}
    param_bytes = (16 * 16 + 16 + 16 * 4 + 4) * 4
    assert peaks["parameter"] == param_bytes
    assert peaks["gradient"] == param_bytes
    assert peaks["optimizer_state"] >= 2 * param_bytes
    assert peaks["activation"] > 0
    assert sum(sizes[-1]) == 0


def test_module_list_and_dict_children_carry_the_container_name():
    # ModuleList/ModuleDict are indexed, never called: their children's paths must still read
    # "blocks.0.fc" (named_modules' names), whether the container was attached before or after
    # its children were added.
    class Net(rt.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = rt.nn.ModuleList([rt.nn.Linear(4, 4)])
            self.heads = rt.nn.ModuleDict({"cls": rt.nn.Linear(4, 2)})
            self.blocks.append(rt.nn.Linear(4, 4))

        def forward(self, x):
            for block in self.blocks:
                x = block(x).relu()
            return self.heads["cls"](x)

    net = Net()
    with profile(with_stack=True) as prof:
        net(rt.randn(3, 4))
    scopes = {e.scope for e in prof.events() if e.name in ("linear", "addmm")}
    assert scopes == {"blocks.0", "blocks.1", "heads.cls"}
    assert {name for name, _ in net.named_modules() if name} >= {"blocks.0", "blocks.1", "heads.cls"}


def test_memory_categories_tagged_from_python(tmp_path):
    with profile(profile_memory=True) as prof:
        scope = rt._C._profiler.OpenMemoryCategory("parameter")
        w = rt.zeros(32, 32)
        scope.close()
        scope = rt._C._profiler.OpenMemoryCategory("optimizer_state")
        m = rt.zeros(32, 32)
        scope.close()
        del w, m
    prof.export_memory_timeline(tmp_path / "m.json")
    times, sizes, categories = json.loads((tmp_path / "m.json").read_text())
    peaks = {c: max(row[i] for row in sizes) for i, c in enumerate(categories)}
    assert peaks["parameter"] == peaks["optimizer_state"] == 32 * 32 * 4
    assert sum(sizes[-1]) == 0
    with pytest.raises(ValueError, match="optimizer_state"):
        rt._C._profiler.OpenMemoryCategory("weights")


def test_counter_function_outside_and_inside():
    assert profiler.counter("lr", 0.1) is False
    with profile() as prof:
        assert profiler.counter("lr", 0.1) is True
        assert profiler.counter("lr", rt.tensor(0.05)) is True
        assert profiler.is_profiling()
    assert not profiler.is_profiling()
    assert [v for _, n, v in prof.session.counters() if n == "lr"] == pytest.approx([0.1, 0.05])
    with pytest.raises(TypeError, match="one-element tensor"):
        profiler.counter("lr", "fast")


def test_threads_are_recorded_separately():
    together = threading.Barrier(4, timeout=20)  # all alive at once, so no thread id is reused

    def work():
        with record_function("worker"):
            rt.randn(4, 4).sum()
        together.wait()

    with profile() as prof:
        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        work()
        for t in threads:
            t.join()
    workers = [e for e in prof.events() if e.name == "worker"]
    assert len(workers) == 4 and len({e.thread for e in workers}) == 4
    assert all(any(c.name == "sum" for c in e.cpu_children) for e in workers)


# -- key_averages table ---------------------------------------------------------------------------


def test_table_lists_ops_and_sorts(trained):
    table = trained.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    assert "train_step" in table and "Self CPU" in table and "# of Calls" in table
    assert len([line for line in table.splitlines() if line.strip()]) <= 10 + 6
    full = trained.key_averages().table(sort_by="self_cpu_time_total", row_limit=-1)
    for name in ("linear", "relu", "mse_loss", "optimizer.step"):
        assert name in full
    with pytest.raises(ValueError, match="cpu_time_total"):
        trained.key_averages().table(sort_by="flops")
    total = trained.key_averages().total_average()
    assert total.count == sum(r.count for r in trained.key_averages())
    # events().table() averages the same events the C++ summary does.
    from_events = by_key(trained.events().key_averages())
    for r in trained.key_averages():
        assert from_events[r.key].count == r.count
        assert from_events[r.key].cpu_time_total == pytest.approx(r.cpu_time_total, abs=5e-3)
        assert from_events[r.key].self_cpu_time_total == pytest.approx(r.self_cpu_time_total, abs=5e-3)


def test_memory_columns_with_profile_memory():
    # Linear(8 -> 16) on a batch of 5: its output is 5*16 float32 = 320 bytes, allocated by linear itself.
    layer = rt.nn.Linear(8, 16)
    x = rt.randn(5, 8)
    with profile(profile_memory=True) as prof:
        y = layer(x)
    rows = by_key(prof.key_averages())
    assert rows["linear"].self_cpu_memory_usage == 320
    assert rows["linear"].cpu_memory_usage >= 320
    assert rows["linear"].self_cuda_memory_usage == 0
    table = prof.key_averages().table(sort_by="self_cpu_memory_usage")
    header = table.splitlines()[1]
    assert "CPU Mem" in header and "Self CPU Mem" in header and "CUDA Mem" not in header
    assert "320 b" in table
    total = prof.key_averages().total_average()
    assert total.self_cpu_memory_usage == sum(r.self_cpu_memory_usage for r in prof.key_averages())
    del y
    with profile() as plain:
        layer(x)
    assert "CPU Mem" not in plain.key_averages().table()


# -- exports ----------------------------------------------------------------------------------


def test_export_chrome_trace_json_and_gz(trained, tmp_path):
    path = tmp_path / "trace.json"
    trained.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    names = {e.get("name") for e in events}
    assert {"train_step", "linear", "forward", "ProfilerStep#0", "ProfilerStep#2"} <= names
    slices = [e for e in events if e.get("ph") == "X"]
    assert all("ts" in e and "dur" in e for e in slices)
    assert any(e.get("ph") == "C" and e.get("name") == "loss" for e in events)
    gz = tmp_path / "trace.json.gz"
    trained.export_chrome_trace(gz)
    with gzip.open(gz, "rt") as f:
        assert len(json.load(f)["traceEvents"]) == len(events)


def test_export_memory_timeline_json_gz_html(trained, tmp_path):
    trained.export_memory_timeline(str(tmp_path / "mem.json"))
    times, sizes, categories = json.loads((tmp_path / "mem.json").read_text())
    assert len(times) == len(sizes) > 0 and times == sorted(times)
    assert all(len(row) == len(categories) == 6 for row in sizes)
    grads = max(row[categories.index("gradient")] for row in sizes)
    assert grads == (8 * 16 + 16 + 16 * 4 + 4) * 4  # every parameter's .grad, live together
    trained.export_memory_timeline(tmp_path / "mem.json.gz", device="cpu")
    with gzip.open(tmp_path / "mem.json.gz", "rt") as f:
        assert json.load(f)[0] == times
    trained.export_memory_timeline(tmp_path / "mem.html")
    page = (tmp_path / "mem.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<polygon" in page
    svg = ElementTree.fromstring(page[page.index("<svg"):page.index("</svg>") + 6])  # well-formed
    assert len(svg.findall("{http://www.w3.org/2000/svg}polygon")) >= 2  # one per category seen
    assert "gradient" in page and "<script" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    with pytest.raises(ValueError, match=".json, .json.gz or .html"):
        trained.export_memory_timeline(tmp_path / "mem.csv")
    with pytest.raises(ValueError, match="cuda:N"):
        trained.export_memory_timeline(tmp_path / "mem.json", device="tpu")


def test_store_keeps_the_session(tmp_path):
    db = tmp_path / "runs.sqlite"
    with profile(store=db, name="stored run") as prof:
        rt.randn(3, 3).relu()
        prof.step()
    assert isinstance(prof.session_id, int) and prof.session_id > 0
    with sqlite3.connect(db) as con:
        name, complete = con.execute("SELECT name, complete FROM Sessions WHERE id = ?",
                                     (prof.session_id,)).fetchone()
        ops = con.execute("SELECT count(*) FROM Ops WHERE sessionId = ?", (prof.session_id,)).fetchone()[0]
    assert name == "stored run" and complete == 1
    assert ops == prof.session.op_count


# -- record_function ------------------------------------------------------------------------------


def test_record_function_nesting_and_decorator():
    @record_function("decorated")
    def f(n):
        return f(n - 1) if n else rt.randn(2).exp()

    with profile() as prof:
        with record_function("outer"):
            with record_function("inner") as inner:
                rt.randn(2, 2).tanh()
            assert repr(inner).endswith("closed)")
        f(2)
    events = prof.events()
    inner = next(e for e in events if e.name == "inner")
    assert inner.cpu_parent.name == "outer"
    assert any(c.name == "tanh" for c in inner.cpu_children)
    decorated = [e for e in events if e.name == "decorated"]
    assert len(decorated) == 3 and [e.depth for e in decorated] == [0, 1, 2]


def test_record_function_rules():
    outer, inner = record_function("a"), record_function("b")
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(RuntimeError, match="innermost first"):
        outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)
    with pytest.raises(RuntimeError, match="not open"):
        outer.__exit__(None, None, None)
    r = record_function("reused")
    with r:
        with pytest.raises(RuntimeError, match="already open"):
            r.__enter__()
    with pytest.raises(TypeError, match="generator"):
        record_function("g")(lambda: (yield))
    with pytest.raises(TypeError, match="str"):
        record_function(42)
    with pytest.raises(NotImplementedError, match="args"):
        record_function("x", args="y")


# -- schedule -------------------------------------------------------------------------------------


def test_schedule_actions_match_pytorch():
    s = schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=1)
    assert [s(i) for i in range(7)] == [ProfilerAction.NONE, ProfilerAction.NONE, ProfilerAction.WARMUP,
                                        ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE,
                                        ProfilerAction.NONE, ProfilerAction.NONE]
    with pytest.raises(ValueError, match="active"):
        schedule(wait=1, warmup=0, active=0)


def test_schedule_records_only_active_steps(tmp_path):
    windows = []

    def on_ready(p):
        windows.append(([s[0] for s in p.session.steps()],
                        sum(1 for e in p.events() if e.name.startswith("step "))))

    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=on_ready) as prof:
        for i in range(10):
            with record_function(f"step {i}"):
                rt.randn(2).sum()
            prof.step()
    assert windows == [([2, 3], 2), ([6, 7], 2)]

    with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=2),
                 on_trace_ready=profiler.chrome_trace_handler(tmp_path / "traces", worker_name="w")) as prof:
        for _ in range(3):
            rt.randn(2).sum()
            prof.step()
    files = sorted(p.name for p in (tmp_path / "traces").iterdir())
    assert len(files) == 2 and all(f.startswith("w.") and f.endswith(".pt.trace.json") for f in files)
    for f in files:
        assert "traceEvents" in json.loads((tmp_path / "traces" / f).read_text())


# -- errors ---------------------------------------------------------------------------------------


def test_results_before_stop_and_before_start(tmp_path):
    prof = profile()
    with pytest.raises(RuntimeError, match="never started"):
        prof.key_averages()
    with prof:
        with pytest.raises(RuntimeError, match="still recording"):
            prof.export_chrome_trace(str(tmp_path / "t.json"))
        with pytest.raises(RuntimeError, match="still recording"):
            prof.key_averages()
    with pytest.raises(RuntimeError, match="already stopped"):
        prof.stop()
    with pytest.raises(RuntimeError, match="not running"):
        prof.step()
    with pytest.raises(RuntimeError, match="not recording"):
        prof.add_counter("loss", 1.0)
    with pytest.raises(RuntimeError, match="already started"):
        prof.start()
    with pytest.raises(RuntimeError, match="profile_memory=True"):
        prof.export_memory_timeline(str(tmp_path / "m.json"))
    with pytest.raises(ValueError, match="record_shapes"):
        prof.key_averages(group_by_input_shape=True)


def test_nested_profile_is_refused():
    with profile():
        with pytest.raises(RuntimeError, match="do not nest"):
            with profile():
                pass
    with profile() as again:  # the refused one left nothing behind
        rt.randn(2).sum()
    assert by_key(again.key_averages())["sum"].count == 1


def test_unusable_store_and_export_path(tmp_path):
    not_a_store = tmp_path / "notes.sqlite"
    not_a_store.write_text("these are notes, not a database\n" * 100)
    with pytest.raises(RuntimeError, match="not a RustyTorch store"):
        with profile(store=not_a_store):
            pass
    assert not profiler.is_profiling()
    with profile() as prof:
        rt.randn(2).sum()
    with pytest.raises(ValueError, match="cannot open for writing"):
        prof.export_chrome_trace(str(tmp_path / "missing" / "t.json"))


def test_bad_arguments():
    with pytest.raises(NotImplementedError, match="with_flops"):
        profile(with_flops=True)
    with pytest.raises(TypeError, match="ProfilerActivity"):
        profile(activities=["cpu"])
    with pytest.raises(ValueError, match="empty"):
        profile(activities=[])
    with pytest.raises(TypeError, match="store"):
        profile(store=3)
    with pytest.raises(TypeError, match="schedule"):
        profile(schedule=5)
    with pytest.raises(TypeError, match="ProfilerAction"):
        with profile(schedule=lambda step: "record"):
            pass
    with pytest.raises(NotImplementedError, match="call stacks"):
        with profile() as prof:
            pass
        prof.key_averages(group_by_stack_n=5)
