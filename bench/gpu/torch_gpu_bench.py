"""PyTorch's side of bench/gpu: the workloads of gpu_bench.cpp, same shapes and timing method, on CUDA.

    python3 bench/gpu/torch_gpu_bench.py --json results-torch.json      # every workload
    python3 bench/gpu/torch_gpu_bench.py --only add_f32 matmul_bf16     # some, printed to stdout

Method (as gpu_bench): random inputs, warm-up runs, then each run between its own pair of CUDA events,
all runs queued back to back, one wait at the end; median, min and max in milliseconds. Every result is
checked against a float64 CPU reference on a slice with the same bounds as gpu_bench. Defaults are
PyTorch's (Adam without fused/foreach overrides, TF32 off unless the workload turns it on).
Exit status: 0 all ran and passed their checks, 1 a workload failed, 77 no CUDA device or no PyTorch.
"""
import argparse
import contextlib
import json
import math
import os
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:  # the table then says PyTorch is missing
    print(f"skipped: PyTorch is not importable ({e})")
    sys.exit(77)

GPU = "cuda"
STREAM_N = 1 << 28  # 2^28 float32 = 1 GiB per tensor


def time_cuda(fn, warmup, runs):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    ends[-1].synchronize()
    ms = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    n = len(ms)
    median = ms[n // 2] if n % 2 else 0.5 * (ms[n // 2 - 1] + ms[n // 2])
    return {"median_ms": median, "min_ms": ms[0], "max_ms": ms[-1], "runs": runs}


def rel_err(out, ref):
    o, r = out.detach().cpu().double(), ref.detach().cpu().double()
    norm = r.norm().item()
    diff = (o - r).norm().item()
    return diff / norm if norm > 0 else diff


def result(op, shape, timing, bytes_=0.0, flops=0.0, err=0.0, bound=0.0):
    r = {"op": op, "shape": shape, **timing}
    if bytes_:
        r["gb_per_s"] = bytes_ / (timing["median_ms"] * 1e-3) / 1e9
    if flops:
        r["tflop_per_s"] = flops / (timing["median_ms"] * 1e-3) / 1e12
    if bound:
        r.update(rel_err=err, err_bound=bound, ok=math.isfinite(err) and err <= bound)
    else:
        r["ok"] = math.isfinite(err)
    return r


def copy_f32():
    src = torch.randn(STREAM_N, device=GPU)
    dst = torch.empty_like(src)
    t = time_cuda(lambda: dst.copy_(src), 3, 20)
    k = 65536
    return result("device copy (copy_)", "[268435456] f32", t, bytes_=2.0 * STREAM_N * 4,
                  err=rel_err(dst[-k:], src[-k:]), bound=1e-12)


def add_f32():
    a, b = torch.randn(STREAM_N, device=GPU), torch.randn(STREAM_N, device=GPU)
    out = {}
    t = time_cuda(lambda: out.__setitem__("c", a + b), 3, 20)
    k = 65536
    return result("add", "[268435456] f32", t, bytes_=3.0 * STREAM_N * 4,
                  err=rel_err(out["c"][-k:], a[-k:].cpu().double() + b[-k:].cpu().double()), bound=1e-6)


def softmax_f32(rows, cols):
    x = torch.randn(rows, cols, device=GPU) * 3.0
    out = {}
    t = time_cuda(lambda: out.__setitem__("y", torch.softmax(x, -1)), 5, 30)
    return result("softmax (dim -1)", f"[{rows}, {cols}] f32", t, bytes_=2.0 * rows * cols * 4,
                  err=rel_err(out["y"][-64:], torch.softmax(x[-64:].cpu().double(), -1)), bound=1e-5)


def layer_norm_f32(rows, cols):
    x = torch.randn(rows, cols, device=GPU) + 0.5
    w, b = torch.randn(cols, device=GPU), torch.randn(cols, device=GPU)
    out = {}
    t = time_cuda(lambda: out.__setitem__("y", F.layer_norm(x, (cols,), w, b, 1e-5)), 5, 30)
    ref = F.layer_norm(x[-64:].cpu().double(), (cols,), w.cpu().double(), b.cpu().double(), 1e-5)
    return result("layer_norm (weight, bias)", f"[{rows}, {cols}] f32", t, bytes_=2.0 * rows * cols * 4,
                  err=rel_err(out["y"][-64:], ref), bound=1e-5)


@contextlib.contextmanager
def tf32_matmul(allow):
    """TF32 for float32 matrix products on or off: torch >= 2.9's fp32_precision, else allow_tf32."""
    m = torch.backends.cuda.matmul
    new_api = hasattr(m, "fp32_precision")
    saved = m.fp32_precision if new_api else m.allow_tf32
    if new_api:
        m.fp32_precision = "tf32" if allow else "ieee"
    else:
        m.allow_tf32 = allow
    try:
        yield
    finally:
        if new_api:
            m.fp32_precision = saved
        else:
            m.allow_tf32 = saved


def matmul(dtype, tf32, label, bound):
    n = 4096
    a = torch.randn(n, n, device=GPU).to(dtype)
    b = torch.randn(n, n, device=GPU).to(dtype)
    out = {}
    with tf32_matmul(tf32):
        t = time_cuda(lambda: out.__setitem__("c", a @ b), 5, 30)
    ref = a[-64:].cpu().double() @ b.cpu().double()
    return result(label, "4096 x 4096 x 4096", t, flops=2.0 * n ** 3, err=rel_err(out["c"][-64:], ref), bound=bound)


def mlp_step(sizes, batch, runs, autocast=None):
    torch.manual_seed(0)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).to(GPU)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(batch, sizes[0], device=GPU)
    y = torch.randint(0, sizes[-1], (batch,), device=GPU)
    out = {}

    def step():
        opt.zero_grad()
        with torch.autocast("cuda", dtype=autocast) if autocast else contextlib.nullcontext():
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        out["loss"] = loss

    t = time_cuda(step, 5, runs)
    shape = f"batch {batch}, " + "-".join(str(s) for s in sizes)
    op = f"MLP training step (Adam, autocast {str(autocast).split('.')[-1]})" if autocast else "MLP training step (Adam)"
    return result(op, shape, t, err=0.0 if math.isfinite(out["loss"].item()) else math.nan)


WORKLOADS = {
    "copy_f32": copy_f32,
    "add_f32": add_f32,
    "softmax_f32_16384x4096": lambda: softmax_f32(16384, 4096),
    "softmax_f32_4096x32768": lambda: softmax_f32(4096, 32768),
    "layer_norm_f32_16384x4096": lambda: layer_norm_f32(16384, 4096),
    "matmul_f32": lambda: matmul(torch.float32, False, "matmul f32 (TF32 off)", 1e-4),
    "matmul_tf32": lambda: matmul(torch.float32, True, "matmul f32 (TF32 on)", 2e-3),
    "matmul_bf16": lambda: matmul(torch.bfloat16, False, "matmul bf16", 1e-2),
    "mlp_step_small": lambda: mlp_step([784, 512, 512, 10], 128, 50),
    "mlp_step_large": lambda: mlp_step([784, 4096, 4096, 10], 4096, 20),
    "mlp_step_large_autocast_bf16": lambda: mlp_step([784, 4096, 4096, 10], 4096, 20, torch.bfloat16),
    "softmax_f32_262144x128": lambda: softmax_f32(262144, 128),
    "layer_norm_f32_65536x768": lambda: layer_norm_f32(65536, 768),
}


def write_json(path, data):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here")
    p.add_argument("--only", nargs="+", choices=sorted(WORKLOADS), help="run these workloads only")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print(f"skipped: no CUDA device (PyTorch {torch.__version__} sees none: torch.cuda.is_available() is False)")
        return 77
    out = {"library": f"PyTorch {torch.__version__}", "device": torch.cuda.get_device_name(0),
           "cuda": torch.version.cuda, "results": []}
    all_ok = True
    for wid in args.only or WORKLOADS:
        try:
            r = {"id": wid, **WORKLOADS[wid]()}
        except Exception as e:  # noqa: BLE001 - reported in the JSON, the run goes on
            r = {"id": wid, "error": f"{type(e).__name__}: {e}", "ok": False}
        torch.cuda.empty_cache()
        all_ok = all_ok and r["ok"]
        print(json.dumps(r), flush=True)
        out["results"].append(r)
        if args.json:  # after each workload: a run stopped by its time limit keeps what it measured
            write_json(args.json, out)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
