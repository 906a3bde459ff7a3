"""Small text formatters the screens share, and the masking that makes snapshots deterministic.

``masked`` (``ProbeApp(masked=True)``, or ``PROBE_TUI_MASK=1``) replaces what changes from run to
run (timings, rates, the absolute root, disk sizes) with fixed placeholders: snapshot tests and the
screenshots in ``screenshots/`` use it.
"""
from __future__ import annotations

import re

from probe_core.config import user_data_dir

_TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|GB|GiB|MB)\b")

STATUS_ICON = {"ok": "✔", "warn": "▲", "fail": "✖", "skip": "·"}


def ms(value: float | None, masked: bool) -> str:
    if value is None:
        return "–"
    return "‹ms›" if masked else f"{value:.0f} ms"


def rate(value: float | None, masked: bool) -> str:
    if value is None:
        return "–"
    return "‹rate›" if masked else f"{value:.1f} chunks/s"


def mask_text(text: str, masked: bool, root: str | None = None) -> str:
    """Hide timings, sizes, the absolute root and the user data dir in free text (doctor details,
    error lines)."""
    if not masked or not text:
        return text
    if root:
        text = text.replace(root, "<repo>")
    text = text.replace(str(user_data_dir()), "<data>")
    return _TIMING.sub("‹n›", text)


def bar(done: int, total: int, width: int = 20) -> str:
    """A text progress bar (the dashboard also shows Textual ProgressBars; this is for one-liners)."""
    if total <= 0:
        return "░" * width
    filled = round(width * min(done, total) / total)
    return "█" * filled + "░" * (width - filled)


def clip(text: str | None, width: int) -> str:
    """``text`` on one line, cut to ``width`` cells with an ellipsis (table cells, previews)."""
    line = " ".join((text or "").split())
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


def clip_left(text: str, width: int) -> str:
    """The end of ``text`` cut to ``width`` cells (a path's last parts say the most)."""
    return text if len(text) <= width else "…" + text[-(width - 1):]
