"""`rtorch run --profile/--store` and `rtorch trace list|export|import|summary`."""
import gzip
import json
import os
import pty
import re
import subprocess
import textwrap

import pytest

from conftest import RTORCH

SCRIPT = """
    import sys
    import rustytorch as rt
    w = rt.randn(8, 4, requires_grad=True)
    x = rt.randn(16, 8)
    for _ in range(3):
        loss = (x.matmul(w).relu() * 2.0).sum()
        loss.backward()
    print("loss", loss.item())
    if len(sys.argv) > 1 and sys.argv[1] == "raise":
        raise RuntimeError("boom from the script")
    if len(sys.argv) > 1:
        sys.exit(int(sys.argv[1]))
"""
OP_NAMES = ("matmul", "relu", "mul", "sum")


def trace_names(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return {e.get("name", "") for e in events}


@pytest.fixture(scope="module")
def profiled(tmp_path_factory, rtorch):
    """One profiled run into a trace and a store, shared by the tests that read them."""
    d = tmp_path_factory.mktemp("profiled")
    (d / "train.py").write_text(textwrap.dedent(SCRIPT))
    r = rtorch("run", "--profile", "out.json", "--store", "runs.sqlite", "train.py", cwd=d)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("loss")
    return d


def test_profile_writes_chrome_trace_with_the_scripts_ops(profiled):
    names = trace_names(profiled / "out.json")
    for op in OP_NAMES:
        assert any(op in n for n in names), (op, sorted(names)[:50])
    assert any("backward" in n.lower() or "Backward" in n for n in names), sorted(names)[:50]


def test_store_lists_the_run_as_complete(profiled, rtorch):
    r = rtorch("trace", "list", profiled / "runs.sqlite")
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    assert len(rows) == 1
    assert rows[0][0] == "1" and "yes" in rows[0] and rows[0][-1] == "train.py"


def test_export_then_import_into_another_store(profiled, rtorch, tmp_path):
    r = rtorch("trace", "export", profiled / "runs.sqlite", "--session", "1", "-o", tmp_path / "exported.json.gz")
    assert r.returncode == 0, r.stderr
    names = trace_names(tmp_path / "exported.json.gz")
    assert all(any(op in n for n in names) for op in OP_NAMES)
    assert "\r" not in r.stderr  # progress only on a terminal

    r = rtorch("trace", "import", tmp_path / "exported.json.gz", "--store", tmp_path / "other.sqlite",
               "--name", "copy")
    assert r.returncode == 0, r.stderr
    assert re.search(r"as session 1 of", r.stdout), r.stdout
    assert re.search(r"events: [1-9]\d* read", r.stdout), r.stdout
    assert "repairs:" in r.stdout

    listed = rtorch("trace", "list", tmp_path / "other.sqlite")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].split()[-1] == "copy"


def test_export_defaults_to_the_latest_session(profiled, rtorch, tmp_path):
    r = rtorch("trace", "export", profiled / "runs.sqlite", "-o", tmp_path / "latest.json")
    assert r.returncode == 0, r.stderr
    assert "session 1" in r.stdout
    json.loads((tmp_path / "latest.json").read_text())


@pytest.mark.parametrize("source", ["runs.sqlite", "out.json"])
def test_summary_prints_the_key_averages_table(profiled, rtorch, source):
    r = rtorch("trace", "summary", profiled / source, "--sort-by", "self_cpu_time_total", "--row-limit", "50")
    assert r.returncode == 0, r.stderr
    assert "Self CPU" in r.stdout and "# of Calls" in r.stdout, r.stdout
    for op in OP_NAMES:
        assert op in r.stdout, r.stdout
    assert "Memory (all devices): peak" in r.stdout, r.stdout


def test_summary_group_by_shape_shows_shapes(profiled, rtorch):
    r = rtorch("trace", "summary", profiled / "runs.sqlite", "--group-by-shape")
    assert r.returncode == 0, r.stderr
    assert "[16, 8]" in r.stdout, r.stdout


def test_script_exit_code_and_exception_keep_the_trace(tmp_path, rtorch):
    (tmp_path / "train.py").write_text(textwrap.dedent(SCRIPT))
    r = rtorch("run", "--profile", "exit.json.gz", "train.py", "3", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    assert any("matmul" in n for n in trace_names(tmp_path / "exit.json.gz"))

    r = rtorch("run", "--profile", "raise.json", "--no-record-shapes", "train.py", "raise", cwd=tmp_path)
    assert r.returncode == 1
    assert "boom from the script" in r.stderr
    assert any("matmul" in n for n in trace_names(tmp_path / "raise.json"))


def test_not_a_database_is_a_clear_error(tmp_path, rtorch):
    bad = tmp_path / "notes.sqlite"
    bad.write_text("these are my notes, not a database\n" * 100)
    for args in (("list", bad), ("summary", bad), ("export", bad, "-o", tmp_path / "x.json")):
        r = rtorch("trace", *args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert str(bad) in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = rtorch("run", "--store", bad, "-c", "print('should not run')")
    assert r.returncode == 1 and "should not run" not in r.stdout
    assert str(bad) in r.stderr
    assert bad.read_text().startswith("these are my notes")


def test_missing_session_names_the_id(profiled, rtorch, tmp_path):
    r = rtorch("trace", "export", profiled / "runs.sqlite", "--session", "999", "-o", tmp_path / "x.json")
    assert r.returncode == 1
    assert "999" in r.stderr, r.stderr
    assert not (tmp_path / "x.json").exists()


def test_corrupt_json_reports_the_byte_offset(tmp_path, rtorch):
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text('{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1},{"ph":"X",oops}]}')
    for args in (("import", corrupt, "--store", tmp_path / "s.sqlite"), ("summary", corrupt)):
        r = rtorch("trace", *args)
        assert r.returncode == 1, r.stderr
        assert re.search(r"at byte \d+", r.stderr), r.stderr
        assert "corrupt.json" in r.stderr


def test_missing_files_are_errors_and_nothing_is_created(tmp_path, rtorch):
    for args in (("list", tmp_path / "none.sqlite"), ("summary", tmp_path / "none.sqlite"),
                 ("summary", tmp_path / "none.json"), ("import", tmp_path / "none.json", "--store", tmp_path / "s.sqlite")):
        r = rtorch("trace", *args)
        assert r.returncode == 1, (args, r.stderr)
        assert "does not exist" in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == []


def test_usage_errors_exit_2(tmp_path, rtorch):
    assert rtorch("trace").returncode == 2
    assert rtorch("trace", "export", tmp_path / "s.sqlite").returncode == 2  # -o missing
    r = rtorch("trace", "summary", tmp_path / "s.sqlite", "--sort-by", "speed")
    assert r.returncode == 2 and "cpu_time_total" in r.stderr, r.stderr


def test_progress_is_a_single_updating_line_on_a_terminal(profiled, tmp_path):
    master, slave = pty.openpty()
    try:
        proc = subprocess.run([str(RTORCH), "trace", "import", str(profiled / "out.json"), "--store",
                               str(tmp_path / "tty.sqlite")], stdout=subprocess.PIPE, stderr=slave, timeout=120)
        os.close(slave)
        shown = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(master)
    assert proc.returncode == 0
    text = shown.decode()
    assert "\r\x1b[2K" in text and "100%" in text, repr(text)
    assert text.count("\n") == 1, repr(text)  # one line, redrawn in place, ended once
    assert b"%" not in proc.stdout


def test_summary_of_a_pytorch_profiler_trace(tmp_path, rtorch):
    torch_script = textwrap.dedent("""
        import sys, torch
        from torch.profiler import profile, ProfilerActivity
        w = torch.randn(8, 4, requires_grad=True)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            torch.mm(torch.randn(16, 8), w).relu().sum().backward()
        prof.export_chrome_trace(sys.argv[1])
    """)
    made = subprocess.run(["/usr/bin/python3", "-c", torch_script, str(tmp_path / "torch.json")],
                          capture_output=True, text=True, timeout=120)
    if made.returncode != 0:
        pytest.skip(f"PyTorch could not write a reference trace: {made.stderr[-300:]}")
    r = rtorch("trace", "summary", tmp_path / "torch.json")
    assert r.returncode == 0, r.stderr
    assert "aten::mm" in r.stdout and "aten::relu" in r.stdout, r.stdout


def test_newer_schema_and_locked_store_are_clear_errors(profiled, rtorch, tmp_path):
    import shutil
    import sqlite3

    newer = tmp_path / "newer.sqlite"
    shutil.copy(profiled / "runs.sqlite", newer)
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 99")
    r = rtorch("trace", "list", newer)
    assert r.returncode == 1 and "newer" in r.stderr and "99" in r.stderr, r.stderr

    locked = tmp_path / "locked.sqlite"
    shutil.copy(profiled / "runs.sqlite", locked)
    holder = sqlite3.connect(locked, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        r = rtorch("trace", "import", profiled / "out.json", "--store", locked)  # waits the 5 s busy timeout
    finally:
        holder.close()
    assert r.returncode == 1 and "locked" in r.stderr, r.stderr


def test_trace_folder_is_checked_before_the_script_runs(tmp_path, rtorch):
    r = rtorch("run", "--profile", tmp_path / "no" / "such" / "out.json", "-c", "print('ran')")
    assert r.returncode == 1
    assert "ran" not in r.stdout and "does not exist" in r.stderr, r.stderr


def test_store_only_profile_and_dash_c(tmp_path, rtorch):
    code = "import rustytorch as rt; (rt.ones(3, requires_grad=True) * 2).sum().backward(); raise SystemExit(0)"
    r = rtorch("run", "--store", tmp_path / "only.sqlite", "-c", code)
    assert r.returncode == 0, r.stderr
    listed = rtorch("trace", "list", tmp_path / "only.sqlite")
    assert listed.returncode == 0 and listed.stdout.splitlines()[1].split()[-1] == "-c", listed.stdout
    assert "yes" in listed.stdout.splitlines()[1].split()


def test_export_failure_after_sys_exit_0_gives_status_1(tmp_path, rtorch):
    (tmp_path / "out.json").mkdir()  # a folder where the trace file should go
    r = rtorch("run", "--profile", tmp_path / "out.json", "-c", "import sys; sys.exit(0)")
    assert r.returncode == 1
    assert "cannot write the trace" in r.stderr, r.stderr
