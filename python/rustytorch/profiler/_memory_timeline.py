"""profile.export_memory_timeline(path): live memory per category over time, as PyTorch writes it.

Formats, chosen by the file name:
- .json / .json.gz: ``[times_us, sizes, categories]``. ``times_us[i]`` is microseconds since the
  session start (the clock of the Chrome trace's "ts"); ``sizes[i][c]`` the live bytes of category
  ``categories[c]`` after every allocator event at that time, counted from the session start (a
  block allocated before it and freed during it counts negative). The first two entries are
  PyTorch's layout (``json.load(f)[:2]`` reads like PyTorch's file); the third names the categories:
  parameter, gradient, activation, optimizer_state, temporary, other.
- .html: a self-contained page (no scripts, nothing fetched) with an SVG stacked area chart of the
  categories and a table of their peaks.
"""
import gzip
import html
import json
import math
import os

__all__ = ["write_memory_timeline", "parse_device"]

COLORS = {"parameter": "#4e79a7", "gradient": "#f28e2b", "activation": "#59a14f",
          "optimizer_state": "#e15759", "temporary": "#b07aa1", "other": "#9c9c9c"}
PLOT_W, PLOT_H, LEFT, TOP, BOTTOM, RIGHT = 960, 400, 80, 50, 50, 20
PREEXISTING_NOTE = (" Blocks allocated before the session started and freed during it make some categories"
                    " negative in the data; the chart draws them at zero.")
MAX_COLUMNS = 1200  # samples drawn; more are reduced to the peak of each column


def parse_device(device):
    """None -> every device combined; "cpu" -> -1; "cuda" / "cuda:N" / N -> N."""
    if device is None:
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    text = str(device).strip().lower()
    if text == "cpu":
        return -1
    if text == "cuda":
        return 0
    if text.startswith("cuda:") and text[5:].isdigit():
        return int(text[5:])
    raise ValueError(f"export_memory_timeline: device must be None (all devices), 'cpu', 'cuda' or 'cuda:N', "
                     f"got {device!r}")


def write_memory_timeline(data, path, device):
    path = os.fspath(path)
    lower = path.lower()
    if not lower.endswith((".json", ".json.gz", ".html")):
        raise ValueError(f"export_memory_timeline: {path!r} must end in .json, .json.gz or .html "
                         "(the extension chooses the format)")
    times_ns, sizes, categories, peak_bytes, peak_time_ns = data.memory_timeline(parse_device(device))
    times_us = [round((t - data.start_ns) / 1e3, 3) for t in times_ns]
    if lower.endswith(".html"):
        title = f"Memory timeline: {data.name or 'rustytorch profile'} ({_device_label(device)})"
        text = _html_page(title, times_us, sizes, categories, peak_bytes, (peak_time_ns - data.start_ns) / 1e3)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    payload = json.dumps([times_us, sizes, categories])
    if lower.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(payload)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(payload)


def _device_label(device):
    d = parse_device(device)
    return "all devices" if d is None else ("CPU" if d < 0 else f"cuda:{d}")


def _columns(times, sizes):
    """At most MAX_COLUMNS samples: in each time column, the sample with the largest total (peaks stay)."""
    if len(times) <= MAX_COLUMNS:
        return times, sizes
    t0, span = times[0], (times[-1] - times[0]) or 1.0
    best = {}
    for t, row in zip(times, sizes):
        col = min(int((t - t0) / span * MAX_COLUMNS), MAX_COLUMNS - 1)
        if col not in best or sum(row) > sum(best[col][1]):
            best[col] = (t, row)
    picked = [best[c] for c in sorted(best)]
    # Keep the final state so the chart ends where the session ends.
    if picked[-1][0] != times[-1]:
        picked.append((times[-1], sizes[-1]))
    return [p[0] for p in picked], [p[1] for p in picked]


def _unit(max_bytes):
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if max_bytes >= scale:
            return unit, scale
    return "B", 1


def _ticks(top, count=5):
    if top <= 0:
        return [0.0]
    raw = top / count
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(int(top / step) + 1)]


def _fmt(v):
    return f"{v:.0f}" if v == int(v) else f"{v:.2f}".rstrip("0")


def _html_page(title, times_us, sizes, categories, peak_bytes, peak_time_us):
    preexisting = any(v < 0 for r in sizes for v in r)
    times, rows = _columns(times_us, [[max(v, 0) for v in r] for r in sizes])
    t_end = times[-1] if times else 0.0
    t_start = min(times[0], 0.0) if times else 0.0
    max_total = max((sum(r) for r in rows), default=0)
    unit, scale = _unit(max(max_total, 1))
    y_top = max(max_total / scale, 1e-9)
    x_of = lambda t: LEFT + (t - t_start) / ((t_end - t_start) or 1.0) * PLOT_W  # noqa: E731
    y_of = lambda b: TOP + PLOT_H - b / scale / y_top * PLOT_H  # noqa: E731

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + PLOT_W + RIGHT}" '
           f'height="{TOP + PLOT_H + BOTTOM}" font-family="sans-serif" font-size="12">']
    used = [c for c in range(len(categories)) if any(r[c] for r in rows)]
    lower = [0] * len(rows)
    for c in used:
        upper = [lo + r[c] for lo, r in zip(lower, rows)]
        top_pts, bottom_pts = [], []
        for i, t in enumerate(times):  # steps: the value holds until the next event
            t_next = times[i + 1] if i + 1 < len(times) else t_end
            top_pts += [(x_of(t), y_of(upper[i])), (x_of(t_next), y_of(upper[i]))]
            bottom_pts += [(x_of(t), y_of(lower[i])), (x_of(t_next), y_of(lower[i]))]
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in top_pts + bottom_pts[::-1])
        name = categories[c]
        peak = max(r[c] for r in rows)
        svg.append(f'<polygon points="{pts}" fill="{COLORS.get(name, "#777")}" fill-opacity="0.85">'
                   f'<title>{html.escape(name)}: peak {peak / scale:.3f} {unit}</title></polygon>')
        lower = upper
    for v in _ticks(y_top):
        y = TOP + PLOT_H - v / y_top * PLOT_H
        svg.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + PLOT_W}" y2="{y:.1f}" stroke="#ddd"/>'
                   f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(v)} {unit}</text>')
    span_ms = (t_end - t_start) / 1e3
    for v in _ticks(span_ms):
        x = LEFT + (v / span_ms if span_ms else 0) * PLOT_W
        svg.append(f'<line x1="{x:.1f}" y1="{TOP + PLOT_H}" x2="{x:.1f}" y2="{TOP + PLOT_H + 5}" stroke="#333"/>'
                   f'<text x="{x:.1f}" y="{TOP + PLOT_H + 18}" text-anchor="middle">{_fmt(v)}</text>')
    svg.append(f'<rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="#333"/>'
               f'<text x="{LEFT + PLOT_W / 2}" y="{TOP + PLOT_H + 38}" text-anchor="middle">time (ms since the '
               f'session start)</text>')
    for i, c in enumerate(used):
        x = LEFT + 10 + i * 150
        svg.append(f'<rect x="{x}" y="{TOP - 30}" width="12" height="12" fill="{COLORS.get(categories[c], "#777")}"/>'
                   f'<text x="{x + 16}" y="{TOP - 20}">{html.escape(categories[c])}</text>')
    if not used:
        svg.append(f'<text x="{LEFT + PLOT_W / 2}" y="{TOP + PLOT_H / 2}" text-anchor="middle">no allocator '
                   'events on this device</text>')
    svg.append("</svg>")

    peaks = "".join(f"<tr><td>{html.escape(categories[c])}</td><td>{max((r[c] for r in sizes), default=0):,}</td></tr>"
                    for c in range(len(categories)))
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            '<style>body{font-family:sans-serif;margin:24px}td,th{padding:2px 12px;text-align:right}'
            'td:first-child,th:first-child{text-align:left}</style></head><body>'
            f'<h2>{html.escape(title)}</h2>'
            f'<p>Peak {peak_bytes:,} bytes at {peak_time_us / 1e3:.3f} ms; {len(sizes)} distinct event times'
            f'{" (drawn as " + str(len(times)) + " columns, each its peak)" if len(times) < len(sizes) else ""}.'
            f'{PREEXISTING_NOTE if preexisting else ""}</p>'
            + "\n".join(svg) +
            '<table><tr><th>category</th><th>peak bytes</th></tr>' + peaks + '</table></body></html>\n')
