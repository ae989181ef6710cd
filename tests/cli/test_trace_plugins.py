"""`rtorch trace import|export` through trace plugins, run out of process: the shipped folded-stacks plugin
(build/plugins/folded-stacks) and the crashing-importer fixture (build/tests/plugins/trace-fixtures)."""
import random
import re
import textwrap

import pytest

from conftest import BUILD_DIR, SOURCE_DIR

SAMPLE = SOURCE_DIR / "plugins" / "folded-stacks" / "samples" / "pyspy_threads.folded"
FOLDED = "org.rustytorch.folded-stacks"
FIXTURES = BUILD_DIR / "tests" / "plugins" / "trace-fixtures"
SCRIPT = """
    import rustytorch as rt
    w = rt.randn(64, 32, requires_grad=True)
    x = rt.randn(128, 64)
    for _ in range(3):
        with rt.profiler.record_function("train_step"):
            loss = (x.matmul(w).relu() * 2.0).sum()
            loss.backward()
    print("loss", loss.item())
"""


def lines(text):
    return sorted(line for line in text.splitlines() if line.strip())


@pytest.fixture(scope="module", autouse=True)
def built():
    if not (BUILD_DIR / "plugins" / "folded-stacks" / "plugin.json").exists():
        pytest.fail(f"build the folded_stacks target first ({BUILD_DIR}/plugins/folded-stacks is missing)")
    if not (BUILD_DIR / "bin" / "rtorch-trace-plugin").exists():
        pytest.fail("build the rtorch-trace-plugin target first")


def test_import_folded_into_a_store_then_list_and_summarise(rtorch, tmp_path):
    store = tmp_path / "runs.sqlite"
    r = rtorch("trace", "import", "--plugin", FOLDED, SAMPLE, "--store", store, "--name", "pyspy")
    assert r.returncode == 0, r.stderr
    assert "as session 1 of" in r.stdout, r.stdout
    assert f"importer: {FOLDED} 1.0.0 (format folded-stacks), run out of process" in r.stdout
    assert "slices: 15 on 2 threads" in r.stdout

    listed = rtorch("trace", "list", store)
    assert listed.returncode == 0, listed.stderr
    row = listed.stdout.splitlines()[1].split()
    assert row[0] == "1" and "yes" in row and row[-1] == "pyspy", listed.stdout

    summary = rtorch("trace", "summary", store, "--sort-by", "self_cpu_time_total")
    assert summary.returncode == 0, summary.stderr
    # get (queue.py:180) has 120 samples of 10 ms: the largest self time.
    first_row = next(line for line in summary.stdout.splitlines() if "(" in line and "%" in line)
    assert "get (queue.py:180)" in first_row and "1.200s" in first_row, summary.stdout


def test_plugins_take_part_in_format_detection(rtorch, tmp_path):
    stacks = tmp_path / "profile.txt"  # no extension the built-in reader knows
    stacks.write_text("main;load 4\nmain;train;forward 7\n")
    r = rtorch("trace", "import", stacks, "--store", tmp_path / "s.sqlite")
    assert r.returncode == 0, r.stderr
    assert FOLDED in r.stdout

    prose = tmp_path / "notes.txt"
    prose.write_text("dear diary, today I trained a model\n")
    r = rtorch("trace", "import", prose, "--store", tmp_path / "s.sqlite")
    assert r.returncode == 1
    assert "is not a Chrome trace and no importer plugin recognises it" in r.stderr, r.stderr
    assert f"{FOLDED}: 0" in r.stderr and "--plugin ID" in r.stderr


def test_export_round_trip_of_an_imported_file(rtorch, tmp_path):
    store = tmp_path / "s.sqlite"
    assert rtorch("trace", "import", SAMPLE, "--store", store).returncode == 0
    out = tmp_path / "again.folded"
    r = rtorch("trace", "export", store, "-o", out)  # the format from the extension
    assert r.returncode == 0, r.stderr
    assert f"with {FOLDED} (format folded-stacks): 15 slices" in r.stdout, r.stdout
    assert lines(out.read_text()) == lines(SAMPLE.read_text())


def test_export_a_recorded_profile_to_folded_and_import_it_again(rtorch, tmp_path):
    (tmp_path / "train.py").write_text(textwrap.dedent(SCRIPT))
    r = rtorch("run", "--store", "runs.sqlite", "train.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr

    r = rtorch("trace", "export", "--format", "folded-stacks", tmp_path / "runs.sqlite", "-o", tmp_path / "run.txt")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "run.txt").read_text()
    assert text.startswith("# sample_period_ns=1000\n"), text[:200]
    stacks = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in text.splitlines()[1:]}
    assert all(count > 0 for count in stacks.values())
    assert any(s.startswith("thread (main);train_step") and s.endswith("matmul") for s in stacks), list(stacks)
    assert any("Backward" in s for s in stacks), list(stacks)

    # The Chrome trace of the same run exports to the same stacks.
    assert rtorch("trace", "export", tmp_path / "runs.sqlite", "-o", tmp_path / "run.json").returncode == 0
    r = rtorch("trace", "export", tmp_path / "run.json", "--format", "folded-stacks", "-o", tmp_path / "via_json.folded")
    assert r.returncode == 0, r.stderr
    assert set(lines((tmp_path / "via_json.folded").read_text())) <= set(lines(text)) | {"# sample_period_ns=1000"}

    r = rtorch("trace", "import", "--plugin", FOLDED, tmp_path / "run.txt", "--store", tmp_path / "back.sqlite")
    assert r.returncode == 0, r.stderr
    r = rtorch("trace", "export", tmp_path / "back.sqlite", "-o", tmp_path / "back.folded")
    assert r.returncode == 0, r.stderr
    assert lines((tmp_path / "back.folded").read_text()) == lines(text)


def test_unknown_formats_and_plugins_are_named(rtorch, tmp_path):
    store = tmp_path / "s.sqlite"
    assert rtorch("trace", "import", SAMPLE, "--store", store).returncode == 0
    r = rtorch("trace", "export", store, "-o", tmp_path / "out.pprof")
    assert r.returncode == 1
    assert "give --format" in r.stderr and "folded-stacks" in r.stderr, r.stderr
    r = rtorch("trace", "export", store, "--format", "pprof", "-o", tmp_path / "out.pb")
    assert r.returncode == 1 and "no exporter for format 'pprof'" in r.stderr, r.stderr
    r = rtorch("trace", "import", "--plugin", "org.example.absent", SAMPLE, "--store", store)
    assert r.returncode == 1 and "no importer plugin 'org.example.absent'" in r.stderr, r.stderr
    assert FOLDED in r.stderr
    assert not list(tmp_path.glob("out.*")) and not list(tmp_path.glob(".*partial*"))


def test_truncated_and_flipped_files_never_crash_and_fail_clearly(rtorch, tmp_path):
    data = SAMPLE.read_bytes()
    store = tmp_path / "fuzz.sqlite"
    rng = random.Random(25)
    cases = [("prefix", n, data[:n]) for n in range(0, len(data), max(1, len(data) // 40))]
    for i in range(24):
        at = rng.randrange(len(data))
        mutated = bytearray(data)
        mutated[at] = rng.randrange(256)
        cases.append(("flip", at, bytes(mutated)))
    imported = failed = 0
    for kind, where, content in cases:
        f = tmp_path / "cut.folded"
        f.write_bytes(content)
        r = rtorch("trace", "import", "--plugin", FOLDED, f, "--store", store)
        assert r.returncode in (0, 1), (kind, where, r.returncode, r.stderr)
        if r.returncode == 0:
            imported += 1
            continue
        failed += 1
        message = r.stderr.strip()
        assert message.startswith(f"rtorch trace: importer {FOLDED} could not read {f} (invalid input): "), \
            (kind, where, message)
        assert message.endswith("; nothing was imported"), (kind, where, message)
        assert re.search(r"line \d+: |holds no stack", message), (kind, where, message)
        assert "crashed" not in message and "Traceback" not in message
    assert imported > 0 and failed > 0, (imported, failed)


@pytest.fixture
def crashing_env():
    if not (FIXTURES / "crashing-importer" / "plugin.json").exists():
        pytest.fail(f"build the fixture_crashing_importer target first ({FIXTURES} is missing)")
    return {"RT_PLUGIN_PATH": str(FIXTURES)}


def test_a_crashing_importer_costs_one_failed_import(rtorch, tmp_path, crashing_env):
    store = tmp_path / "s.sqlite"
    hostile = tmp_path / "hostile.crash"
    hostile.write_text("segv")
    r = rtorch("trace", "import", "--plugin", "org.test.crashing-importer", hostile, "--store", store,
               env=crashing_env)
    assert r.returncode == 1
    assert r.stderr.strip() == (f"rtorch trace: importer org.test.crashing-importer crashed (SIGSEGV) while reading "
                                f"{hostile}; nothing was imported"), r.stderr
    assert "Segmentation fault" not in r.stderr

    fine = tmp_path / "fine.crash"
    fine.write_text("crash-fixture")
    r = rtorch("trace", "import", "--plugin", "org.test.crashing-importer", fine, "--store", store, env=crashing_env)
    assert r.returncode == 0, r.stderr
    listed = rtorch("trace", "list", store)
    assert len(listed.stdout.splitlines()) == 2, listed.stdout  # only the good import is in the store


def test_detection_survives_an_importer_whose_detect_crashes(rtorch, tmp_path, crashing_env):
    f = tmp_path / "stacks.log"
    f.write_text("detect-segv;frame 3\n")  # crashes the fixture's detect, and is valid folded stacks
    r = rtorch("trace", "import", f, "--store", tmp_path / "s.sqlite", env=crashing_env)
    assert r.returncode == 0, r.stderr
    assert FOLDED in r.stdout
