"""Compares gpu_bench's and torch_gpu_bench.py's JSON and prints the markdown table of issue 7's GPU targets.

    python3 bench/gpu/gpu_table.py --ours results-ours.json --torch results-torch.json --out table.md
    python3 bench/gpu/gpu_table.py --pending "<why there is no GPU>" --out table.md   # the table without figures

Columns: op, shape, RustyTorch++, PyTorch, ratio (RustyTorch++ time / PyTorch time, lower is better),
target, met. A missing side reads "pending: no GPU" (with --pending) or "not run"; a result over
its error bound reads WRONG and never meets its target. The table (ready for bench/RESULTS.md) is
printed and written to --out. Exit status 0, or 2 when a JSON file exists but cannot be read.
"""
import argparse
import datetime
import json
import os
import sys

# id -> (op, shape, target kind); the ids, ops and shapes of gpu_bench.cpp and torch_gpu_bench.py.
ROWS = [
    ("copy_f32", "device copy (copy_)", "[268435456] f32", "reference"),
    ("add_f32", "add", "[268435456] f32", "bandwidth"),
    ("softmax_f32_16384x4096", "softmax (dim -1)", "[16384, 4096] f32", "time"),
    ("softmax_f32_4096x32768", "softmax (dim -1)", "[4096, 32768] f32", "time"),
    ("layer_norm_f32_16384x4096", "layer_norm (weight, bias)", "[16384, 4096] f32", "time"),
    ("matmul_f32", "matmul f32 (TF32 off)", "4096 x 4096 x 4096", "flops"),
    ("matmul_tf32", "matmul f32 (TF32 on)", "4096 x 4096 x 4096", "flops"),
    ("matmul_bf16", "matmul bf16", "4096 x 4096 x 4096", "flops"),
    ("mlp_step_small", "MLP training step (Adam)", "batch 128, 784-512-512-10", "time"),
    ("mlp_step_large", "MLP training step (Adam)", "batch 4096, 784-4096-4096-10", "time"),
    ("mlp_step_large_autocast_bf16", "MLP training step (Adam, autocast bfloat16)", "batch 4096, 784-4096-4096-10",
     "extra"),
    ("softmax_f32_262144x128", "softmax (dim -1), attention rows", "[262144, 128] f32", "extra"),
    ("layer_norm_f32_65536x768", "layer_norm (weight, bias), d_model 768", "[65536, 768] f32", "extra"),
]
TARGETS = {
    "reference": "— (device-copy bandwidth)",
    "bandwidth": ">= 85% of device-copy bandwidth",
    "time": "<= PyTorch's time",
    "flops": ">= 95% of PyTorch's TFLOP/s",
    "extra": "<= PyTorch's time (not an issue-7 target)",
}


def load(path):
    """The run's JSON as {"meta": {...}, "by_id": {id: result}}, or None when the file is absent."""
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        data = json.load(f)
    return {"meta": data, "by_id": {r["id"]: r for r in data.get("results", [])}}


def cell(r, missing):
    if r is None:
        return missing
    if "error" in r:
        return f"error: {r['error'][:80]}"
    text = f"{r['median_ms']:.3f} ms"
    if "gb_per_s" in r:
        text += f" ({r['gb_per_s']:.0f} GB/s)"
    if "tflop_per_s" in r:
        text += f" ({r['tflop_per_s']:.1f} TFLOP/s)"
    if not r.get("ok", False):
        err = r.get("rel_err")  # JSON has no NaN: a NaN error arrives as null
        err = float("nan") if err is None else err
        text += f" WRONG (rel err {err:.1e} > {r.get('err_bound') or 0:.0e})"
    return text


def cuda_label(version):
    """ "13.0" (PyTorch) -> "CUDA 13.0"; ours already says "CUDA 13.0 (runtime), driver 13.0"."""
    version = str(version)
    return version if version.startswith("CUDA") else f"CUDA {version}"


def usable(r):
    return r is not None and "error" not in r and r.get("ok", False)


def verdict(kind, ours, torch, copy_bw):
    if kind == "reference":
        return "—"
    if ours is not None and ("error" in ours or not ours.get("ok", False)):
        return "no (wrong or failed)"
    if not usable(ours):
        return "pending"
    if kind == "bandwidth":
        if not copy_bw:
            return "pending (no copy figure)"
        share = ours["gb_per_s"] / copy_bw
        return f"{'yes' if share >= 0.85 else 'no'} ({share:.0%} of {copy_bw:.0f} GB/s)"
    if not usable(torch):
        return "pending (no PyTorch figure)"
    if kind in ("time", "extra"):
        return "yes" if ours["median_ms"] <= torch["median_ms"] else "no"
    share = ours["tflop_per_s"] / torch["tflop_per_s"]
    return f"{'yes' if share >= 0.95 else 'no'} ({share:.0%})"


def make_table(ours, torch, pending):
    o = ours["by_id"] if ours else {}
    t = torch["by_id"] if torch else {}
    missing = "pending: no GPU" if pending else "not run"
    copies = [r["gb_per_s"] for r in (o.get("copy_f32"), t.get("copy_f32")) if usable(r)]
    copy_bw = max(copies) if copies else None
    lines = []
    device = (ours or torch or {}).get("meta", {}).get("device")
    when = datetime.date.today().isoformat()
    if device:
        libs = ", ".join(f"{m['meta']['library']} ({cuda_label(m['meta'].get('cuda', '?'))})" for m in (ours, torch) if m)
        lines.append(f"GPU: {device}, {when}; {libs}. Medians of 20-50 runs timed with CUDA events after warm-up.")
    else:
        lines.append(f"GPU figures pending ({when}): " + (f"no GPU ({pending})." if pending else "no results."))
    lines.append("")
    lines.append("| op | shape | RustyTorch++ | PyTorch | ratio | target | met |")
    lines.append("|---|---|---|---|---|---|---|")
    for wid, op, shape, kind in ROWS:
        ro, rt = o.get(wid), t.get(wid)
        shapes = {r["shape"] for r in (ro, rt) if r and "shape" in r}
        if len(shapes) > 1:
            shape = " / ".join(sorted(shapes)) + " (MISMATCH)"
        ratio = "—"
        if usable(ro) and usable(rt):
            ratio = f"{ro['median_ms'] / rt['median_ms']:.2f}"
        met = verdict(kind, ro, rt, copy_bw)
        if len(shapes) > 1:
            met = "no (shapes differ)"
        lines.append(f"| {op} | {shape} | {cell(ro, missing)} | {cell(rt, missing)} | {ratio} | {TARGETS[kind]} | {met} |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ours", help="gpu_bench --json output")
    p.add_argument("--torch", help="torch_gpu_bench.py --json output")
    p.add_argument("--pending", help="why no GPU could be used: cells say 'pending: no GPU', the header why")
    p.add_argument("--out", help="write the markdown table here too")
    args = p.parse_args()
    try:
        ours, torch = load(args.ours), load(args.torch)
    except (OSError, ValueError, KeyError) as e:
        print(f"gpu_table: cannot read the results: {e}", file=sys.stderr)
        return 2
    table = make_table(ours, torch, args.pending)
    print(table, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
