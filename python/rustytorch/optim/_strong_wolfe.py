"""The strong-Wolfe line search LBFGS uses (line_search_fn="strong_wolfe"): bracketing, then zoom by
cubic interpolation (Nocedal & Wright, Numerical Optimization, algorithms 3.5 and 3.6), with the
same constants, safeguards and evaluation budget as PyTorch's so iterates match its LBFGS.

    result = strong_wolfe(evaluate, t, d, loss, grad, gtd)   # evaluate(t) -> (loss, flat grad) at x + t d
    result.t, result.loss, result.grad, result.evaluations
"""
import math
from typing import NamedTuple

import rustytorch as rt


class LinePoint(NamedTuple):
    t: float        # step length along the direction
    loss: float
    grad: object    # flat gradient tensor at that point
    slope: float    # directional derivative grad . d


class LineSearchResult(NamedTuple):
    t: float
    loss: float
    grad: object
    evaluations: int


def cubic_minimizer(a, b, bounds=None):
    """Minimizer of the cubic through points a and b (values and slopes), clamped to `bounds`
    (default: between a.t and b.t); the bounds' midpoint when the cubic has no real minimizer."""
    lo, hi = bounds if bounds is not None else (min(a.t, b.t), max(a.t, b.t))
    d1 = a.slope + b.slope - 3 * (a.loss - b.loss) / (a.t - b.t)
    discriminant = d1 * d1 - a.slope * b.slope
    if not discriminant >= 0:  # no real minimizer (or NaN)
        return (lo + hi) / 2.0
    d2 = math.sqrt(discriminant)
    left, right = (a, b) if a.t <= b.t else (b, a)
    t = right.t - (right.t - left.t) * ((right.slope + d2 - d1) / (right.slope - left.slope + 2 * d2))
    return min(max(t, lo), hi)


def strong_wolfe(evaluate, t, direction, loss, grad, slope, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Finds a step length t along `direction` from the current point (loss, grad, slope = grad . d < 0)
    satisfying the strong Wolfe conditions, within max_ls further evaluations."""
    direction_size = float(direction.abs().max())
    start = LinePoint(0.0, loss, grad, slope)
    evaluations = 0

    def probe(step):
        nonlocal evaluations
        evaluations += 1
        new_loss, new_grad = evaluate(step)
        return LinePoint(step, new_loss, new_grad, float(rt.matmul(new_grad, direction)))

    def sufficient_decrease(point):
        return point.loss <= loss + c1 * point.t * slope

    def curvature_holds(point):
        return abs(point.slope) <= -c2 * slope

    # Bracketing: grow the step until an interval is known to hold an acceptable point.
    previous, current, tries = start, probe(t), 0
    bracket = None
    while tries < max_ls:
        if not sufficient_decrease(current) or (tries > 1 and current.loss >= previous.loss):
            bracket = [previous, current]
            break
        if curvature_holds(current):
            return LineSearchResult(current.t, current.loss, current.grad, evaluations)
        if current.slope >= 0:
            bracket = [previous, current]
            break
        bounds = (current.t + 0.01 * (current.t - previous.t), current.t * 10)
        previous, current = current, probe(cubic_minimizer(previous, current, bounds))
        tries += 1
    if bracket is None:  # out of evaluations while still growing
        bracket = [start, current]

    # Zoom: shrink the bracket around an acceptable point.
    low, high = (0, 1) if bracket[0].loss <= bracket[-1].loss else (1, 0)
    stalled = False
    while tries < max_ls:
        lo_t, hi_t = min(p.t for p in bracket), max(p.t for p in bracket)
        if (hi_t - lo_t) * direction_size < tolerance_change:
            break
        step = cubic_minimizer(bracket[0], bracket[1])
        margin = 0.1 * (hi_t - lo_t)
        if min(hi_t - step, step - lo_t) < margin:
            # Too close to an end: accept once, then move a tenth of the interval inside.
            if stalled or step >= hi_t or step <= lo_t:
                step = hi_t - margin if abs(step - hi_t) < abs(step - lo_t) else lo_t + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        point = probe(step)
        tries += 1
        if not sufficient_decrease(point) or point.loss >= bracket[low].loss:
            bracket[high] = point
            low, high = (0, 1) if bracket[0].loss <= bracket[1].loss else (1, 0)
            continue
        if curvature_holds(point):
            bracket[low] = point
            break
        if point.slope * (bracket[high].t - bracket[low].t) >= 0:
            bracket[high] = bracket[low]
        bracket[low] = point
    best = bracket[low]
    return LineSearchResult(best.t, best.loss, best.grad, evaluations)
