"""rustytorch.remote: RT_ATTACH=1 serves the importing process only, serve() validates its arguments, and the
headless Client talks to a real agent (its refusals arrive as exceptions naming the method)."""
import json
import os
import subprocess
import sys

import pytest

import rustytorch as rt

CHILD = r"""
import json, os, subprocess, sys
import rustytorch as rt
info = rt.remote.serving()
grandchild = subprocess.run([sys.executable, "-c",
                             "import rustytorch as rt; print(rt.remote.serving() is None)"],
                            capture_output=True, text=True, env=dict(os.environ))
print(json.dumps({"serving": info is not None, "pid": os.getpid(), "manifest_pid": info and info["pid"],
                  "env": os.environ["RT_ATTACH"], "jobs": len(rt.remote.list_jobs()),
                  "grandchild_not_serving": grandchild.stdout.strip()}))
"""


@pytest.fixture
def runtime(tmp_path, monkeypatch):
    d = tmp_path / "runtime"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("RT_RUNTIME_DIR", str(d))
    yield d
    rt.remote.stop(0)


def test_rt_attach_serves_the_importing_process_and_not_its_children(runtime):
    env = dict(os.environ, RT_ATTACH="1")
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["serving"] and r["manifest_pid"] == r["pid"]
    assert r["env"] == f"served:{r['pid']}"   # what children inherit: they do not serve
    assert r["jobs"] == 1
    assert r["grandchild_not_serving"] == "True"
    assert not list(runtime.glob("*.json"))  # stopped at exit: manifest and socket removed


def test_serve_validates_arguments(runtime):
    with pytest.raises(ValueError, match="rank must be >= 0"):
        rt.remote.serve(rank=-2)
    with pytest.raises(ValueError, match="buffer_bytes"):
        rt.remote.serve(buffer_bytes=10)
    assert rt.remote.serving() is None


def test_client_requests_and_refusals(runtime):
    info = rt.remote.serve(job="pytest-remote", rank=2, world_size=4)
    assert rt.remote.serve()["socket"] == info["socket"]  # one agent per process
    c = rt.remote.Client(info["socket"], "pytest")
    assert c.agent["job"] == "pytest-remote" and c.agent["rank"] == 2
    status = json.loads(c.request("status"))
    assert status["pid"] == os.getpid() and status["rank"] == 2
    with pytest.raises(RuntimeError, match="unknown method 'eval'"):
        c.request("eval")
    with pytest.raises(RuntimeError, match="no backward pass is paused"):
        c.request("step")
    c.request("subscribe")
    x = rt.ones(8, 8)
    for _ in range(5):
        x = x @ x / 8
    for _ in range(100):
        if c.op_counts().get("matmul", 0) >= 5:
            break
        c.poll(0.05)
    assert c.op_counts()["matmul"] == 5
    assert c.dropped == 0 and c.connected
    rt.remote.stop(2.0)
    while c.poll(0.2) != "closed":
        pass
    assert c.session_complete
