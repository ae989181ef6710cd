#!/usr/bin/python3
"""Studio benchmarks: cold start to a shown window, per-cell overhead of trivial cells, idle memory.

    bench/studio/studio_bench.py [--build build] [--runs 5]

Prints a table against the targets of issue 5 (<= 1 s to the first frame, <= 5 ms per trivial cell,
<= 250 MB resident when idle with a notebook open). Without a display it re-runs itself under xvfb-run.
  cold start      rtorch-studio --exit-after-shown NB: the studio prints the time from its process start
                  (/proc/self/stat) to the first painted frame; the median of --runs launches, and the first.
  per-cell        rtorch-studio --execute on notebooks of 1 and 1 + N `pass` cells; (t(1+N) - t(1)) / N, medians
                  of --runs each, so interpreter start-up and file I/O cancel out.
  Run All         build/bin/studio_gui_bench: the same per-cell figure through the window (Run All action, kernel
                  signals, outputs drawn in cell widgets), for `pass`, `print` and an expression cell.
  idle memory     rtorch-studio --exit-after-shown --idle-ms 2000 NB: VmRSS once the kernel has started and
                  stayed idle for 2 s with the notebook open; and with --run-all, once the whole quickstart ran
                  (rustytorch, matplotlib and the trained model loaded).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOK = os.path.join(ROOT, "samples", "notebooks", "quickstart.ipynb")


def studio_env(scratch):
    env = dict(os.environ, OMP_NUM_THREADS="2", XDG_CONFIG_HOME=os.path.join(scratch, "config"),
               RT_STUDIO_RECOVERY_DIR=os.path.join(scratch, "recovery"))
    return env


def cold_start(studio, runs, scratch):
    inside, wall = [], []
    for _ in range(runs):
        start = time.perf_counter()
        p = subprocess.Popen([studio, "--exit-after-shown", NOTEBOOK], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=studio_env(scratch))
        first = None
        for line in p.stdout:
            m = re.search(r"first frame after ([\d.]+) ms", line)
            if m:
                first = float(m.group(1))
                wall.append((time.perf_counter() - start) * 1e3)
                break
        p.communicate(timeout=60)
        if first is None:
            sys.exit(f"cold start: no 'first frame' line (exit {p.returncode})")
        inside.append(first)
    return inside, wall


def write_pass_notebook(path, cells):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook
    nbformat.write(new_notebook(cells=[new_code_cell("pass") for _ in range(cells)]), path)


def per_cell(studio, runs, cells, scratch):
    def timed(n):
        nb, out = os.path.join(scratch, f"pass{n}.ipynb"), os.path.join(scratch, f"pass{n}-out.ipynb")
        write_pass_notebook(nb, n)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            r = subprocess.run([studio, "--execute", nb, "--output", out], capture_output=True, text=True,
                               env=studio_env(scratch))
            times.append(time.perf_counter() - start)
            if r.returncode != 0:
                sys.exit(f"per-cell: --execute failed: {r.stderr}")
        return statistics.median(times)
    one, many = timed(1), timed(1 + cells)
    return (many - one) / cells * 1e3, one


def idle_memory(studio, scratch, run_all=False):
    extra = ["--run-all"] if run_all else []
    r = subprocess.run([studio, "--exit-after-shown", "--idle-ms", "2000", *extra, NOTEBOOK], capture_output=True,
                       text=True, env=studio_env(scratch), timeout=300)
    m = re.search(r"idle resident memory ([\d.]+) MiB", r.stdout)
    if not m:
        sys.exit(f"idle memory: no RSS line (exit {r.returncode}): {r.stdout} {r.stderr}")
    return float(m.group(1))


def run_all_overhead(gui_bench, runs, cells, scratch):
    if not os.access(gui_bench, os.X_OK):
        sys.exit(f"{gui_bench} not found: build it first (scripts/build.sh)")
    r = subprocess.run([gui_bench, "--cells", str(cells), "--runs", str(runs)], capture_output=True, text=True,
                       env=studio_env(scratch), timeout=600)
    if r.returncode != 0:
        sys.exit(f"studio_gui_bench failed (exit {r.returncode}): {r.stderr}")
    rows = []
    for line in r.stdout.splitlines():
        m = re.match(r"(.+?)\s{2,}[\d.]+\s+[\d.]+\s+([\d.]+)$", line)
        if m:
            rows.append((m.group(1).split(" (")[0].strip(), float(m.group(2))))
    if not rows:
        sys.exit(f"studio_gui_bench printed no figures: {r.stdout}")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="build tree holding bin/rtorch-studio")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cells", type=int, default=200, help="trivial cells for the per-cell figure")
    args = parser.parse_args()
    studio = os.path.join(os.path.abspath(args.build), "bin", "rtorch-studio")
    if not os.access(studio, os.X_OK):
        sys.exit(f"{studio} not found: build it first (scripts/build.sh)")
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        if not shutil.which("xvfb-run"):
            sys.exit("no display and no xvfb-run: install xvfb (scripts/setup.sh) or run on a desktop")
        os.execvp("xvfb-run", ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", sys.executable, *sys.argv])

    with tempfile.TemporaryDirectory(prefix="rt-studio-bench-") as scratch:
        inside, wall = cold_start(studio, args.runs, scratch)
        overhead_ms, one_cell_s = per_cell(studio, args.runs, args.cells, scratch)
        rss = idle_memory(studio, scratch)
        rss_after_run = idle_memory(studio, scratch, run_all=True)
        gui = run_all_overhead(os.path.join(os.path.dirname(studio), "studio_gui_bench"), args.runs, args.cells,
                               scratch)

    rows = [
        ("cold start to first frame (median)", f"{statistics.median(inside):.0f} ms", "<= 1000 ms",
         statistics.median(inside) <= 1000),
        ("cold start, first launch", f"{inside[0]:.0f} ms", "", None),
        ("cold start, spawn to frame seen by the parent (median)", f"{statistics.median(wall):.0f} ms", "", None),
        (f"per-cell overhead ({args.cells} `pass` cells via --execute)", f"{overhead_ms:.2f} ms", "<= 5 ms",
         overhead_ms <= 5),
        ("--execute of a 1-cell notebook (start, run, write, exit)", f"{one_cell_s * 1e3:.0f} ms", "", None),
        ("idle resident memory, quickstart open, kernel started", f"{rss:.0f} MiB", "<= 250 MB",
         rss * 1.048576 <= 250),
        ("idle resident memory after running the whole quickstart", f"{rss_after_run:.0f} MiB", "<= 250 MB",
         rss_after_run * 1.048576 <= 250),
    ]
    for kind, ms in gui:
        rows.append((f"per-cell overhead in the window, Run All of {args.cells} `{kind}` cells", f"{ms:.2f} ms",
                     "<= 5 ms", ms <= 5))
    width = max(len(r[0]) for r in rows)
    print(f"{'studio benchmark':<{width}}  {'value':>10}  {'target':>11}  met")
    for name, value, target, ok in rows:
        mark = "" if ok is None else ("yes" if ok else "NO")
        print(f"{name:<{width}}  {value:>10}  {target:>11}  {mark}")
    print(f"({args.runs} runs each, OMP_NUM_THREADS=2, {os.cpu_count()} cores, display {os.environ.get('DISPLAY')})")


if __name__ == "__main__":
    main()
