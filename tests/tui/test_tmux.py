"""End to end in a real terminal: ``probe`` runs in a tmux session on the fixture repository,
keys go in with ``send-keys``, the screen comes back with ``capture-pane``.

Needs tmux (CI: ``apt-get install -y tmux``); skipped when it is missing. It uses its own tmux
server socket (``-L``), so it never touches a user's sessions.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

PROBE = Path(sys.executable).parent / "probe"


class Tmux:
    def __init__(self):
        self.socket = f"probe-test-{uuid.uuid4().hex[:8]}"

    def run(self, *args: str) -> str:
        # COLUMNS/LINES (set in this process by the test tooling) would reach the app through the tmux
        # server and pin it at 80x24 whatever the pane's size: the terminal must decide
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True,
                              text=True, env=env).stdout

    def start(self, cwd: Path, command: str, env: dict[str, str], size: tuple[int, int] = (100, 30)) -> None:
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        self.run("new-session", "-d", "-s", "probe", "-x", str(size[0]), "-y", str(size[1]), "-c", str(cwd),
                 f"env {exports} {command}; sleep 30")

    def keys(self, *keys: str) -> None:
        """One key at a time, with a pause: a real typist's pace (ESC then a letter sent together
        reads as Alt+letter, and a key can overtake the focus change the previous one caused)."""
        for key in keys:
            self.run("send-keys", "-t", "probe", key)
            time.sleep(0.3)

    def text(self, *keys: str) -> None:
        self.run("send-keys", "-t", "probe", "-l", *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "probe")

    def wait_for(self, needle, timeout: float = 90.0) -> str:
        """Until ``needle`` (text, or a predicate over the screen) shows; returns the screen."""
        check = needle if callable(needle) else (lambda screen: needle in screen)
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} never appeared; the screen was:\n{screen}")
            time.sleep(0.3)

    def kill(self) -> None:
        socket = subprocess.run(["tmux", "-L", self.socket, "display", "-p", "#{socket_path}"], check=False,
                                capture_output=True, text=True).stdout.strip()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True)
        if socket:  # kill-server can leave the socket file in the shared /tmp/tmux-UID/
            Path(socket).unlink(missing_ok=True)


@pytest.fixture
def tmux():
    t = Tmux()
    yield t
    t.kill()


def test_probe_in_tmux(configured_repo, tmux):
    assert PROBE.exists(), f"{PROBE} is missing: run `uv sync`"
    env = {"PROBE_DEBOUNCE_S": "0.2", "PROBE_STABLE_S": "0.05", "TERM": "xterm-256color",
           "PATH": os.environ.get("PATH", "")}
    tmux.start(configured_repo, str(PROBE), env)
    screen = tmux.wait_for("up to date")  # the dashboard, after the first index
    assert "Backend" in screen and "watching" in screen

    tmux.keys("/")
    tmux.wait_for("search the repository")
    tmux.text("hash a password")
    tmux.wait_for("src/auth/passwords.py")
    screen = tmux.wait_for("def hash_password")  # the preview, read from disk
    assert "results" in screen

    tmux.keys("Enter", "j")  # to the results, next hit
    tmux.wait_for(lambda screen: '"""Password hashing."""' not in screen)  # the preview follows the cursor
    tmux.keys("d")
    screen = tmux.wait_for("bm25_fusion")
    assert "ok" in screen

    tmux.keys("?")
    tmux.wait_for("command palette")
    tmux.keys("Escape", "m")
    tmux.wait_for("no rules yet")
    tmux.keys("a")
    tmux.wait_for("Add a memory rule")
    tmux.text("use-uv")
    tmux.keys("Tab", "Tab", "Tab", "Tab")
    tmux.text("Run Python through uv run.")
    tmux.keys("C-s")
    tmux.wait_for("0 global · 1 project")
    tmux.keys("l")
    tmux.wait_for("no libraries yet")
    tmux.keys("i")
    tmux.wait_for("Watcher")
    tmux.keys("q")
    deadline = time.monotonic() + 20
    while "Watcher" in tmux.screen():
        assert time.monotonic() < deadline, "probe did not quit on q"
        time.sleep(0.3)


SCREENS = (("i", "Watcher"), ("/", "search the repository"), ("d", "bm25_fusion"), ("s", "Recommended"),
           ("m", "no rules yet"), ("l", "no libraries yet"))
LABELS = ("Index", "Search", "Doctor", "Setup", "Memory", "Libraries")


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_screen_fits_the_terminal(configured_repo, tmux, size):
    """At each size, on every screen: the top line names all six screens, the footer ends with
    help and quit (at 80 columns it used to cut off quit, memory and libraries)."""
    env = {"PROBE_DEBOUNCE_S": "0.2", "TERM": "xterm-256color", "PATH": os.environ.get("PATH", "")}
    tmux.start(configured_repo, str(PROBE), env, size)
    tmux.wait_for("up to date")
    def drawn(marker: str):  # the screen's text, and a footer (a resize redraws it a moment later)
        return lambda text: marker in text and "q Quit" in text.splitlines()[-1]

    for key, marker in SCREENS:
        tmux.keys(key)
        if key == "/":  # the query box has the focus, and takes letters: its footer is "/ Query" only
            tmux.wait_for(marker)
            tmux.keys("Escape")
        screen = tmux.wait_for(drawn(marker), timeout=60)
        lines = screen.splitlines()
        assert len(lines) == size[1]
        assert lines[0].lstrip().startswith("Probe") and all(label in lines[0] for label in LABELS), lines[0]
        assert "? Help" in lines[-1] and "q Quit" in lines[-1], (key, lines[-1])


def test_the_first_run_hint_is_whole_at_100_columns(repo, tmux):
    env = {"TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""), "DOCKER_HOST": "unix:///nonexistent"}
    tmux.start(repo, str(PROBE), env, (100, 30))
    screen = tmux.wait_for("first run")
    text = " ".join(" ".join(screen.split()).split("│"))
    assert "or choose a preset with ↑ ↓ and press a" in " ".join(text.split()), screen
