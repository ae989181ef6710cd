"""rt.set_printoptions: how repr(tensor) prints (torch.set_printoptions, PyTorch 1.13's options).

    rt.set_printoptions(precision=2)          # 2 digits after the point
    rt.set_printoptions(profile="full")       # never summarise; "default" and "short" are the others
    rt.set_printoptions(sci_mode=False)       # never scientific; None (the default) decides per tensor

Each call changes the options it names and keeps the others, except sci_mode, which every call sets (to
None when not given), as torch does. A profile sets precision, threshold, edgeitems and linewidth first;
the named options then override it. An unknown profile is a ValueError (torch ignores it).
"""
from dataclasses import dataclass

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80),
}


@dataclass
class PrintOptions:
    precision: int = 4          # digits after the point
    threshold: float = 1000     # more elements than this are summarised
    edgeitems: int = 3          # items kept at each end of a summarised dim
    linewidth: int = 80         # characters per line before wrapping
    sci_mode: bool = None       # True/False force scientific/fixed notation; None decides per tensor


PRINT_OPTS = PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions(profile={profile!r}): the profiles are "
                             f"{', '.join(repr(p) for p in _PROFILES)}")
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode
