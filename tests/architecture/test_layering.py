"""Dependencies point one way (docs/architecture.md): a file may include headers of its own layer and
the layers below it, never one above.

    core (rt/dtype.h, rt/device.h, rt/scalar.h, rt/error.h, rt/shape.h) < kernels/ < engine/ < profiler/ < remote/
        < plugins/host/ < visualizers/ < python/ < app/          (tests/, bench/, samples/ may include anything)

The plugin ABI (plugins/include/) includes nothing of ours; the plugins shipped in plugins/<name>/ may include
only it and their own files (test_plugins_see_only_the_plugin_abi).

Every `#include "..."` of every C/C++/CUDA source is resolved the way the build resolves it (the
including file's folder first, then the include roots of its own layer and those below, then the
others) and its layer compared with the includer's. KNOWN_EXCEPTIONS lists the inclusions that break
the rule today, each with its reason; an entry that no longer occurs fails too, so the list only
shrinks.
"""
import os
import re
import sys
from pathlib import Path

ROOT = Path(os.environ.get("RT_SOURCE_DIR", Path(__file__).resolve().parents[2]))

CORE_HEADERS = {f"engine/include/rt/{name}" for name in ("dtype.h", "device.h", "scalar.h", "error.h", "export.h", "shape.h")}
# (name, rank, folders): a file belongs to the first layer whose folder holds it.
LAYERS = [
    ("kernels", 1, ["kernels"]),
    ("engine", 2, ["engine"]),
    ("profiler", 3, ["profiler"]),
    ("remote", 3.5, ["remote"]),
    ("plugin_host", 3.6, ["plugins/host", "plugins/include"]),
    ("visualizers", 4, ["visualizers"]),
    ("python", 5, ["python"]),
    ("app", 6, ["app"]),
    ("plugins", 6, ["plugins"]),
]
UNRESTRICTED = ("tests", "bench", "samples")
# Include roots per layer, as the CMakeLists give them to that layer's targets.
INCLUDE_ROOTS = {
    "kernels": ["kernels"],
    "engine": ["engine/include", "engine/src", "engine/dist/include", "engine/dist/src"],
    "profiler": ["profiler/include", "profiler/src"],
    "remote": ["remote/include", "remote/src"],
    "plugin_host": ["plugins/host/include", "plugins/host/src", "plugins/include"],
    "visualizers": ["visualizers/include", "visualizers/src"],
    "python": ["python/src"],
    "app": ["app/studio", "app/common", "app/cli", "app"],
    "plugins": ["plugins/include"],
}
SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# (includer, included) -> why it is still there; remove an entry when its work lands. Empty since the
# CPU kernels took plain views (kernels/cpu/tensor_view.h): keep it so.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


def layer_of(rel):
    if rel in CORE_HEADERS:
        return ("core", 0)
    top = rel.split("/", 1)[0]
    if top in UNRESTRICTED:
        return None
    for name, rank, folders in LAYERS:
        if any(rel == f or rel.startswith(f + "/") for f in folders):
            return (name, rank)
    return None


def search_order(layer_name):
    own = INCLUDE_ROOTS.get(layer_name, [])
    rank = {name: r for name, r, _ in LAYERS}
    below = [root for name, roots in INCLUDE_ROOTS.items()
             if name != layer_name and rank[name] < rank.get(layer_name, 99) for root in roots]
    above = [root for name, roots in INCLUDE_ROOTS.items()
             if name != layer_name and rank[name] >= rank.get(layer_name, 99) for root in roots]
    return own + below + above


def resolve(includer, name, layer_name):
    candidates = [ROOT / includer.parent / name] + [ROOT / root / name for root in search_order(layer_name)]
    for c in candidates:
        if c.is_file():
            try:
                return c.resolve().relative_to(ROOT.resolve()).as_posix()
            except ValueError:
                return None
    return None  # a system or generated header


def sources():
    for top in [f for _, _, folders in LAYERS for f in folders]:
        base = ROOT / top
        if not base.is_dir():
            continue
        for path in base.rglob("*"):
            if path.suffix in SOURCE_SUFFIXES and path.is_file():
                yield path.relative_to(ROOT)


def inclusions():
    for rel in sources():
        own = layer_of(rel.as_posix())
        if own is None:
            continue
        text = (ROOT / rel).read_text(errors="replace")
        for name in INCLUDE.findall(text):
            target = resolve(rel, name, own[0])
            if target is None:
                continue
            yield rel.as_posix(), own, target, layer_of(target)


def upward_inclusions():
    found = {}
    for includer, own, target, theirs in inclusions():
        if theirs is not None and theirs[1] > own[1]:
            found[(includer, target)] = f"{includer} ({own[0]}) includes {target} ({theirs[0]})"
    return found


def test_the_tree_has_every_layer():
    names = {layer_of(p.as_posix())[0] for p in sources() if layer_of(p.as_posix())}
    assert {"kernels", "engine", "profiler", "visualizers", "app"} <= names


def test_no_file_includes_a_header_from_a_layer_above_its_own():
    found = upward_inclusions()
    new = [text for key, text in sorted(found.items()) if key not in KNOWN_EXCEPTIONS]
    assert not new, ("includes that point up the layers (docs/architecture.md); move the code down or the "
                     "dependency up:\n  " + "\n  ".join(new))


def test_every_known_exception_still_occurs():
    found = upward_inclusions()
    gone = [f"{a} -> {b}" for (a, b) in KNOWN_EXCEPTIONS if (a, b) not in found]
    assert not gone, "fixed, so remove them from KNOWN_EXCEPTIONS:\n  " + "\n  ".join(gone)


def exported_headers():
    """Headers whose declarations are a shared library's API (rt/export.h): the engine's and the
    profiler's public headers, the distributed engine's (rt_dist) and the CPU kernels' (compiled into
    rt_engine)."""
    for folder in ("engine/include/rt", "engine/dist/include/rt", "profiler/include/rt", "kernels/cpu"):
        for path in sorted((ROOT / folder).rglob("*.h")):
            rel = path.relative_to(ROOT).as_posix()
            # kernels/cpu/isa/: the per-level sources' own headers, private to their objects (reached
            # only through kernels/cpu/isa_kernels.h's tables; Note [CPU capability dispatch]).
            if rel not in ("engine/include/rt/export.h", "engine/include/rt/rt.h") and \
                    not rel.startswith("kernels/cpu/isa/"):
                yield rel, path.read_text(errors="replace")


def test_every_public_header_exports_its_declarations():
    # rt_engine and rt_profiler hide everything else (-fvisibility=hidden), so a public header
    # without its region would compile and then fail to link in a plugin or a test.
    wrong = []
    for rel, text in exported_headers():
        code = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("//")]
        if '#include "rt/export.h"' not in code or code.count("RT_API_BEGIN") != 1 or code[-1] != "RT_API_END":
            wrong.append(rel)
    assert not wrong, ('open the declarations with RT_API_BEGIN (after the includes, with #include "rt/export.h") '
                       "and close them with RT_API_END on the last line:\n  " + "\n  ".join(wrong))


def test_the_checker_sees_an_upward_include(tmp_path, monkeypatch):
    # The rule itself: an engine file that includes a profiler header is reported.
    fake = tmp_path / "repo"
    (fake / "engine/src").mkdir(parents=True)
    (fake / "profiler/include/rt/prof").mkdir(parents=True)
    (fake / "kernels").mkdir()
    (fake / "visualizers").mkdir()
    (fake / "app").mkdir()
    (fake / "profiler/include/rt/prof/session.h").write_text("#pragma once\n")
    (fake / "engine/src/op.cpp").write_text('#include "rt/prof/session.h"\n#include <vector>\n')
    (fake / "profiler/include/rt/prof/ok.h").write_text('#include "session.h"\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", fake)
    found = upward_inclusions()
    assert list(found) == [("engine/src/op.cpp", "profiler/include/rt/prof/session.h")]


def test_the_studio_shell_knows_panels_only_through_their_interface():
    # app/studio/shell/ (rt_studio_shell) is the window and its panel registry; the panels register themselves
    # through shell/panel.h and the executable links them (app/studio/CMakeLists.txt).
    panel_folders = ("app/studio/panels/", "app/studio/viz_panels/", "app/studio/debugger/", "app/studio/attach/")
    found = [f"{includer} includes {target}" for includer, _, target, _ in inclusions()
             if includer.startswith("app/studio/shell/") and target.startswith(panel_folders)]
    assert not found, "the shell reaches into panels:\n  " + "\n  ".join(found)



def test_plugins_see_only_the_plugin_abi():
    # A shipped plugin is built the way a user's is: against plugins/include/ (the C ABI and the SDK) alone.
    found = [f"{includer} includes {target}" for includer, own, target, _ in inclusions()
             if own[0] == "plugins" and not target.startswith("plugins/include/")
             and not target.startswith("/".join(includer.split("/")[:2]) + "/")]
    assert not found, "a plugin reaches past the plugin ABI (docs/plugins.md):\n  " + "\n  ".join(found)
