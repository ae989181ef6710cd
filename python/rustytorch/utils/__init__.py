"""rt.utils: data loading (rt.utils.data)."""
from . import data

__all__ = ["data"]
