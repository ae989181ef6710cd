"""Runs a Python snippet as N real processes, the way `rtorch launch` starts ranks (RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR, MASTER_PORT set; a fresh free port per job), and returns what each rank printed
as a JSON line after `RESULT `. Every rank is killed when one fails or the time runs out, so a hang
fails the test instead of blocking the suite."""
import json
import os
import socket
import subprocess
import sys
import textwrap
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RankFailure(AssertionError):
    pass


def run_ranks(code, world_size, timeout=90, env=None, expect_failure=False):
    port = free_port()
    script = textwrap.dedent(code)
    procs = []
    for rank in range(world_size):
        e = dict(os.environ)
        e.update({"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world_size),
                  "LOCAL_WORLD_SIZE": str(world_size), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
                  "OMP_NUM_THREADS": "1"})
        e.update(env or {})
        procs.append(subprocess.Popen([sys.executable, "-c", script], env=e, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + timeout
    outputs = [None] * world_size
    try:
        while any(p.poll() is None for p in procs):
            if time.monotonic() > deadline:
                raise RankFailure(f"ranks still running after {timeout} s")
            if not expect_failure and any(p.poll() not in (None, 0) for p in procs):
                break
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for i, p in enumerate(procs):
            out, err = p.communicate()
            outputs[i] = (p.returncode, out, err)
    results = []
    for rank, (code_, out, err) in enumerate(outputs):
        if code_ != 0 and not expect_failure:
            raise RankFailure(f"rank {rank} exited with {code_}:\n{out}\n{err}")
        found = [json.loads(line[len("RESULT "):]) for line in out.splitlines() if line.startswith("RESULT ")]
        results.append({"returncode": code_, "stdout": out, "stderr": err, "result": found[-1] if found else None})
    return results if expect_failure else [r["result"] for r in results]
