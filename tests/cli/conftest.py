"""Shared helpers for the `rtorch` tests: where the built binary is and how to run it."""
import os
import subprocess
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("RT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("RT_BUILD_DIR", SOURCE_DIR / "build"))
RTORCH = BUILD_DIR / "bin" / "rtorch"
PYTHON = "/usr/bin/python3"


def run(cmd, cwd=None, env=None, timeout=120, **kw):
    full_env = dict(os.environ)
    for var in ("PYTHONPATH", "RT_PYTHONPATH", "RT_BENCH_DIR"):
        full_env.pop(var, None)
    full_env.update(env or {})
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=full_env, capture_output=True, text=True,
                          timeout=timeout, **kw)


@pytest.fixture(scope="session")
def rtorch():
    if not RTORCH.exists():
        pytest.fail(f"{RTORCH} not found: build the rtorch target (RT_BUILD_DIR={BUILD_DIR})")

    def call(*args, **kw):
        return run([RTORCH, *args], **kw)

    return call
