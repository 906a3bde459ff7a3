"""What every benchmark script shares: the nearest-rank percentile and printing the result JSON
(to stdout, and to ``--json PATH`` when given). Imported by the scripts run as ``python bench/X.py``."""
from __future__ import annotations

import json
from pathlib import Path


def percentile(xs, q: float) -> float:
    """The nearest-rank ``q``-th percentile of ``xs`` (one of its values, not an interpolation)."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q / 100 * len(xs) + 0.5) - 1))]


def emit(out: dict, path: Path | None) -> int:
    """Print ``out`` as JSON and write it to ``path`` too when one was given; the script's exit code."""
    text = json.dumps(out, indent=2)
    print(text)
    if path:
        path.write_text(text)
    return 0
