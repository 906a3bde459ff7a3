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
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True,
                              text=True).stdout

    def start(self, cwd: Path, command: str, env: dict[str, str]) -> None:
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        self.run("new-session", "-d", "-s", "probe", "-x", "100", "-y", "30", "-c", str(cwd),
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
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True)


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
