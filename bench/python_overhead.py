"""Per-op overhead from Python: a 1-element add, rustytorch vs torch in the same process.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [--repeat 7] [--number 200000]

Prints the median time per `a + b` on 1-element float32 tensors for each library and the ratio
rt / torch (the target is <= 0.5), and the cost of a custom autograd.Function (forward and backward
of an exp that saves its output, 8 elements; number / 20 calls per repeat).
"""
import argparse
import statistics
import timeit


def per_op_us(stmt, setup_globals, number, repeat):
    times = timeit.repeat(stmt, globals=setup_globals, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def custom_exp(lib):
    """The same custom Function for either library: exp, saving its output for backward."""
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    return Exp


def function_rows(lib, name, number, repeat):
    x, g = lib.ones(8, requires_grad=True), lib.ones(8)
    env = {"Exp": custom_exp(lib), "x": x, "g": g}
    return [(f"{name} Function fwd+bwd", per_op_us("Exp.apply(x).backward(g)", env, number, repeat)),
            (f"{name} exp fwd+bwd", per_op_us("x.exp().backward(g)", env, number, repeat))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--number", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    import rustytorch as rt
    a, b = rt.ones(1), rt.ones(1)
    rows = [("rustytorch a + b", per_op_us("a + b", {"a": a, "b": b}, args.number, args.repeat)),
            ("rustytorch a + 1.0", per_op_us("a + 1.0", {"a": a}, args.number, args.repeat)),
            ("rustytorch a.add_(b)", per_op_us("a.add_(b)", {"a": a, "b": b}, args.number, args.repeat))]
    rows += function_rows(rt, "rustytorch", args.number // 20, args.repeat)
    try:
        import torch
        torch.set_num_threads(1)
        ta, tb = torch.ones(1), torch.ones(1)
        rows += [("torch a + b", per_op_us("a + b", {"a": ta, "b": tb}, args.number, args.repeat)),
                 ("torch a + 1.0", per_op_us("a + 1.0", {"a": ta}, args.number, args.repeat)),
                 ("torch a.add_(b)", per_op_us("a.add_(b)", {"a": ta, "b": tb}, args.number, args.repeat))]
        rows += function_rows(torch, "torch", args.number // 20, args.repeat)
    except ImportError:
        torch = None
    for name, us in rows:
        print(f"{name:24s} {us:8.3f} us")
    if torch is not None:
        d = dict(rows)
        for op in ("a + b", "a + 1.0", "a.add_(b)", "Function fwd+bwd", "exp fwd+bwd"):
            print(f"ratio rt/torch ({op}): {d['rustytorch ' + op] / d['torch ' + op]:.3f}")


if __name__ == "__main__":
    main()
