"""Regenerate ``screenshots/``: every screen of the app, photographed in a real terminal.

    uv run python -m probe_tui.screenshots [--source DIR] [--out screenshots] [--size 100x32]

Textual's SVG export, turned into PNG by an SVG renderer, drew what no terminal shows (no space
after bold text, the palette key run into its label) and the masked placeholders of the snapshot
tests (``‹ms›``). So the pictures come from a real run: ``probe`` in a tmux session, shown by
``xterm`` (truecolor, DejaVu Sans Mono) on a virtual X display (``Xvfb``), keys sent with
``tmux send-keys``, each state awaited on ``tmux capture-pane`` text, and the xterm window
captured with ``xwd`` and converted to PNG. Timings, counts and paths are the run's own.

The repository is a temporary git copy of ``--source`` (default: this project's ``probe_core/``)
with this project's ``docs/`` inside, indexed by the app itself with the embedded default, so the
dashboard is caught mid-embedding. The memory screen shows a few rules and the libraries screen
that ``docs/`` folder as a library; user-level data goes to a temporary ``PROBE_DATA_DIR``.

Needs ``Xvfb``, ``xterm``, ``xwd`` (apt ``xvfb xterm x11-apps fonts-dejavu-core``), ``tmux`` and
ImageMagick's ``convert`` (apt ``imagemagick``).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from probe_core import environment
from probe_core.config import init_workspace

HERE = Path(__file__).resolve().parent.parent
TOOLS = ("Xvfb", "xterm", "xwd", "tmux", "convert")
FONT, FONT_SIZE = "DejaVu Sans Mono", 14
QUERY = "hybrid query with reciprocal rank fusion"
# after the search: keys, what shows once the screen is ready, keys then, the picture
SCREENS = (
    (("Escape", "Escape", "d"), "bm25_fusion", (), "doctor"),
    (("s",), "Recommended", (), "setup"),
    (("m",), "use-uv", ("Down",), "memory"),
    (("l",), "probe-docs", (), "libraries"),
    (("?",), "Everywhere", (), "help"),
    (("Escape", "i", "t"), "Watcher", (), "dashboard-light"),
)


class Terminal:
    """``probe`` in tmux, displayed by xterm on a private X display."""

    def __init__(self, root: Path, env: dict[str, str], size: tuple[int, int]):
        self.socket = f"probe-shots-{uuid.uuid4().hex[:8]}"
        self.title = self.socket
        self.size = size
        self.root = root
        self.env = env
        self.procs: list[subprocess.Popen] = []

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True, text=True,
                              env=self.env).stdout

    def start(self) -> None:
        read, write = os.pipe()  # Xvfb writes the display number it picked
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "2400x1600x24", "-nolisten",
                                 "tcp"], pass_fds=(write,), stderr=subprocess.DEVNULL)
        os.close(write)
        self.procs.append(xvfb)
        with os.fdopen(read) as fh:
            self.env["DISPLAY"] = f":{fh.readline().strip()}"
        cols, rows = self.size
        app = f"env COLORTERM=truecolor {shutil.which('probe') or sys.executable + ' -m probe_cli'}"
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "shots", "-x", str(cols), "-y", str(rows),
                  "-c", str(self.root), app)
        for option in (("status", "off"), ("default-terminal", "tmux-256color"),
                       ("terminal-features", "xterm*:RGB")):
            self.tmux("set", "-g", *option)
        self.procs.append(subprocess.Popen(
            ["xterm", "-fa", FONT, "-fs", str(FONT_SIZE), "-geometry", f"{cols}x{rows}+0+0", "-bw", "0", "-b", "0",
             "-bg", "#1e1e1e", "-T", self.title, "-xrm", "XTerm*allowTitleOps: false",
             "-e", "tmux", "-L", self.socket, "attach", "-t", "shots"], env={**self.env, "TERM": "xterm-256color"},
            stderr=subprocess.DEVNULL))

    def keys(self, *keys: str, literal: bool = False) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", "shots", *(["-l"] if literal else []), key)
            time.sleep(0.3)

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "shots")

    def wait(self, check: str | Callable[[str], bool], timeout: float = 120) -> str:
        test = check if callable(check) else (lambda screen: check in screen)
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if test(screen):
                time.sleep(0.6)  # let the last frame land
                return screen
            if time.monotonic() > deadline:
                raise RuntimeError(f"{check!r} never showed; the screen was:\n{screen}")
            time.sleep(0.3)

    def shoot(self, out: Path, name: str) -> Path:
        png = out / f"{name}.png"
        xwd = subprocess.run(["xwd", "-silent", "-name", self.title], check=True, capture_output=True,
                             env=self.env).stdout
        subprocess.run(["convert", "xwd:-", str(png)], input=xwd, check=True)
        return png

    def stop(self) -> None:
        socket = subprocess.run(["tmux", "-L", self.socket, "display", "-p", "#{socket_path}"], capture_output=True,
                                text=True, env=self.env).stdout.strip()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, env=self.env)
        if socket:  # a killed server can leave its socket file behind in the shared tmux dir
            Path(socket).unlink(missing_ok=True)
        for proc in reversed(self.procs):
            proc.terminate()
            proc.wait(timeout=10)


def _dense(screen: str) -> tuple[int, int]:
    m = re.search(r"Dense\s.*?(\d[\d,]*)/(\d[\d,]*)", screen)
    return (int(m[1].replace(",", "")), int(m[2].replace(",", ""))) if m else (0, 0)


def capture(term: Terminal, out: Path) -> list[Path]:
    """Walk through every screen, photographing each in the state the docs describe."""
    shots = []
    # the dashboard while dense vectors fill in
    term.wait(lambda s: "embedding" in s and 32 < _dense(s)[0] < _dense(s)[1], timeout=300)
    shots.append(term.shoot(out, "dashboard"))
    term.wait(lambda s: "up to date" in s and _dense(s)[0] == _dense(s)[1] > 0, timeout=900)
    term.keys("/")
    term.wait("search the repository")
    term.keys(QUERY, literal=True)
    term.wait(lambda s: "healthy ·" in s and "results ·" in s)
    term.keys("Enter", "j")
    time.sleep(1.5)  # the preview follows the cursor
    shots.append(term.shoot(out, "search"))
    term.keys("Enter")
    time.sleep(1.5)
    shots.append(term.shoot(out, "file-view"))
    for before, ready, after, name in SCREENS:
        term.keys(*before)
        term.wait(ready)
        term.keys(*after)
        shots.append(term.shoot(out, name))
    term.keys("q")
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, default=HERE / "probe_core")
    ap.add_argument("--out", type=Path, default=HERE / "screenshots")
    ap.add_argument("--size", default="100x32")
    args = ap.parse_args(argv)
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        print(f"screenshots: missing {', '.join(missing)} (apt-get install xvfb xterm x11-apps fonts-dejavu-core "
              "imagemagick tmux)", file=sys.stderr)
        return 1
    cols, rows = (int(x) for x in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="probe-shots-") as tmp:
        data = Path(tmp) / "data"
        os.environ["PROBE_DATA_DIR"] = str(data)  # global rules, libraries: not the user's
        root = Path(tmp) / args.source.name
        shutil.copytree(args.source, root, ignore=shutil.ignore_patterns("__pycache__", ".probe", "*.pyc", "assets"))
        shutil.copytree(HERE / "docs", root / "docs")
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        init_workspace(root, preset="embedded")
        seed_memory_and_libraries(root)
        env = environment.child_env(without=("COLUMNS", "LINES", "TMUX"))
        term = Terminal(root, env, (cols, rows))
        try:
            term.start()
            shots = capture(term, args.out)
        finally:
            term.stop()
    for png in shots:
        print(png.relative_to(HERE) if png.is_relative_to(HERE) else png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
