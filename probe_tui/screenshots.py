"""Regenerate ``screenshots/``: every screen of the app, captured on a real indexed repository.

    uv run python -m probe_tui.screenshots [--source DIR] [--out screenshots] [--size 100x32]

The repository is a temporary git copy of ``--source`` (default: this project's ``probe_core/``,
a real ~11k-line Python package) with this project's ``docs/`` inside, indexed by the app itself
with the embedded default, so the dashboard is caught mid-embedding. The memory screen shows a few
rules and the libraries screen that ``docs/`` folder as a library; user-level data (global rules,
the library registry) goes to a temporary ``PROBE_DATA_DIR``, never the user's own. Timings and
the temporary path are masked. Each SVG is turned into a PNG with ``rsvg-convert`` (apt
``librsvg2-bin``) when it is installed.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from probe_core.config import init_workspace
from probe_core.engine import EngineSettings

from .app import ProbeApp

HERE = Path(__file__).resolve().parent.parent


async def _until(pilot, condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        await pilot.pause(0.2)


async def capture(root: Path, out: Path, size: tuple[int, int]) -> list[Path]:
    app = ProbeApp(root, masked=True, engine_settings=EngineSettings(debounce_s=0.5, stable_s=0.05))
    shots: list[Path] = []

    def save(name: str) -> None:
        shots.append(Path(app.save_screenshot(filename=f"{name}.svg", path=str(out))))

    async with app.run_test(size=size) as pilot:
        # dashboard: lexical index done, dense vectors filling in
        await _until(pilot, lambda: (app.status.get("progress") or {}).get("chunks_embedded", 0) > 32, 180)
        await pilot.pause(1.2)
        save("dashboard")
        # search once every chunk has its dense vector (else the answer says "uncertain")
        await _until(pilot, lambda: 0 < app.status.get("chunks_indexed", 0) == app.status.get("chunks_embedded"), 300)
        await pilot.press("slash")
        await pilot.press(*"hybrid query with reciprocal rank fusion")
        screen = app.screen
        await _until(pilot, lambda: screen.preview_source is not None, 30)
        await pilot.press("enter", "j")
        await _until(pilot, lambda: screen.results and screen.preview_source.startswith(screen.results[1]["path"]),
                     10)
        await pilot.pause(0.5)
        save("search")
        await pilot.press("enter")
        await pilot.pause(1.0)
        save("file-view")
        await pilot.press("escape", "escape", "d")
        await _until(pilot, lambda: app.screen.checks, 30)
        await pilot.pause(0.3)
        save("doctor")
        await pilot.press("s")
        await _until(pilot, lambda: app.screen.recommendation is not None, 30)
        await pilot.pause(0.3)
        save("setup")
        await pilot.press("m")
        await _until(pilot, lambda: app.screen.loaded, 10)
        await pilot.press("down")
        await pilot.pause(0.3)
        save("memory")
        await pilot.press("l")
        await _until(pilot, lambda: app.screen.loaded, 10)
        await pilot.pause(0.3)
        save("libraries")
        await pilot.press("question_mark")
        await pilot.pause(0.3)
        save("help")
        await pilot.press("escape", "i", "t")
        await pilot.pause(1.0)
        save("dashboard-light")
    return shots


def seed_memory_and_libraries(root: Path) -> None:
    """A few rules, and the repository's ``docs/`` as an indexed library (through probe_core's API)."""
    from probe_core.libraries import add_library, index_library
    from probe_core.memory.rules import RuleStore

    store = RuleStore(root)
    store.add("be-terse", "Answer tersely; no summaries of what you just did.", "global", title="Style",
              tags="tone")
    store.add("use-uv", "Run Python only through `uv run`; never pip install into the system interpreter.",
              title="Tooling", tags=["tooling", "python"])
    store.add("no-mocks", "Tests use real parts (real stores, the real embedder); no mocks of what runs here.",
              tags="tests")
    store.add("errors-at-edge", "Raise a ProbeError subclass deep down; turn it into one line at the edges.")
    add_library(root / "docs", "probe-docs")
    index_library("probe-docs")


def to_png(svg: Path) -> Path | None:
    if shutil.which("rsvg-convert") is None:
        return None
    png = svg.with_suffix(".png")
    subprocess.run(["rsvg-convert", "--zoom", "1.5", "-o", str(png), str(svg)], check=True)
    return png


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, default=HERE / "probe_core")
    ap.add_argument("--out", type=Path, default=HERE / "screenshots")
    ap.add_argument("--size", default="100x32")
    args = ap.parse_args(argv)
    cols, rows = (int(x) for x in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="probe-shots-") as tmp:
        os.environ["PROBE_DATA_DIR"] = str(Path(tmp) / "data")  # global rules, libraries: not the user's
        root = Path(tmp) / args.source.name
        shutil.copytree(args.source, root, ignore=shutil.ignore_patterns("__pycache__", ".probe", "*.pyc", "assets"))
        shutil.copytree(HERE / "docs", root / "docs")
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        init_workspace(root, preset="embedded")
        seed_memory_and_libraries(root)
        shots = asyncio.run(capture(root, args.out, (cols, rows)))
    for svg in shots:
        png = to_png(svg)
        print(svg.relative_to(HERE) if svg.is_relative_to(HERE) else svg, "+ png" if png else "(no rsvg-convert)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
