"""Durations for ``probe prune --older-than`` and the ages it prints: ``30d`` ↔ seconds."""
from __future__ import annotations

import re

from ..memory.workspaces import RegistryError

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float:
    """``30d``, ``12h``, ``2w``, ``90m``, ``45s``, ``0d`` → seconds. Anything else is an error."""
    m = _DURATION_RE.match(str(text or ""))
    if not m:
        raise RegistryError(f"invalid duration {text!r}: use a number and a unit s|m|h|d|w, e.g. 30d, 12h, 2w, 90m")
    return float(m.group(1)) * _UNITS[m.group(2).lower()]


def format_duration(seconds: float) -> str:
    """Exact, in the largest unit that divides it: 2592000 → ``30d``, 5400 → ``90m``."""
    for unit in ("w", "d", "h", "m"):
        if seconds and seconds % _UNITS[unit] == 0:
            return f"{seconds / _UNITS[unit]:.0f}{unit}"
    return f"{seconds:g}s"


def format_age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size:.0f}{unit}"
    return f"{seconds:.0f}s"
