"""`rtorch plugin list|check|enable|disable` against the fixture plugins (tests/plugins/fixtures/), copied
into a private plugin folder reached through RT_PLUGIN_PATH, with private settings and crash-marker folders."""
import json
import shutil

import pytest

from conftest import BUILD_DIR

FIXTURES = BUILD_DIR / "tests" / "plugins" / "fixtures"


@pytest.fixture
def plugin_env(tmp_path):
    if not (FIXTURES / "base" / "fixture.so").exists():
        pytest.fail(f"{FIXTURES} has no fixture plugins: build the test_host_plugin_manager target")
    folder = tmp_path / "plugins"
    folder.mkdir()
    env = {"RT_PLUGIN_PATH": str(folder), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "RT_PLUGIN_STATE_DIR": str(tmp_path / "state")}

    def add(name):
        shutil.copytree(FIXTURES / name, folder / name)
        return folder / name

    return folder, env, add


def test_list_shows_each_plugin_its_state_and_the_folders_searched(rtorch, plugin_env):
    folder, env, add = plugin_env
    add("base")
    add("off-by-default")
    (folder / "broken").mkdir()
    (folder / "broken" / "plugin.json").write_text('{"id": "org.test.broken", "name": "b"}')
    r = rtorch("plugin", "list", env=env)
    assert r.returncode == 0, r.stderr
    assert str(folder) in r.stdout
    lines = {line.split()[0]: line for line in r.stdout.splitlines() if line.startswith("org.") or
             line.startswith("broken")}
    assert "enabled" in lines["org.test.base"]
    assert "disabled" in lines["org.test.off-by-default"]
    assert "invalid" in lines["broken"]
    assert '"version" is missing' in r.stdout

    rows = [json.loads(line) for line in rtorch("plugin", "list", "--json", env=env).stdout.splitlines()]
    by_id = {row["id"]: row for row in rows}
    assert by_id["org.test.base"]["state"] == "found"
    assert by_id["org.test.base"]["kinds"] == "importer"


def test_disable_and_enable_are_kept_in_the_settings(rtorch, plugin_env):
    folder, env, add = plugin_env
    add("base")
    def base_row():
        rows = [json.loads(line) for line in rtorch("plugin", "list", "--json", env=env).stdout.splitlines()]
        return next(row for row in rows if row["id"] == "org.test.base")

    assert rtorch("plugin", "disable", "org.test.base", env=env).returncode == 0
    row = base_row()
    assert row["state"] == "disabled" and "disabled by the user" in row["error"]
    assert rtorch("plugin", "enable", "org.test.base", env=env).returncode == 0
    assert base_row()["state"] == "found"


def test_check_passes_a_good_plugin(rtorch, plugin_env):
    _, env, add = plugin_env
    r = rtorch("plugin", "check", add("base"), env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    for check in ("manifest", "load", "initialize", "self-test", "importer", "shutdown"):
        assert f"ok    {check}" in r.stdout
    assert "not fuzzed: no sample files" in r.stdout
    assert "all 6 checks passed" in r.stdout


@pytest.mark.parametrize("fixture, check, message", [
    ("init-fails", "initialize", "refuses to initialize"),
    ("init-crashes", "initialize", "crashed the checking process (SIGSEGV)"),
    ("abi-major", "load", "built for plugin ABI 2.0, this RustyTorch++ speaks 1.0"),
    ("newer-minor", "load", "newer than this RustyTorch++'s 1.0"),
    ("no-entry", "load", "exports no rt_plugin_entry function"),
    ("missing-dependency", "dependencies", "org.test.not-installed"),
])
def test_check_names_the_failing_check_and_why(rtorch, plugin_env, fixture, check, message):
    _, env, add = plugin_env
    r = rtorch("plugin", "check", "--json", add(fixture), env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    findings = [json.loads(line) for line in r.stdout.splitlines()]
    failed = [f for f in findings if not f["ok"]]
    assert failed and failed[0]["check"] == check, findings
    assert message in failed[0]["detail"]


def test_check_of_a_folder_without_a_manifest_says_so(rtorch, tmp_path):
    r = rtorch("plugin", "check", tmp_path)
    assert r.returncode == 1
    assert "plugin.json: cannot be read" in r.stdout


def test_check_of_a_panel_without_a_display_or_a_studio_says_how_to_get_one(rtorch, plugin_env):
    _, env, add = plugin_env
    env = dict(env, DISPLAY="")
    r = rtorch("plugin", "check", add("panel-ok"), env=env)  # the fixture panel: built in every tree
    assert r.returncode == 1
    if (BUILD_DIR / "bin" / "rtorch-studio").exists():
        assert "xvfb-run -a rtorch plugin check DIR" in r.stdout
    else:  # a tree without the studio (the ASan tree) says so first
        assert "rtorch-studio does not exist; build it" in r.stdout


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run is not installed (scripts/setup.sh installs it)")
@pytest.mark.parametrize("folder, check, message", [
    (None, None, None),
    ("panel-throws", "draw", "the fixture panel lost its histogram cache"),
    ("panel-old-sdk", "load", "built against panel SDK 0.9"),
])
def test_check_of_a_panel_draws_it_in_the_studio(rtorch, plugin_env, folder, check, message):
    _, env, add = plugin_env
    if not (BUILD_DIR / "bin" / "rtorch-studio").exists():
        pytest.skip("rtorch-studio is not built in this tree")
    path = BUILD_DIR / "plugins" / "grad-histogram" if folder is None else add(folder)
    from conftest import RTORCH, run
    r = run(["xvfb-run", "-a", RTORCH, "plugin", "check", "--json", path], env=env, timeout=300)
    findings = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    if folder is None:
        assert [f["check"] for f in findings] == ["manifest", "load", "initialize", "draw", "draw-session"]
        assert "gradient histograms" in findings[-1]["detail"]
        # Frame times follow the machine's load (other jobs share CI's cores): a draw check may miss its
        # budget, and then says so, but nothing else may fail.
        assert all(f["ok"] or "budget" in f["detail"] for f in findings), findings
        assert r.returncode == (0 if all(f["ok"] for f in findings) else 1), r.stdout + r.stderr
    else:
        assert r.returncode == 1, r.stdout + r.stderr
        failed = [f for f in findings if not f["ok"]]
        assert failed and failed[0]["check"] == check and message in failed[0]["detail"], findings


def test_check_of_an_op_plugin_runs_opcheck_on_each_op(rtorch, plugin_env):
    _, env, _ = plugin_env
    r = rtorch("plugin", "check", "--json", BUILD_DIR / "plugins" / "fused-bias-gelu", env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    checks = {f["check"]: f for f in map(json.loads, r.stdout.splitlines())}
    for name in ("schema: mutation", "schema: aliasing", "autograd registered", "gradcheck", "cpu vs cuda"):
        assert checks[f"rtx::fused_bias_gelu: {name}"]["ok"]
    assert "largest difference" in checks["rtx::fused_bias_gelu: gradcheck"]["detail"]


def test_check_of_broken_ops_names_each_lie(rtorch, plugin_env):
    _, env, _ = plugin_env
    fixture = BUILD_DIR / "tests" / "plugins" / "fixtures" / "ops-fixture"
    r = rtorch("plugin", "check", "--json", fixture, env=env, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    failed = {f["check"]: f["detail"] for f in map(json.loads, r.stdout.splitlines()) if not f["ok"]}
    assert "which its schema does not mark Tensor(a!)" in failed["rtx_test::sneaky: schema: mutation"]
    assert "does not declare it Tensor(a)" in failed["rtx_test::leaky: schema: aliasing"]
    assert "finite differences" in failed["rtx_test::wrong_grad: gradcheck"]
    assert "no CPU backward" in failed["rtx_test::no_backward: autograd registered"]
