"""Grad-mode context managers that also work as decorators, as in torch."""
import functools

from . import _C

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled"]

is_grad_enabled = _C.is_grad_enabled


class _GradModeContext:
    """Base for context managers that set grad mode on entry and restore it on exit."""

    _mode = None

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)
        return None

    def __exit__(self, exc_type, exc, tb):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return func(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Disables gradient recording: `with rt.no_grad(): ...` or `@rt.no_grad()`."""

    _mode = False


class enable_grad(_GradModeContext):
    """Enables gradient recording inside a no_grad region."""

    _mode = True


class inference_mode(_GradModeContext):
    """Like no_grad (the engine has no separate inference mode)."""

    _mode = False

    def __init__(self, mode=True):
        self._mode = not mode

    def __call__(self, func):
        mode = self._mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with inference_mode(not mode):
                return func(*args, **kwargs)

        return wrapper


class set_grad_enabled(_GradModeContext):
    """Sets grad mode now (a function call) and restores it when used as a context manager."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self._mode = bool(mode)
        _C._set_grad_enabled(self._mode)

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc, tb):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, func):
        mode = self._mode
        _C._set_grad_enabled(self._prev)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return func(*args, **kwargs)

        return wrapper
