"""Checks notebooks written by rt_notebook against Python's nbformat.

usage: nbformat_check.py FILE.ipynb...

For each file: nbformat.read(path, as_version=4) must succeed, nbformat.validate must pass, and
nbformat.writes(nb) + "\n" must equal the file's bytes (we write exactly what nbformat would).
Prints one line per problem and exits 1 if there was any.
"""
import sys

import nbformat

failures = 0
for path in sys.argv[1:]:
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        expected = nbformat.writes(nb)
        if not expected.endswith("\n"):
            expected += "\n"
        with open(path, encoding="utf-8") as f:
            actual = f.read()
        if actual != expected:
            failures += 1
            for i, (a, b) in enumerate(zip(actual, expected)):
                if a != b:
                    print(f"{path}: differs from nbformat.writes at char {i}: ours {actual[i-40:i+40]!r} "
                          f"nbformat {expected[i-40:i+40]!r}")
                    break
            else:
                print(f"{path}: length {len(actual)} != nbformat's {len(expected)}")
    except Exception as e:  # report every file, not just the first
        failures += 1
        print(f"{path}: {type(e).__name__}: {e}")
print(f"checked {len(sys.argv) - 1} files, {failures} failed")
sys.exit(1 if failures else 0)
