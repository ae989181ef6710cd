"""The studio kernel's Python side: runs one notebook cell by IPython's rules.

Loaded by python_runtime.cpp as the module `_rtstudio_cell_runner` (the source is compiled into rt_kernel).
The native module `_rtstudio_native` (python_runtime.cpp) provides write(stream, text) and
display(data, metadata_json); everything here runs on the interpreter thread with the GIL.
See Note [Cell execution rules] in python_kernel.h.
"""
import ast
import base64
import builtins
import gc
import io
import json
import linecache
import re
import sys
import tokenize
import types

import _rtstudio_native as _native

_THIS_FILE = __file__  # set by python_runtime.cpp: "<rtstudio cell_runner.py>"
_MATPLOTLIB_MAGIC = re.compile(r"^[ \t]*%matplotlib\b.*$", re.MULTILINE)


class KernelStream(io.TextIOBase):
    """sys.stdout / sys.stderr: each write goes to the kernel's listener at once."""

    def __init__(self, stream, fd):
        super().__init__()
        self._stream = stream  # 0 stdout, 1 stderr
        self._fd = fd

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "replace"

    @property
    def name(self):
        return "<stdout>" if self._stream == 0 else "<stderr>"

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._fd  # fd 1/2: captured by the kernel's output thread

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            _native.write(self._stream, text)
        return len(text)

    def flush(self):
        pass


class NoInput(io.TextIOBase):
    """sys.stdin: the studio kernel has no terminal to read from."""

    @property
    def encoding(self):
        return "utf-8"

    def readable(self):
        return True

    def _refuse(self, *args, **kwargs):
        raise RuntimeError("input() and sys.stdin are not available in the studio kernel: it has no standard "
                           "input. Pass values in the cell's code instead (or read them from a file).")

    read = readline = readlines = _refuse

    def fileno(self):
        return 0


# ---- mime bundles ----------------------------------------------------------------------------------------
_REPR_METHODS = [
    ("image/png", "_repr_png_"),
    ("image/jpeg", "_repr_jpeg_"),
    ("image/svg+xml", "_repr_svg_"),
    ("text/html", "_repr_html_"),
    ("text/markdown", "_repr_markdown_"),
    ("text/latex", "_repr_latex_"),
    ("application/json", "_repr_json_"),
    ("application/javascript", "_repr_javascript_"),
]


def _is_json_mime(mime):
    return mime == "application/json" or mime.endswith("+json")


def _as_text(mime, value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        if mime.startswith("text/") or mime == "image/svg+xml":
            return bytes(value).decode("utf-8", "replace")
        return base64.b64encode(bytes(value)).decode("ascii")
    if _is_json_mime(mime) and not isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, str):
        if mime in ("image/png", "image/jpeg"):
            return value.replace("\n", "")
        return value
    return str(value)


def _repr_method(obj, name):
    if isinstance(obj, type):  # a class: its _repr_*_ are unbound functions, not a representation
        return None
    try:
        method = getattr(obj, name, None)
    except Exception:
        return None
    return method if callable(method) else None


def mime_bundle(obj):
    """(data, metadata) for `obj`: rich representations first, text/plain always."""
    data, metadata = {}, {}
    method = _repr_method(obj, "_repr_mimebundle_")
    if method is not None:
        try:
            result = method(include=None, exclude=None)
        except TypeError:
            result = method()
        if isinstance(result, tuple) and len(result) == 2:
            result, md = result
            if isinstance(md, dict):
                metadata.update(md)
        if isinstance(result, dict):
            for mime, value in result.items():
                data[str(mime)] = _as_text(str(mime), value)
    for mime, name in _REPR_METHODS:
        if mime in data:
            continue
        method = _repr_method(obj, name)
        if method is None:
            continue
        value = method()
        if isinstance(value, tuple) and len(value) == 2:
            value, md = value
            if isinstance(md, dict):
                metadata[mime] = md
        if value is not None:
            data[mime] = _as_text(mime, value)
    if "text/plain" not in data:
        data["text/plain"] = repr(obj)
    return data, json.dumps(metadata, sort_keys=True)


def display(*objs, **kwargs):
    """Shows each object as display data under the running cell (IPython.display.display's core)."""
    raw = kwargs.get("raw", False)
    for obj in objs:
        if raw and isinstance(obj, dict):
            data = {str(k): _as_text(str(k), v) for k, v in obj.items()}
            data.setdefault("text/plain", "")
            _native.display(data, "{}")
        else:
            data, metadata = mime_bundle(obj)
            _native.display(data, metadata)


# ---- matplotlib (inline, Agg) -------------------------------------------------------------------------
INLINE_BACKEND = "module://_rtstudio_inline"


def flush_figures():
    """Emits every open pyplot figure as image/png display data and closes it (the inline backend)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    try:
        numbers = pyplot.get_fignums()
    except Exception:
        return
    for number in numbers:
        figure = pyplot.figure(number)
        buffer = io.BytesIO()
        figure.canvas.print_figure(buffer, format="png", bbox_inches="tight", facecolor="white")
        width, height = figure.get_size_inches() * figure.dpi
        data = {"image/png": base64.b64encode(buffer.getvalue()).decode("ascii"), "text/plain": repr(figure)}
        _native.display(data, json.dumps({"image/png": {"width": int(width), "height": int(height)}}))
    pyplot.close("all")


class _MatplotlibBackendHook:
    """A meta-path finder that, as pyplot is first imported, selects the inline backend unless the user
    chose a non-Agg backend explicitly (MPLBACKEND=Agg is kept in the environment for subprocesses)."""

    def find_spec(self, name, path=None, target=None):
        if name == "matplotlib.pyplot":
            matplotlib = sys.modules.get("matplotlib")
            if matplotlib is not None:
                try:
                    current = dict.__getitem__(matplotlib.rcParams, "backend")
                    if not isinstance(current, str) or current.lower() == "agg":
                        dict.__setitem__(matplotlib.rcParams, "backend", INLINE_BACKEND)
                except Exception:
                    pass
        return None

    def find_module(self, fullname, path=None):  # pragma: no cover - legacy protocol
        return None


def _install_inline_backend():
    module = types.ModuleType("_rtstudio_inline", "The studio's inline matplotlib backend: Agg canvases, "
                                                  "figures shown under the cell that drew them.")

    def load():
        from matplotlib.backend_bases import FigureManagerBase
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        class FigureCanvasStudio(FigureCanvasAgg):
            manager_class = FigureManagerBase

        module.FigureCanvas = FigureCanvasStudio
        module.FigureManager = FigureManagerBase

    def show(*args, block=None, **kwargs):
        flush_figures()

    def __getattr__(name):
        if name in ("FigureCanvas", "FigureManager"):
            load()
            return module.__dict__[name]
        raise AttributeError(name)

    module.show = show
    module.__getattr__ = __getattr__
    module.backend_version = "1"
    sys.modules["_rtstudio_inline"] = module
    if not any(isinstance(f, _MatplotlibBackendHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _MatplotlibBackendHook())


# ---- running a cell ---------------------------------------------------------------------------------------
def _ends_with_semicolon(source):
    last = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER,
                              tokenize.INDENT, tokenize.DEDENT):
                continue
            last = token
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    return last is not None and last.type == tokenize.OP and last.string == ";"


def _strip_kernel_frames(tb):
    while tb is not None and tb.tb_frame.f_code.co_filename == _THIS_FILE:
        tb = tb.tb_next
    return tb


def _format_error(error):
    """(ename, evalue, traceback lines); a second interrupt while formatting does not lose the error."""
    for _ in range(3):
        try:
            return _format_error_once(error)
        except KeyboardInterrupt:
            continue
    return (type(error).__name__, str(error), [f"{type(error).__name__}: {error}"])


def _format_error_once(error):
    import traceback
    error.__traceback__ = _strip_kernel_frames(error.__traceback__)
    report = traceback.TracebackException(type(error), error, error.__traceback__)
    # The kernel's own frames (the SIGINT handler on top of an interrupted cell) are not the user's code.
    report.stack = traceback.StackSummary.from_list([f for f in report.stack if f.filename != _THIS_FILE])
    text = "".join(report.format())
    lines = text.rstrip("\n").split("\n")
    return (type(error).__name__, str(error), lines)


def _store_result(namespace, value):
    namespace["___"] = namespace.get("__")
    namespace["__"] = namespace.get("_")
    namespace["_"] = value


def run_cell(source, filename):
    """Runs `source` in __main__. Returns (result, error): result is None or (data, metadata_json) of the
    last expression; error is None or (ename, evalue, traceback_lines)."""
    namespace = sys.modules["__main__"].__dict__
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        code = _MATPLOTLIB_MAGIC.sub("pass", source)
        tree = ast.parse(code, filename, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr) and not _ends_with_semicolon(code):
            last = ast.Expression(tree.body.pop().value)
        body = compile(tree, filename, "exec")
        tail = compile(last, filename, "eval") if last is not None else None
    except BaseException as error:  # SyntaxError, ValueError (null bytes), RecursionError, KeyboardInterrupt
        if isinstance(error, SyntaxError):
            error.__traceback__ = None  # the cell's line and caret, not the parser's frames
        return None, _format_error(error)
    try:
        exec(body, namespace)
        value = eval(tail, namespace) if tail is not None else None
        result = None
        if value is not None:
            _store_result(namespace, value)
            result = mime_bundle(value)
        return result, None
    except BaseException as error:
        return None, _format_error(error)


def after_cell():
    """Post-execute: figures drawn by the cell appear under it. Returns an error tuple or None."""
    try:
        flush_figures()
        return None
    except BaseException as error:
        return _format_error(error)


# ---- setup and restart ------------------------------------------------------------------------------------
def _fresh_main():
    main = sys.modules["__main__"]
    for name in list(main.__dict__):
        if name not in ("__name__", "__builtins__", "__spec__", "__loader__"):
            del main.__dict__[name]
    main.__dict__.update({"__name__": "__main__", "__doc__": None, "__package__": None,
                          "__builtins__": builtins, "__spec__": None, "__loader__": None})
    return main


def install(package_dir_count):
    """Once, at kernel start: streams, display(), the inline backend, a clean __main__. The working
    directory goes on sys.path right after the rustytorch package dirs (as '' in Jupyter kernels)."""
    sys.stdout = KernelStream(0, 1)
    sys.stderr = KernelStream(1, 2)
    if "" not in sys.path:
        sys.path.insert(package_dir_count, "")
    sys.stdin = NoInput()
    sys.__stdout__, sys.__stderr__, sys.__stdin__ = sys.stdout, sys.stderr, sys.stdin
    sys.argv = [""]
    # Python installs its SIGINT handler at startup only where none was installed; the host (Qt, a test
    # framework) may have had one. Interrupt needs Python's: Note [Kernel interrupt].
    import signal
    signal.signal(signal.SIGINT, _interrupt_handler)
    builtins.display = display
    _install_inline_backend()
    sys.displayhook = _displayhook
    _fresh_main()


def _interrupt_handler(signum, frame):
    """SIGINT: KeyboardInterrupt, as Python's default handler; tells the kernel it arrived (Note
    [Interrupt retry] in python_runtime.cpp)."""
    _native.sigint_handled()
    raise KeyboardInterrupt


def _displayhook(value):
    # Used by code that calls sys.displayhook itself; cells use run_cell's rule.
    if value is not None:
        _store_result(sys.modules["__main__"].__dict__, value)
        display(value)


def reset():
    """restart(): a fresh namespace; figures closed, a running rustytorch profile stopped."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        try:
            pyplot.close("all")
        except Exception:
            pass
    profiler = sys.modules.get("rustytorch.profiler._profile")
    if profiler is not None:
        for obj in gc.get_objects():
            if isinstance(obj, profiler.profile) and getattr(obj, "_state", None) == "started":
                try:
                    obj.stop()
                except Exception:
                    pass
    for name in [n for n in linecache.cache if n.startswith("<cell ")]:
        del linecache.cache[name]
    _fresh_main()
    sys.last_type = sys.last_value = sys.last_traceback = None
    gc.collect()
