"""Shared fixtures: small real repositories written into tmp dirs."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO_FILES = {
    "src/auth/passwords.py": '''"""Password hashing."""
import hashlib
import os

ITERATIONS = 600_000


def hash_password(password: str, salt: bytes | None = None) -> str:
    """Hash a password with a random salt using PBKDF2."""
    salt = salt or os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, ITERATIONS)
    return salt.hex() + "$" + digest.hex()


def check_password(stored: str, password: str) -> bool:
    """Compare a password against a stored salted hash."""
    salt_hex, _ = stored.split("$", 1)
    return hash_password(password, bytes.fromhex(salt_hex)) == stored
''',
    "src/http/headers.py": '''class HeaderParser:
    """Parse raw HTTP header lines into a dict."""

    def parse_line(self, line: str) -> tuple[str, str]:
        name, _, value = line.partition(":")
        return name.strip().lower(), value.strip()

    def parse_block(self, block: str) -> dict:
        return dict(self.parse_line(l) for l in block.splitlines() if l)
''',
    "router/mux.go": '''package router

import "net/http"

// Mux routes requests to handlers by path.
type Mux struct {
	routes map[string]http.Handler
}

// Handle registers a handler for a pattern.
func (m *Mux) Handle(pattern string, h http.Handler) {
	if m.routes == nil {
		m.routes = map[string]http.Handler{}
	}
	m.routes[pattern] = h
}

// ServeHTTP dispatches the request to the handler registered for its path.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, ok := m.routes[r.URL.Path]; ok {
		h.ServeHTTP(w, r)
		return
	}
	http.NotFound(w, r)
}
''',
    "docs/guide.md": '''# Guide

## Installing

Run the installer and configure the router.

## Throttling

Limit how many requests run at the same time with a semaphore.
''',
    "tests/test_passwords.py": '''from src.auth.passwords import check_password, hash_password


def test_roundtrip():
    assert check_password(hash_password("pw"), "pw")
''',
    "config/settings.yaml": "server:\n  port: 8080\n  host: 127.0.0.1\nlogging:\n  level: info\n",
}


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, "utf-8")
    return root


@pytest.fixture(scope="session", autouse=True)
def _session_probe_data(tmp_path_factory):
    """Fixtures of module or session scope are set up before the per-test isolation below: they get
    a data dir of their own too, never the user's (a module's fuzzed ``store`` calls made libraries
    in ``~/.local/share/probe``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROBE_DATA_DIR", str(tmp_path_factory.mktemp("probe-data-session")))
        mp.setenv("PROBE_DAEMON", "0")
        mp.setenv("PROBE_DAEMON_IDLE_S", "60")
        yield


@pytest.fixture(autouse=True)
def _isolated_probe_data(tmp_path_factory, monkeypatch):
    """Keep the project registry (``projects.json``) out of the user's home. A CLI call that answers
    by itself starts no background owner unless a test asks (``PROBE_DAEMON=1``), and one that a
    test starts exits soon after its work (``PROBE_DAEMON_IDLE_S``)."""
    monkeypatch.setenv("PROBE_DATA_DIR", str(tmp_path_factory.mktemp("probe-data")))
    monkeypatch.setenv("PROBE_DAEMON", "0")
    monkeypatch.setenv("PROBE_DAEMON_IDLE_S", "60")


@pytest.fixture(scope="session", autouse=True)
def _no_daemon_left_behind(tmp_path_factory):
    """After the session, stop every background owner still running on a tree the tests made."""
    yield
    from probe_core.engine.daemon import stop_daemon
    from probe_core.engine.lock import read_owner_info

    for info in tmp_path_factory.getbasetemp().rglob(".probe/engine.json"):
        if read_owner_info(info.parent).get("kind") == "daemon":
            try:
                stop_daemon(info.parent.parent, timeout=15)
            except Exception as exc:  # noqa: BLE001 - report, and go on stopping the others
                print(f"could not stop the daemon of {info.parent.parent}: {exc}")


@pytest.fixture
def repo(tmp_path) -> Path:
    """A small git repository with Python, Go, Markdown, YAML and a test file."""
    root = write_tree(tmp_path / "repo", REPO_FILES)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return root


# tests/fixtures/ holds sample projects (some with their own test files): data, not tests
collect_ignore = ["fixtures"]
