"""Writes notebooks with Python's nbformat for the rt_notebook tests, and what nbformat makes of them.

usage: nbformat_fixtures.py OUT_DIR

OUT_DIR/written/NAME.ipynb   files written by nbformat.write (the C++ reader/writer must round-trip them byte for byte)
OUT_DIR/foreign/NAME.ipynb   files nbformat did not write (older minors, unsplit text, transient metadata)
OUT_DIR/expected/NAME.ipynb  nbformat.writes(nbformat.read(file, as_version=4)) + "\n" for every file above; files
                             older than 4.5 go through nbformat.v4.upgrade first and their made-up cell ids are
                             replaced by "cell-<index>"
"""
import json
import math
import os
import sys

import nbformat
from nbformat import v4

out = sys.argv[1]
for sub in ("written", "foreign", "expected"):
    os.makedirs(os.path.join(out, sub), exist_ok=True)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

def tricky():
    nb = v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "version": "3.11.2", "codemirror_mode": {"name": "ipython", "version": 3}},
        "floats": [0.1, 1e-05, 0.0001, 1e16, 1e15, 123456789.123, -0.0, 2.5e-300, 1.7976931348623157e308,
                   5e-324, 1.0, 100.0, 3.141592653589793, 1e22, 1.5e-07, 12345678901234567.0, 0.5],
        "non_finite": {"inf": math.inf, "ninf": -math.inf, "nan": math.nan},
        "ints": [0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 42],
        "flags": [True, False, None],
        "empty": {"list": [], "dict": {}, "nested": [[], {}, [[]]]},
        "keys order": {"b": 1, "a": 2, "B": 3, "_": 4, "é": 5, "Z": 6, "a b": 7, "ä": 8, "\u2028": 9, "😀": 10},
        "strings": ["tab\there", "nul\x00x", "unit\x1fsep", "del\x7f", "quote\"back\\slash", "bell\x07",
                    "ls\u2028ps\u2029nel\x85", "emoji 😀 and 中文", "cr\rlf\n", "formfeed\x0c", "/slash"],
        "unknown_tool": {"anything": {"goes": ["here", 1, 2.0]}},
    }
    md = v4.new_markdown_cell("# Title ünïcödé\n\nSome *markdown* with a ![pic](attachment:pic.png)\n")
    md.attachments = {"pic.png": {"image/png": PNG, "text/plain": "a\nb\n"}}
    md.metadata = {"tags": ["intro"], "jp-MarkdownHeadingCollapsed": True}
    code = v4.new_code_cell(
        "import time\nfor i in range(3):\n    print(i, end='\\r')\n\ttabs\rcr\r\nwin\x0cff\x0bvt\x1cfs\u2028ls\x85nel\nlast line no newline",
        execution_count=7)
    code.outputs = [
        v4.new_output("stream", name="stdout", text="0\r1\r2\rdone\nsecond line\n"),
        v4.new_output("stream", name="stderr", text="warning: careful\n"),
        v4.new_output("execute_result", execution_count=7,
                      data={"text/plain": "[1, 2, 3]\nmore", "text/html": "<b>bold</b>\n<i>it</i>",
                            "application/json": {"a": [1, 2.5, "x\ny"], "b": None},
                            "application/vnd.custom+json": {"k": 1}},
                      metadata={"isolated": True}),
        v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>",
                                            "image/svg+xml": "<svg>\n<rect/>\n</svg>\n",
                                            "application/javascript": "console.log(1);\nconsole.log(2);"},
                      metadata={"image/png": {"width": 640, "height": 480}}),
        v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                      traceback=["\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
                                 "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]),
    ]
    code.metadata = {"scrolled": True, "collapsed": False, "tags": []}
    empty_code = v4.new_code_cell("")
    raw = v4.new_raw_cell("raw text\n\n  indented\n", metadata={"format": "text/x-rst"})
    blank_lines = v4.new_code_cell("\n\n\nx\n\n")
    nb.cells = [md, code, empty_code, raw, blank_lines]
    for i, cell in enumerate(nb.cells):
        cell.id = ["intro-md", "code_7", "a" * 64, "raw-1", "Zz-_09"][i]
    return nb

def minimal():
    nb = v4.new_notebook()
    nb.cells = [v4.new_code_cell("1 + 1")]
    nb.cells[0].id = "12345678"
    return nb

def new_jupyterlab_style():
    nb = v4.new_notebook(metadata={"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                                  "name": "python3"}})
    nb.cells = [v4.new_markdown_cell(""), v4.new_code_cell("print('hi')\n")]
    nb.cells[0].id = "0b1c2d3e"
    nb.cells[1].id = "f00dcafe"
    return nb

written = {"tricky": tricky(), "minimal": minimal(), "jupyterlab_style": new_jupyterlab_style(),
           "empty": v4.new_notebook()}
for name, nb in written.items():
    nbformat.write(nb, os.path.join(out, "written", name + ".ipynb"))

def dump(d, path, **kw):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(d, f, **kw)

base_cells = [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Old\n", "notebook"]},
    {"cell_type": "code", "execution_count": 1, "metadata": {"trusted": True, "collapsed": True},
     "outputs": [{"name": "stdout", "output_type": "stream", "text": ["a\n", "b\n"]},
                 {"data": {"text/plain": ["2"], "image/png": ["iVBOR\n", "w0KG\n"]}, "execution_count": 1,
                  "metadata": {}, "output_type": "execute_result"}],
     "source": "x = 1\nx + 1"},
    {"cell_type": "raw", "metadata": {}, "source": []},
]
for minor in (0, 4):
    dump({"cells": base_cells, "metadata": {"orig_nbformat": 3, "signature": "sha256:abc", "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": minor},
         os.path.join(out, "foreign", f"v4_{minor}.ipynb"), indent=2)
# A 4.5 file from another writer: unsorted keys, indent 2, unsplit text, ASCII escapes, transient metadata.
foreign45 = {"nbformat_minor": 5, "nbformat": 4,
             "metadata": {"zeta": 1, "alpha": "\u00e9", "orig_nbformat_minor": 4},
             "cells": [{"source": "a = 'é'\nb = 2\n", "outputs": [{"output_type": "stream", "name": "stdout", "text": "x\ry\n"}],
                        "metadata": {"trusted": False}, "id": "keep-me", "execution_count": None, "cell_type": "code"}]}
dump(foreign45, os.path.join(out, "foreign", "other_writer.ipynb"), indent=2, ensure_ascii=True)

for sub in ("written", "foreign"):
    for name in sorted(os.listdir(os.path.join(out, sub))):
        path = os.path.join(out, sub, name)
        original = json.load(open(path, encoding="utf-8"))
        nb = nbformat.read(path, as_version=4)
        if original.get("nbformat_minor", 0) < 5:
            # nbformat.read keeps 4.0-4.4 as they are; the studio upgrades them as nbformat.v4.upgrade does.
            nb = v4.upgrade(nb, from_version=4, from_minor=original.get("nbformat_minor", 0))
            for i, cell in enumerate(nb.cells):
                cell.id = f"cell-{i}"
        text = nbformat.writes(nb)
        if not text.endswith("\n"):
            text += "\n"
        with open(os.path.join(out, "expected", name), "w", encoding="utf-8") as f:
            f.write(text)
