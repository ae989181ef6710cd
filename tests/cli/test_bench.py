"""`rtorch bench`: runs bench/compare.py with rt_bench from the build, with and without PyTorch."""
from conftest import PYTHON, run


def test_help(rtorch):
    r = rtorch("bench", "--help")
    assert r.returncode == 0
    for option in ("--filter", "--quick", "--rt-bench"):
        assert option in r.stdout


def test_quick_run_prints_ratio_table(rtorch):
    r = rtorch("--threads", "2", "bench", "--quick", timeout=300)
    assert r.returncode == 0, r.stderr
    torch_installed = run([PYTHON, "-c", "import torch"]).returncode == 0
    assert "threads 2" in r.stdout
    rows = [l for l in r.stdout.splitlines() if l.startswith("| add_1elem") or l.startswith("| matmul_1024")]
    assert len(rows) == 2
    if torch_installed:
        assert "| workload | RustyTorch++ | PyTorch | ratio | spread |" in r.stdout
        assert all(len(row.split("|")) == 9 for row in rows)  # 7 columns: ... ratio, spread, target, met
    else:
        assert "PyTorch is not installed" in r.stdout


def test_without_pytorch_prints_rt_only(rtorch, tmp_path):
    (tmp_path / "torch.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\")\n")
    r = rtorch("--threads", "1", "bench", "--filter", "add_1elem", env={"PYTHONPATH": str(tmp_path)}, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "PyTorch is not installed" in r.stdout
    assert "| workload | RustyTorch++ |" in r.stdout
    assert [l for l in r.stdout.splitlines() if l.startswith("| add_1elem")]


def test_unknown_workload(rtorch):
    r = rtorch("bench", "--filter", "no_such_workload")
    assert r.returncode == 2
    assert "no_such_workload" in r.stderr and "add_1elem" in r.stderr


def test_missing_rt_bench(rtorch, tmp_path):
    r = rtorch("bench", "--rt-bench", str(tmp_path / "rt_bench"))
    assert r.returncode == 1
    assert "not found" in r.stderr and "--rt-bench" in r.stderr
