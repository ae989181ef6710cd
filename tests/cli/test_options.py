"""`rtorch` options: --help everywhere, usage errors exit 2 with a hint, --threads validation, --version."""
import json

import pytest

SUBCOMMANDS = ["run", "info", "bench"]


def test_top_level_help_lists_commands(rtorch):
    r = rtorch("--help")
    assert r.returncode == 0
    for name in SUBCOMMANDS:
        assert name in r.stdout
    assert "--threads" in r.stdout


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_subcommand_has_help(rtorch, name):
    r = rtorch(name, "--help")
    assert r.returncode == 0, r.stderr
    assert f"rtorch {name}" in r.stdout and "--help" in r.stdout
    assert r.stderr == ""


def test_version(rtorch):
    r = rtorch("--version")
    assert r.returncode == 0
    assert r.stdout.startswith("rtorch ")


@pytest.mark.parametrize("args,needle", [
    (["run", "--bogus", "x.py"], "--bogus"),
    (["info", "--bogus"], "--bogus"),
    (["bench", "--nope"], "--nope"),
    (["--bogus", "info"], "--bogus"),
    (["frobnicate"], "frobnicate"),
])
def test_unknown_options_exit_2_with_hint(rtorch, args, needle):
    r = rtorch(*args)
    assert r.returncode == 2
    assert needle in r.stderr
    assert "--help" in r.stderr
    assert r.stdout == ""


def test_subcommand_required(rtorch):
    r = rtorch()
    assert r.returncode == 2
    assert "subcommand is required" in r.stderr and "rtorch --help" in r.stderr


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", "99999"])
def test_threads_validated(rtorch, value):
    r = rtorch("--threads", value, "info")
    assert r.returncode == 2
    assert "--threads" in r.stderr and f"'{value}'" in r.stderr and "from 1 to" in r.stderr


def test_threads_missing_value(rtorch):
    r = rtorch("info", "--threads")
    assert r.returncode == 2
    assert "--threads" in r.stderr


@pytest.mark.parametrize("position", ["before", "after"])
def test_threads_sets_engine_and_blas(rtorch, position):
    args = ["--threads", "3", "info", "--json"] if position == "before" else ["info", "--json", "--threads", "3"]
    r = rtorch(*args)
    assert r.returncode == 0, r.stderr
    threads = json.loads(r.stdout)["threads"]
    assert threads["engine"] == 3 and threads["OpenMP max"] == 3 and threads["OpenBLAS"] == 3
