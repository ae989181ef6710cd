"""`rtorch info`: build, threads, the CPU kernels' level, BLAS, oneDNN, embedded Python and packages, optional parts; text and --json."""
import json
import re

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


def test_cpu_capability(info, rtorch):
    levels = ["DEFAULT", "AVX2", "AVX512"]
    cpu = info["CPU"]
    assert cpu["supported"] in levels
    assert levels.index(cpu["capability"]) <= levels.index(cpu["supported"])
    forced = rtorch("info", "--json", env={"RT_CPU_CAPABILITY": "Default"})
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["CPU"]["capability"] == "DEFAULT"
    text = rtorch("info", env={"RT_CPU_CAPABILITY": "avx9"})
    assert re.search(r"capability\s+" + cpu["supported"], text.stdout)
    assert "ignoring RT_CPU_CAPABILITY=avx9" in text.stderr


def test_onednn_section(rtorch, info):
    assert info["oneDNN"]["version"].startswith("2.") and "OpenMP" in info["oneDNN"]["version"]
    assert info["oneDNN"]["enabled"].startswith("yes")
    r = rtorch("info", "--json", env={"RT_ONEDNN": "0"})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["oneDNN"]["enabled"].startswith("no")


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
    for name in ("CUDA", "CUPTI", "NCCL", "MPI", "gloo"):
        part = parts[name]
        assert set(part) == ({"built", "usable", "detail", "version", "devices"} if name == "CUDA"
                             else {"built", "usable", "detail"})
        assert not part["usable"] or part["built"], name  # never usable when not built
        assert part["detail"]
    if not parts["GPU devices"]:
        assert not parts["CUDA"]["usable"] and not parts["CUDA"]["devices"]


def test_the_distributed_backends_are_reported_as_rustytorch_sees_them(info, rtorch, tmp_path):
    # rtorch info and rustytorch.distributed agree on which CPU backends this build has.
    script = tmp_path / "backends.py"
    script.write_text("import json, rustytorch.distributed as d\n"
                      "print(json.dumps({'gloo': d.is_gloo_available(), 'mpi': d.is_mpi_available()}))\n")
    r = rtorch("run", script)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout)
    assert info["optional"]["gloo"]["built"] == seen["gloo"]
    assert info["optional"]["MPI"]["built"] == seen["mpi"]


@pytest.fixture(scope="module")
def engine_cuda(rtorch, tmp_path_factory):
    """rt.cuda as a script run by `rtorch run` sees it: the same engine as `rtorch info`."""
    script = tmp_path_factory.mktemp("cuda") / "cuda_state.py"
    script.write_text("import json, rustytorch as rt\n"
                      "print(json.dumps({'built': rt.cuda.is_built(), 'available': rt.cuda.is_available(),\n"
                      "                  'reason': rt.cuda.unavailable_reason(), 'count': rt.cuda.device_count(),\n"
                      "                  'names': [rt.cuda.get_device_name(i) for i in range(rt.cuda.device_count())]}))\n")
    r = rtorch("run", script)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_cuda_part_is_the_engines_view(info, engine_cuda):
    cuda = info["optional"]["CUDA"]
    assert cuda["built"] is engine_cuda["built"] and cuda["usable"] is engine_cuda["available"]
    if cuda["built"]:
        assert re.match(r"CUDA \d+\.\d+ \(runtime\), (driver \d+\.\d+|no driver)$", cuda["version"])
        assert cuda["detail"].startswith(cuda["version"])
    else:
        assert cuda["version"] == "not built"
    if cuda["usable"]:
        assert [d["name"] for d in cuda["devices"]] == engine_cuda["names"]
        for i, d in enumerate(cuda["devices"]):
            assert d["index"] == i and re.match(r"\d+\.\d+$", d["capability"])
            assert d["total memory"] > 0 and d["multiprocessors"] > 0
    else:
        assert cuda["devices"] == [] and engine_cuda["reason"] in cuda["detail"]


def test_text_report_cuda_line(rtorch, info, engine_cuda):
    r = rtorch("info")
    assert r.returncode == 0, r.stderr
    cuda = info["optional"]["CUDA"]
    line = next(line for line in r.stdout.splitlines() if line.startswith("  CUDA "))
    state = "usable" if cuda["usable"] else "built, not usable" if cuda["built"] else "not built"
    assert re.match(rf"  CUDA +{state} — ", line), line
    if cuda["built"]:
        assert cuda["version"] in line
    if cuda["usable"]:
        for d in cuda["devices"]:
            assert re.search(rf"\n    cuda:{d['index']} +{re.escape(d['name'])}, compute {d['capability']}, "
                             r"[\d.]+ GiB, \d+ multiprocessors\n", r.stdout)
    else:
        assert engine_cuda["reason"] in line and "cuda:0" not in r.stdout


def test_text_report(rtorch, info):
    r = rtorch("info")
    assert r.returncode == 0, r.stderr
    for heading in ("build", "threads", "BLAS", "oneDNN", "Python", "optional parts"):
        assert f"\n{heading}\n" in r.stdout
    for line in ("CUDA", "CUPTI", "NCCL", "MPI", "numpy", "torch", "rustytorch"):
        assert f"\n  {line}" in r.stdout
    torch = info["python"]["torch"]
    assert (torch["version"] if torch["available"] else "not installed") in r.stdout
