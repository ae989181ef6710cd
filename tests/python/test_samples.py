"""Every sample runs in --quick mode through `rtorch run`, and every sample notebook is valid nbformat 4.5
and executes (its code cells in order, with the `parameters` cell overridden as papermill does)."""
import json
import os
import subprocess
import sys

import pytest

SOURCE = os.environ.get("RT_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD = os.environ.get("RT_BUILD_DIR", os.path.join(SOURCE, "build"))
RTORCH = os.path.join(BUILD, "bin", "rtorch")
SAMPLES = os.path.join(SOURCE, "samples")
NOTEBOOKS = os.path.join(SAMPLES, "notebooks")

QUICK_PARAMETERS = {
    "digits_mlp": "epochs = 2",
    "digits_cnn": "epochs = 1",
    "char_transformer": "steps = 20\nsample_tokens = 30",
    "fused_bias_gelu": "epochs = 1",
}


def rtorch_run(args, cwd, timeout=300):
    if not os.path.exists(RTORCH):
        pytest.fail(f"{RTORCH} is missing: build the project first (scripts/build.sh)")
    env = dict(os.environ, OMP_NUM_THREADS="2")
    env.pop("PYTHONPATH", None)  # rtorch finds rustytorch by itself
    return subprocess.run([RTORCH, "run", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_digits_mlp_quick():
    r = rtorch_run([os.path.join(SAMPLES, "digits_mlp.py"), "--quick"], cwd=SAMPLES)
    assert r.returncode == 0, r.stderr
    epochs = [line for line in r.stdout.splitlines() if line.startswith("epoch")]
    assert len(epochs) == 2, r.stdout
    assert float(epochs[-1].split("test accuracy")[1].split()[0]) > 0.5, r.stdout


def test_digits_cnn_quick():
    r = rtorch_run([os.path.join(SAMPLES, "digits_cnn.py"), "--quick"], cwd=SAMPLES)
    assert r.returncode == 0, r.stderr
    epochs = [line for line in r.stdout.splitlines() if line.startswith("epoch")]
    assert len(epochs) == 1, r.stdout
    assert float(epochs[0].split("test accuracy")[1].split()[0]) > 0.5, r.stdout


def test_ddp_digits_quick_under_rtorch_launch():
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([RTORCH, "launch", "--nproc-per-node", "2", os.path.join(SAMPLES, "ddp_digits.py"), "--quick"],
                       cwd=SAMPLES, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    epochs = [line for line in r.stdout.splitlines() if "epoch" in line and "test accuracy" in line]
    assert len(epochs) == 1 and epochs[0].startswith("[rank 0]: "), r.stdout   # only rank 0 evaluates
    assert "mean over 2 ranks" in epochs[0]
    assert float(epochs[0].split("test accuracy")[1].split()[0]) > 0.5, r.stdout


def test_fused_bias_gelu_quick_trains_through_the_plugin_op_as_the_unfused_model_does():
    r = rtorch_run([os.path.join(SAMPLES, "fused_bias_gelu.py"), "--quick"], cwd=SAMPLES)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("loaded org.rustytorch.fused-bias-gelu"), r.stdout
    fused = [line.split("(")[0].split()[1:] for line in r.stdout.splitlines() if line.startswith("fused ")]
    unfused = [line.split("(")[0].split()[1:] for line in r.stdout.splitlines() if line.startswith("unfused ")]
    assert len(fused) == 2 and fused == unfused, r.stdout  # the same losses and accuracies, to 4 digits
    assert float(fused[-1][-1]) > 0.5, r.stdout


def test_char_transformer_quick_trains_and_samples():
    r = rtorch_run([os.path.join(SAMPLES, "char_transformer.py"), "--quick"], cwd=SAMPLES)
    assert r.returncode == 0, r.stderr
    losses = [float(line.split("train loss")[1].split()[0]) for line in r.stdout.splitlines() if "train loss" in line]
    assert len(losses) >= 2 and losses[-1] < losses[0], r.stdout
    sample = r.stdout.split("--- sample ---\n")[1]
    assert sample.startswith("It is a truth") and len(sample.strip()) >= len("It is a truth") + 30


def test_digits_mlp_saves_loadable_weights(tmp_path):
    out = tmp_path / "mlp.safetensors"
    r = rtorch_run([os.path.join(SAMPLES, "digits_mlp.py"), "--quick", "--save", str(out)], cwd=SAMPLES)
    assert r.returncode == 0, r.stderr
    header_len = int.from_bytes(out.read_bytes()[:8], "little")
    header = json.loads(out.read_bytes()[8:8 + header_len])
    assert header["0.weight"]["shape"] == [128, 64] and header["4.bias"]["shape"] == [10]


def notebook_script(path):
    """The notebook's code cells as one script, the parameters cell followed by the quick overrides."""
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
    assert all(c.get("id") for c in nb.cells), "nbformat 4.5 cells need ids"
    name = os.path.splitext(os.path.basename(path))[0]
    parts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        parts.append(cell.source)
        if "parameters" in cell.metadata.get("tags", []):
            parts.append(QUICK_PARAMETERS[name])
    return "\n\n".join(parts) + "\n"


@pytest.mark.parametrize("name", sorted(QUICK_PARAMETERS))
def test_notebook_executes(name, tmp_path):
    script = tmp_path / f"{name}_notebook.py"
    script.write_text(notebook_script(os.path.join(NOTEBOOKS, f"{name}.ipynb")))
    r = rtorch_run([str(script)], cwd=NOTEBOOKS)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_sample_has_a_notebook():
    # ddp_digits.py starts several processes (rtorch launch): a notebook kernel is one process.
    scripts = {f[:-3] for f in os.listdir(SAMPLES) if f.endswith(".py") and f not in ("digits_data.py", "ddp_digits.py")}
    # quickstart.ipynb is the studio's guided tour (scripts/run.sh opens it), not a sample script's twin;
    # tests/studio/test_studio_cli.py executes it.
    notebooks = {f[:-6] for f in os.listdir(NOTEBOOKS) if f.endswith(".ipynb")} - {"quickstart"}
    assert scripts == notebooks == set(QUICK_PARAMETERS)
