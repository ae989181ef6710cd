"""Ctrl+C (SIGINT) during a long engine op raises KeyboardInterrupt quickly and leaves the
process usable. The op runs in a subprocess that reports over stdout."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

CHILD = textwrap.dedent("""
    import sys, time
    import rustytorch as rt
    a = rt.randn(500, 160, 160, dtype=rt.float64)
    img, kernel = rt.randn(512, 16, 64, 64), rt.randn(32, 16, 5, 5)
    ops = {
        "matmul": lambda: [rt.matmul(a, a) for _ in range(10000)],  # batched: polls between batches
        "conv": lambda: [rt.conv2d(img, kernel, padding=2) for _ in range(1000)],  # polls per image
    }
    print("ready", flush=True)
    t0 = time.monotonic()
    try:
        ops[sys.argv[1]]()
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted {time.monotonic() - t0:.3f}", flush=True)
    # still usable: a new op works and a second interrupt is not pending
    x = rt.ones(3) + 1
    print("usable", x.tolist(), flush=True)
""")


@pytest.mark.parametrize("op", ["matmul", "conv"])
def test_sigint_interrupts_long_op(op):
    env = dict(os.environ)
    proc = subprocess.Popen([sys.executable, "-c", CHILD, op], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # well inside the op
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        line = proc.stdout.readline().strip()
        reaction = time.monotonic() - sent
        out = proc.stdout.read()  # not communicate(): it would skip what readline already buffered
        err = proc.stderr.read()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert line.startswith("interrupted"), (line, err)
    assert "usable [2.0, 2.0, 2.0]" in out, (out, err)
    assert proc.returncode == 0, err
    # Reported, not asserted on: CI machines are shared. The acceptance figure is 0.5 s.
    print(f"{op}: KeyboardInterrupt {reaction:.3f} s after SIGINT")


def test_keyboard_interrupt_between_ops_is_python_s():
    """Outside engine calls, Python's own SIGINT handling is untouched."""
    code = "import rustytorch as rt, time\nprint('ready', flush=True)\ntry:\n    time.sleep(20)\nexcept KeyboardInterrupt:\n    print('py', flush=True)\n"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)  # let it enter the try block
    proc.send_signal(signal.SIGINT)
    out = proc.stdout.read()
    proc.wait(timeout=20)
    assert out.strip() == "py"
