"""docs/plugins.md's walkthrough, as a new user follows it: its plugin.json and my_ops.cpp written to an empty
folder, compiled with the page's command against plugins/include only, and its Python run in a fresh process."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("RT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("RT_BUILD_DIR", SOURCE_DIR / "build"))


def blocks(language):
    text = (SOURCE_DIR / "docs" / "plugins.md").read_text()
    found = re.findall(r"^( *)```" + language + r"\n(.*?)^\1```", text, flags=re.S | re.M)
    return ["\n".join(line[len(indent):] for line in body.splitlines()) + "\n" for indent, body in found]


def test_the_walkthrough_builds_loads_and_runs(tmp_path):
    folder = tmp_path / "my-ops"
    folder.mkdir()
    (folder / "plugin.json").write_text(blocks("json")[0])
    (folder / "my_ops.cpp").write_text(blocks("cpp")[0])
    command = blocks("sh")[0].replace("\\\n", " ").replace('"$RT_SOURCE/plugins/include"',
                                                           shlex.quote(str(SOURCE_DIR / "plugins" / "include")))
    build = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, f"{command}\n{build.stderr}"
    env = dict(os.environ, PYTHONPATH=str(BUILD_DIR / "python"))
    run = subprocess.run([sys.executable, "-c", blocks("python")[0]], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "scaled_add(Tensor x, Tensor y, float alpha=1.0) -> Tensor"
