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
    assert rtorch("plugin", "disable", "org.test.base", env=env).returncode == 0
    row = json.loads(rtorch("plugin", "list", "--json", env=env).stdout)
    assert row["state"] == "disabled" and "disabled by the user" in row["error"]
    assert rtorch("plugin", "enable", "org.test.base", env=env).returncode == 0
    assert json.loads(rtorch("plugin", "list", "--json", env=env).stdout)["state"] == "found"


def test_check_passes_a_good_plugin(rtorch, plugin_env):
    _, env, add = plugin_env
    r = rtorch("plugin", "check", add("base"), env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    for check in ("manifest", "load", "initialize", "self-test", "shutdown"):
        assert f"ok    {check}" in r.stdout
    assert "all 5 checks passed" in r.stdout


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
