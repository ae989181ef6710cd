"""The distributed benchmarks (bench/dist/) run in --quick mode and print their tables, so they do not rot.
No timing is checked: figures belong in bench/RESULTS.md, not in tests (DESIGN.md §6)."""
import os
import shutil
import subprocess
import sys

SOURCE = os.environ.get("RT_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BENCH = os.path.join(SOURCE, "bench", "dist")


def run_quick(script):
    # the scripts start their own ranks with the PYTHONPATH they were given (build/python under ctest)
    r = subprocess.run([sys.executable, os.path.join(BENCH, script), "--quick"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, f"{script} --quick exited with {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def has_torch():
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


def test_allreduce_bandwidth_quick():
    out = run_quick("allreduce_bandwidth.py")
    assert "memcpy bandwidth" in out, out
    assert "| size | backend | busbw GB/s" in out, out
    assert "| 64 KB | ours gloo |" in out and "| 256 KB | ours gloo |" in out, out
    if shutil.which("mpirun"):
        assert "| 64 KB | ours mpi |" in out, out
    if has_torch():
        assert "| 64 KB | PyTorch gloo |" in out and "targets at 64 KB:" in out, out


def test_ddp_step_quick():
    out = run_quick("ddp_step.py")
    assert "| configuration | step time, ms |" in out, out
    assert "| rt-1proc |" in out and "| rt-ddp-gloo |" in out, out
    assert "| rt-overlap-gloo |" in out and "exposed" in out, out
    if shutil.which("mpirun"):
        assert "| rt-ddp-mpi |" in out and "| rt-overlap-mpi |" in out, out
    if has_torch():
        assert "| torch-ddp-gloo |" in out and "| torch-overlap-gloo |" in out, out
