"""RemovableHandle: what register_*_hook returns; remove() (or leaving a `with` block) unregisters."""
import itertools


class RemovableHandle:
    _next_id = itertools.count()

    def __init__(self, hooks_dict):
        self._hooks_dict = hooks_dict
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        self._hooks_dict.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
