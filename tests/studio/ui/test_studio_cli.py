"""rtorch-studio's command line: --help/--version, the no-display message, and headless --execute
(exit codes 0/1, --allow-errors, --timeout, outputs that nbformat validates), plus --exit-after-shown."""
import os
import subprocess
import tempfile
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

STUDIO = os.environ["RT_STUDIO_EXECUTABLE"]
SAMPLES = os.path.join(os.environ["RT_SOURCE_DIR"], "samples")


def run(args, env=None, timeout=180):
    full_env = dict(os.environ, OMP_NUM_THREADS="2")
    full_env.update(env or {})
    return subprocess.run([STUDIO, *args], capture_output=True, text=True, env=full_env, timeout=timeout)


def run_on_xvfb(args, env, timeout=180):
    """rtorch-studio ARGS on a virtual display, with the studio's own exit code: xvfb-run exits 5 instead when
    removing its temporary folder races the X server's shutdown, which says nothing about the studio."""
    with tempfile.TemporaryDirectory() as scratch:
        code_file = os.path.join(scratch, "exit_code")
        r = subprocess.run(["xvfb-run", "-a", "sh", "-c", '"$@"; echo $? > "$0"', code_file, STUDIO, *args],
                           capture_output=True, text=True, timeout=timeout, env=env)
        with open(code_file) as f:
            r.returncode = int(f.read())
    return r


def write_notebook(path, *sources):
    cells = [new_code_cell(s) if not s.startswith("#md ") else new_markdown_cell(s[4:]) for s in sources]
    nb = new_notebook(cells=cells)
    nbformat.write(nb, str(path))
    return path


def code_cells(path):
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    return [c for c in nb.cells if c.cell_type == "code"]


def test_help_and_version():
    r = run(["--help"])
    assert r.returncode == 0, r.stderr
    for word in ("--execute", "--output", "--allow-errors", "--timeout", "NOTEBOOK"):
        assert word in r.stdout
    r = run(["--version"])
    assert r.returncode == 0
    assert r.stdout.startswith("rtorch-studio ")


def test_usage_errors_exit_2():
    r = run(["--no-such-option"])
    assert r.returncode == 2
    assert "--help" in r.stderr
    r = run(["--output", "x.ipynb"])  # --output needs --execute
    assert r.returncode == 2


def test_without_a_display_it_says_so_and_shows_the_headless_command():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    r = subprocess.run([STUDIO], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1
    assert "no display" in r.stderr
    assert "--execute" in r.stderr


def test_execute_runs_every_cell_and_writes_a_valid_notebook(tmp_path):
    src = write_notebook(tmp_path / "in.ipynb", "#md # Title", "x = 20\nprint('hello')", "x + 22",
                         "import rustytorch as rt\nrt.ones(2, 2).sum()")
    before = src.read_bytes()
    out = tmp_path / "out.ipynb"
    r = run(["--execute", str(src), "--output", str(out)], env={"DISPLAY": "", "WAYLAND_DISPLAY": ""})
    assert r.returncode == 0, r.stdout + r.stderr
    assert src.read_bytes() == before  # --output leaves the input alone
    cells = code_cells(out)
    assert [c.execution_count for c in cells] == [1, 2, 3]
    assert cells[0].outputs[0].output_type == "stream" and cells[0].outputs[0].text == "hello\n"
    assert cells[1].outputs[0].data["text/plain"] == "42"
    assert "tensor(4.)" in cells[2].outputs[0].data["text/plain"]


def test_execute_fails_on_an_error_unless_allowed(tmp_path):
    src = write_notebook(tmp_path / "err.ipynb", "a = 1", "def f():\n    return 1 / 0\nf()", "after = 2")
    out = tmp_path / "out.ipynb"
    r = run(["--execute", str(src), "--output", str(out)])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "ZeroDivisionError" in r.stderr
    cells = code_cells(out)  # written anyway, so the traceback can be read; the run stopped at the error
    assert cells[1].outputs[-1].ename == "ZeroDivisionError" and cells[2].execution_count is None
    r = run(["--execute", str(src), "--output", str(out), "--allow-errors"])
    assert r.returncode == 0, r.stdout + r.stderr
    cells = code_cells(out)
    error = cells[1].outputs[-1]
    assert error.output_type == "error" and error.ename == "ZeroDivisionError"
    assert any("return 1 / 0" in line for line in error.traceback)
    assert cells[2].execution_count is not None  # kept going after the error


def test_execute_of_a_file_that_is_not_a_notebook_exits_2(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{ not json")
    r = run(["--execute", str(bad), "--output", str(tmp_path / "out.ipynb")])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "bad.ipynb" in r.stderr
    assert not (tmp_path / "out.ipynb").exists()


def test_execute_timeout_interrupts_a_stuck_cell(tmp_path):
    src = write_notebook(tmp_path / "slow.ipynb", "import time\ntime.sleep(60)", "done = True")
    out = tmp_path / "out.ipynb"
    start = time.monotonic()
    r = run(["--execute", str(src), "--output", str(out), "--timeout", "1"])
    elapsed = time.monotonic() - start
    assert r.returncode == 1, r.stdout + r.stderr
    assert "timed out" in r.stdout + r.stderr
    assert elapsed < 30, elapsed
    cells = code_cells(out)  # written anyway, with the interrupted cell's error
    assert any(o.output_type == "error" for o in cells[0].outputs)


def test_execute_the_quickstart(tmp_path):
    # A samples-like tree: the notebook imports ../digits_data.py.
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "digits_data.py").symlink_to(os.path.join(SAMPLES, "digits_data.py"))
    (tmp_path / "data").symlink_to(os.path.join(SAMPLES, "data"))
    src = tmp_path / "notebooks" / "quickstart.ipynb"
    src.write_bytes(open(os.path.join(SAMPLES, "notebooks", "quickstart.ipynb"), "rb").read())
    out = tmp_path / "quickstart-out.ipynb"
    r = run(["--execute", str(src), "--output", str(out)])
    assert r.returncode == 0, r.stdout + r.stderr
    cells = code_cells(out)
    assert all(c.execution_count for c in cells)
    outputs = [o for c in cells for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    assert any("Self CPU" in o.get("text", "") for o in outputs)
    assert any("test accuracy" in o.get("text", "") for o in outputs)


def test_exit_after_shown_reports_the_first_frame(tmp_path):
    env = {"QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "RT_STUDIO_RECOVERY_DIR": str(tmp_path / "recovery")}
    r = run(["--exit-after-shown", "--idle-ms", "100", os.path.join(SAMPLES, "notebooks", "quickstart.ipynb")],
            env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "first frame after" in r.stdout
    assert "idle resident memory" in r.stdout


@pytest.mark.parametrize("plugin_args", [[], ["--safe-mode"], ["--noload", "org.rustytorch.grad-histogram"]])
def test_the_window_shows_with_plugins_without_them_or_without_one(tmp_path, plugin_args):
    # The shipped plugins (build/plugins) load before the window shows; their delayed_initialize runs after it.
    env = {"QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "RT_STUDIO_RECOVERY_DIR": str(tmp_path / "recovery"), "RT_PLUGIN_STATE_DIR": str(tmp_path / "state")}
    r = run([*plugin_args, "--exit-after-shown"], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "first frame after" in r.stdout


def test_check_plugin_takes_no_notebook(tmp_path):
    r = run(["--check-plugin", str(tmp_path), "notebook.ipynb"])
    assert r.returncode == 2
    assert "--check-plugin DIR checks a plugin" in r.stderr


def test_run_sh_command_line_from_the_repository_root(tmp_path):
    # scripts/run.sh runs `build/bin/rtorch-studio samples/notebooks/quickstart.ipynb` from the repository root:
    # a relative path, while the interpreter thread changes the process's directory to the notebook's folder.
    root = os.environ["RT_SOURCE_DIR"]
    run_sh = open(os.path.join(root, "scripts", "run.sh")).read()
    assert "notebook=samples/notebooks/quickstart.ipynb" in run_sh
    env = dict(os.environ, OMP_NUM_THREADS="2", QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
               RT_STUDIO_RECOVERY_DIR=str(tmp_path / "recovery"), RT_STUDIO_AUTO_ANSWER="problem=OK")
    r = subprocess.run([STUDIO, "samples/notebooks/quickstart.ipynb", "--exit-after-shown", "--idle-ms", "300"],
                       cwd=root, capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "prompt problem" not in r.stderr, r.stderr
    quickstart = os.path.join(root, "samples", "notebooks", "quickstart.ipynb")
    cells = len(nbformat.read(quickstart, as_version=4).cells)
    assert f"notebook {quickstart}, {cells} cells)" in r.stdout, r.stdout


def test_run_all_runs_every_cell_in_the_window(tmp_path):
    marker = tmp_path / "ran.txt"
    nb = write_notebook(tmp_path / "two.ipynb", f"open({str(marker)!r}, 'w').write('first')",
                        f"open({str(marker)!r}, 'a').write(' second')")
    env = {"QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "RT_STUDIO_RECOVERY_DIR": str(tmp_path / "recovery")}
    r = run(["--run-all", "--exit-after-shown", "--idle-ms", "300", str(nb)], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert marker.read_text() == "first second"


def test_run_all_needs_a_notebook():
    r = run(["--run-all"])
    assert r.returncode == 2
    assert "--run-all needs a notebook" in r.stderr


def make_store(tmp_path):
    store = tmp_path / "runs.sqlite"
    script = tmp_path / "train.py"
    script.write_text(
        "import rustytorch as rt\n"
        "from rustytorch import nn\n"
        "rt.manual_seed(0)\n"
        "model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))\n"
        "opt = rt.optim.SGD(model.parameters(), lr=0.1)\n"
        "x, y = rt.randn(32, 8), rt.randint(0, 2, (32,))\n"
        "with rt.profiler.profile(profile_memory=True, record_shapes=True, store=%r) as prof:\n"
        "    for _ in range(3):\n"
        "        loss = nn.functional.cross_entropy(model(x), y)\n"
        "        opt.zero_grad(); loss.backward(); opt.step()\n"
        "        rt.profiler.counter('loss', loss.item())\n"
        "        prof.step()\n" % str(store))
    rtorch = os.path.join(os.path.dirname(STUDIO), "rtorch")
    r = subprocess.run([rtorch, "run", str(script)], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, OMP_NUM_THREADS="2"))
    assert r.returncode == 0, r.stdout + r.stderr
    return store


@pytest.mark.parametrize("view", ["timeline", "memory", "scalars", "graph"])
def test_render_draws_a_stored_session_into_a_png(tmp_path, view):
    store = make_store(tmp_path)
    png = tmp_path / f"{view}.png"
    r = run_on_xvfb(["--render", view, "--session", f"{store}:1", "--output", str(png), "--size", "800x400"],
                    env=dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config")))
    assert r.returncode == 0, r.stdout + r.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (800, 400)


def test_render_errors_name_the_problem(tmp_path):
    store = make_store(tmp_path)
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"))
    r = run_on_xvfb(["--render", "memory", "--session", f"{store}:7", "--output", str(tmp_path / "m.png")], env)
    assert r.returncode == 2
    assert "rtorch trace list" in r.stderr
    r = run_on_xvfb(["--render", "graph", "--trace", str(tmp_path / "t.json"), "--output", str(tmp_path / "g.png")],
                    env)
    assert r.returncode == 2
    assert "traces keep no autograd graph" in r.stderr
    no_backward = tmp_path / "forward_only.py"
    no_backward.write_text("import rustytorch as rt\n"
                           "with rt.profiler.profile(store=%r):\n"
                           "    (rt.ones(3, requires_grad=True) * 2).sum()\n" % str(store))
    rtorch = os.path.join(os.path.dirname(STUDIO), "rtorch")
    assert subprocess.run([rtorch, "run", str(no_backward)], capture_output=True, timeout=120).returncode == 0
    r = run_on_xvfb(["--render", "graph", "--session", str(store), "--output", str(tmp_path / "g.png")], env)
    assert r.returncode == 2
    assert "has no autograd graph: no backward ran while it recorded" in r.stderr
    r = run(["--render", "timeline", "--output", str(tmp_path / "t.png")])
    assert r.returncode == 2
    assert "--session" in r.stderr


ARTIFACTS = os.path.join(os.environ.get("RT_BUILD_DIR", os.path.dirname(os.path.dirname(STUDIO))), "test-artifacts")


# Modules (clusters) and backward nodes each sample's stored graph must have.
SAMPLE_GRAPHS = {
    "digits_cnn": ({"features.0", "features.4", "classifier.2"},
                   {"ConvolutionBackward0", "MaxPool2DWithIndicesBackward0", "AddmmBackward0", "AccumulateGrad"}),
    "char_transformer": ({"tok", "pos", "0.attn.qkv", "1.mlp.0", "head"},
                         {"EmbeddingBackward0", "SoftmaxBackward0", "AccumulateGrad"}),
}


def check_rendered_graph(store, stdout, sample):
    """The store kept the first and the latest backward's graph, with the sample's modules and ops; the render
    drew the latest, with every op but the AccumulateGrad leaves annotated from the session's records."""
    import re
    import sqlite3
    db = sqlite3.connect(str(store))
    graphs = db.execute("SELECT id, backwardIndex, nodeCount FROM AutogradGraphs ORDER BY id").fetchall()
    assert len(graphs) == 2 and graphs[0][1] == 0 and graphs[1][1] > 0, graphs
    latest, index, count = graphs[1]
    rows = db.execute("SELECT s.value, m.value, n.isLeaf FROM AutogradGraphNodes n JOIN StringIds s ON s.id = n.nameId "
                      "LEFT JOIN StringIds m ON m.id = n.moduleId WHERE n.graphId = ?", (latest,)).fetchall()
    assert len(rows) == count
    modules, names = SAMPLE_GRAPHS[sample]
    assert names <= {name for name, _, _ in rows}, sorted({name for name, _, _ in rows})
    # A path may carry a prefix the sample's Python ModuleList leaves out today ("0.attn.qkv" for
    # named_modules()' "blocks.0.attn.qkv"): match whole trailing components.
    recorded = {module for _, module, _ in rows if module}
    for want in modules:
        assert any(m == want or m.endswith("." + want) for m in recorded), (want, sorted(recorded))
    leaves = sum(leaf for _, _, leaf in rows)
    m = re.search(r"the graph of backward #(\d+) \(the latest of 2 kept\), (\d+) ops, (\d+) nodes shown, "
                  r"(\d+) ops with time and memory", stdout)
    assert m, stdout
    assert (int(m[1]), int(m[2]), int(m[4])) == (index, count, count - leaves), stdout
    assert 5 < int(m[3]) <= 60


@pytest.mark.parametrize("sample", ["digits_cnn", "char_transformer"])
def test_render_every_view_of_a_profiled_sample(tmp_path, sample):
    """Profiles a sample with rtorch run (as a user would), then draws each panel of its stored session into
    build/test-artifacts/render-<sample>-<view>.png and checks the pictures are not blank."""
    store = tmp_path / "runs.sqlite"
    rtorch = os.path.join(os.path.dirname(STUDIO), "rtorch")
    r = subprocess.run([rtorch, "run", "--store", str(store), os.path.join(SAMPLES, f"{sample}.py"), "--quick"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="2"))
    assert r.returncode == 0, r.stdout + r.stderr
    os.makedirs(ARTIFACTS, exist_ok=True)
    for view in ("timeline", "memory", "scalars", "graph"):
        png = os.path.join(ARTIFACTS, f"render-{sample}-{view}.png")
        r = run_on_xvfb(["--render", view, "--session", str(store), "--output", png, "--size", "1400x700"],
                        env=dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config")))
        assert r.returncode == 0, r.stdout + r.stderr
        if view == "graph":
            check_rendered_graph(store, r.stdout, sample)
        from PIL import Image
        image = Image.open(png).convert("RGB")
        assert image.size == (1400, 700)
        colors = image.getcolors(maxcolors=1 << 20)
        assert colors is not None and len(colors) > 20, f"{view} of {sample} looks blank ({len(colors or [])} colors)"
