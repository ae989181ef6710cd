"""Catch2 test names reach ctest through catch_discover_tests, which passes each name to CMake as a list element:
a ';' in a TEST_CASE name splits it into two ctest tests whose filters match nothing, and Catch2 reports "No tests
ran" with exit status 0, so the test silently never runs. This check keeps such names out of the tree."""
import os
import re
from pathlib import Path

ROOT = Path(os.environ.get("RT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
NAME = re.compile(r'\b(?:TEST_CASE|SCENARIO|TEMPLATE_TEST_CASE)\(\s*"((?:[^"\\]|\\.)*)"')


def catch_test_names():
    for path in sorted((ROOT / "tests").rglob("*.cpp")):
        for name in NAME.findall(path.read_text(errors="replace")):
            yield path.relative_to(ROOT).as_posix(), name


def test_no_catch2_test_name_holds_a_semicolon():
    bad = [f"{path}: {name}" for path, name in catch_test_names() if ";" in name]
    assert not bad, ("these tests never run under ctest (a ';' splits the name); use ',' instead:\n  " +
                     "\n  ".join(bad))


def test_the_scan_finds_the_tests():
    assert sum(1 for _ in catch_test_names()) > 500
