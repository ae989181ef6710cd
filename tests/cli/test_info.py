"""`rtorch info`: build, threads, BLAS, embedded Python and packages, optional parts; text and --json."""
import json

import pytest

from conftest import PYTHON, run


@pytest.fixture(scope="module")
def info(rtorch):
    r = rtorch("--threads", "2", "info", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def python_version_of(module):
    r = run([PYTHON, "-c", f"import {module}; print({module}.__version__)"])
    return r.stdout.strip() if r.returncode == 0 else None


def test_build_section(info):
    build = info["build"]
    assert build["rustytorch"] == "0.1.0"
    assert build["compiler"].startswith("GCC ")
    assert build["c++ standard"].startswith("C++20")
    assert build["build type"]


def test_threads_and_blas(info):
    assert info["threads"]["engine"] == 2
    assert info["threads"]["CPU cores"] >= 1
    assert "OpenBLAS" in info["BLAS"]["config"]
    assert info["BLAS"]["parallel"] == "OpenMP"


def test_python_packages_match_python3(info):
    py = info["python"]
    assert py["executable"] == PYTHON
    r = run([PYTHON, "-c", "import platform; print(platform.python_version())"])
    assert py["version"] == r.stdout.strip()
    for module in ("numpy", "torch"):
        expected = python_version_of(module)
        if expected is None:
            assert py[module]["available"] is False and "No module named" in py[module]["error"]
        else:
            assert py[module] == {"available": True, "version": expected}
    assert py["rustytorch"]["available"] is True, py["rustytorch"]


def test_optional_parts_are_honest(info):
    parts = info["optional"]
    for name in ("CUDA", "CUPTI", "NCCL", "MPI"):
        part = parts[name]
        assert set(part) == {"built", "usable", "detail"}
        assert not part["usable"] or part["built"], name  # never usable when not built
        assert part["detail"]
    if not parts["GPU devices"]:
        assert "no GPU" in parts["CUDA"]["detail"] and not parts["CUDA"]["usable"]


def test_text_report(rtorch, info):
    r = rtorch("info")
    assert r.returncode == 0, r.stderr
    for heading in ("build", "threads", "BLAS", "Python", "optional parts"):
        assert f"\n{heading}\n" in r.stdout
    for line in ("CUDA", "CUPTI", "NCCL", "MPI", "numpy", "torch", "rustytorch"):
        assert f"\n  {line}" in r.stdout
    torch = info["python"]["torch"]
    assert (torch["version"] if torch["available"] else "not installed") in r.stdout
