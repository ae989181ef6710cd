"""repr(tensor) with PyTorch's layout: precision 4, integer mode ("1."), scientific mode for wide
ranges, summarisation past 1000 elements (3 edge items), 80-column wrapping, and the
device / dtype / grad_fn / requires_grad suffixes; rt.set_printoptions changes the numbers
(_print_options.py)."""
import math

import numpy as _np

from ._print_options import PRINT_OPTS
_DEFAULT_DTYPES = ("float32", "int64", "bool")


class _Formatter:
    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat:
                self.max_width = max(self.max_width, len(self._plain(v)))
            return
        finite = flat[_np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            for v in flat:
                self.max_width = max(self.max_width, len(self.format_raw(float(v))))
            return
        absv = _np.abs(finite).astype(_np.float64)
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(_np.all(finite == _np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
        else:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        for v in flat:
            self.max_width = max(self.max_width, len(self.format_raw(float(v))))
        if PRINT_OPTS.sci_mode is not None:
            # Forced after the widths are measured in the automatic mode, as torch 1.13 does: its forced
            # notation pads (and wraps) to the other notation's width.
            self.sci_mode = PRINT_OPTS.sci_mode

    @staticmethod
    def _plain(v):
        if isinstance(v, (bool, _np.bool_)):
            return "True" if v else "False"
        return str(int(v))

    def format_raw(self, value):
        if not self.floating:
            return self._plain(value)
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if self.sci_mode:
            return f"{value:.{PRINT_OPTS.precision}e}"
        if self.int_mode:
            return f"{value:.0f}."
        return f"{value:.{PRINT_OPTS.precision}f}"

    def format(self, value):
        s = self.format_raw(value)
        return " " * (self.max_width - len(s)) + s


def _summarised(values):
    """The values repr shows: each long dim cut to its first and last edgeitems."""
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * PRINT_OPTS.edgeitems:
        parts = [values[:PRINT_OPTS.edgeitems], values[-PRINT_OPTS.edgeitems:]]
    else:
        parts = [values]
    return _np.concatenate([_summarised_inner(p) for p in parts], axis=0) if values.ndim > 1 else _np.concatenate(parts)


def _summarised_inner(block):
    return _np.stack([_summarised(b) for b in block]) if len(block) else block


def _vector(values, indent, summarize, fmt):
    element_length = fmt.max_width + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    if summarize and values.shape[0] > 2 * PRINT_OPTS.edgeitems:
        data = [fmt.format(v) for v in values[:PRINT_OPTS.edgeitems].tolist()] + [" ..."] + \
               [fmt.format(v) for v in values[-PRINT_OPTS.edgeitems:].tolist()]
    else:
        data = [fmt.format(v) for v in values.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values, indent, summarize, fmt):
    dim = values.ndim
    if dim == 0:
        return fmt.format(values.item())
    if dim == 1:
        return _vector(values, indent, summarize, fmt)
    if summarize and values.shape[0] > 2 * PRINT_OPTS.edgeitems:
        slices = [_nested(values[i], indent + 1, summarize, fmt) for i in range(PRINT_OPTS.edgeitems)] + ["..."] + \
                 [_nested(values[i], indent + 1, summarize, fmt) for i in range(len(values) - PRINT_OPTS.edgeitems, len(values))]
    else:
        slices = [_nested(values[i], indent + 1, summarize, fmt) for i in range(values.shape[0])]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _values(t):
    """numpy copy of the values: floats as float64 (exact for every rt float type)."""
    d = t.detach().cpu()
    if d.is_floating_point():
        d = d.double()
    return d.numpy()


def tensor_repr(self, prefix="tensor("):
    indent = len(prefix)
    dtype_name = repr(self.dtype).split(".")[-1]
    suffixes = []
    if self.device.type != "cpu":
        suffixes.append(f"device='{self.device}'")
    if self.numel() == 0:
        text = "[]"
        if self.dim() != 1:
            suffixes.append("size=" + str(tuple(self.shape)))
    else:
        values = _values(self)
        summarize = self.numel() > PRINT_OPTS.threshold
        fmt = _Formatter(_summarised(values) if summarize else values, self.is_floating_point())
        text = _nested(values, indent, summarize, fmt)
    if dtype_name not in _DEFAULT_DTYPES:
        suffixes.append("dtype=" + repr(self.dtype))
    if self.grad_fn is not None:
        suffixes.append(f"grad_fn=<{self.grad_fn.name()}>")
    elif self.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + text, suffixes, indent)
