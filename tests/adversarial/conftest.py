"""Shared pieces of the adversarial suite: real `probe` subprocesses, a second Unix user, index
snapshots to compare a survivor with a clean index, and a count book for docs/reliability.md.

Every test that claims a figure (inputs tried, faults survived) records it with ``tally`` so a run
with ``PROBE_TALLY=path.json`` writes the numbers the reliability page quotes.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest

from ..conftest import REPO_FILES, write_tree
from ..mcp.conftest import call, probe_mcp, search, server_params, status, wait_indexed, wait_until
from .fault_harness import REPO_ROOT, index_snapshot, probe_cli
from .second_user import SecondUser, second_user_python

__all__ = ["INIT", "RawServer", "REPO_FILES", "call", "probe_mcp", "search", "server_params", "status", "wait_indexed", "wait_until",
           "write_tree", "probe_cli", "nobody_prefix", "SecondUser", "shared_tmp", "index_snapshot", "tally"]

NOBODY = 65534
_TALLY: Counter = Counter()


INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "adversary", "version": "1"}}


def tally(name: str, n: int = 1) -> None:
    """Count something the reliability page reports (inputs tried, faults survived...)."""
    _TALLY[name] += n


def pytest_sessionfinish(session, exitstatus):  # noqa: ARG001 - pytest hook signature
    out = os.environ.get("PROBE_TALLY")
    if out and _TALLY:
        Path(out).write_text(json.dumps(dict(sorted(_TALLY.items())), indent=2) + "\n")


def nobody_prefix() -> list[str]:
    """The command prefix that runs a program as ``nobody`` (uid/gid 65534), or skip with the reason
    this machine does not allow it (the only reason a test here may skip)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to a second user (setpriv); this run is not root")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed, so no second user can be run")
    prefix = [setpriv, "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
    probe = subprocess.run([*prefix, "id", "-u"], capture_output=True, text=True)
    if probe.returncode != 0 or probe.stdout.strip() != str(NOBODY):
        pytest.skip(f"setpriv cannot switch to uid {NOBODY} here: {probe.stderr.strip()}")
    return prefix


@pytest.fixture(scope="session")
def second_user():
    """Python for the second user (``nobody`` when root, else this user) that can import Probe: a
    readable copy when the checkout sits in a private folder; a skip, with why, only when no
    interpreter it may run exists."""
    got = second_user_python(nobody_prefix() if os.geteuid() == 0 else [], REPO_ROOT)
    if isinstance(got, str):
        pytest.skip(got)
    yield got
    got.close()


@contextmanager
def shared_tmp():
    """A temp dir a second user can traverse (pytest's own tmp dirs are 0700 to other users)."""
    path = Path(tempfile.mkdtemp(prefix="probe-adv-"))
    try:
        path.chmod(0o755)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


class AccessSpy:
    """Every open, read, write, create, delete or rename inside some directories, seen by the
    kernel (Linux inotify through libc): the proof that Probe never touched them, whatever path
    games it was played. ``events()`` drains what happened since the last call."""

    _MASKS = {0x1: "access", 0x2: "modify", 0x4: "attrib", 0x8: "close_write", 0x20: "open", 0x40: "moved_from",
              0x80: "moved_to", 0x100: "create", 0x200: "delete"}

    def __init__(self, *dirs: Path):
        import ctypes

        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            pytest.skip(f"inotify is not available here (errno {ctypes.get_errno()})")
        self._wds: dict[int, str] = {}
        mask = sum(self._MASKS)
        for top in dirs:
            for dirpath, _dirs, _files in os.walk(top):
                wd = self._libc.inotify_add_watch(self.fd, os.fsencode(dirpath), mask)
                assert wd >= 0, f"cannot watch {dirpath}"
                self._wds[wd] = dirpath
        self.events()  # what the walk above did itself

    def events(self) -> list[tuple[str, str]]:
        import struct

        out = []
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return out
            pos = 0
            while pos < len(data):
                wd, mask, _cookie, size = struct.unpack_from("iIII", data, pos)
                name = data[pos + 16:pos + 16 + size].rstrip(b"\0").decode("utf-8", "replace")
                pos += 16 + size
                kinds = [label for bit, label in self._MASKS.items() if mask & bit]
                if kinds:
                    out.append((os.path.join(self._wds.get(wd, "?"), name), "+".join(kinds)))

    def close(self) -> None:
        os.close(self.fd)


class RawServer:
    """`probe mcp` on pipes, for bytes no well-behaved client would send."""

    def __init__(self, root: Path, env: dict | None = None):
        env = {**os.environ, "PROBE_LOG": "WARNING", **(env or {})}
        self.proc = subprocess.Popen([sys.executable, "-m", "probe_cli", "mcp", "--root", str(root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, cwd=REPO_ROOT)
        self._buf = b""

    def send(self, line: bytes | str) -> None:
        data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 30.0) -> dict | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return json.loads(line)

    def request(self, rid, method: str, params: dict | None = None) -> dict:
        self.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params else {})}))
        reply = self.recv()
        assert reply is not None, f"no answer to {method}"
        return reply

    def initialize(self) -> None:
        assert "result" in self.request("init", "initialize", INIT)
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def close(self) -> int:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                return self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise
        return self.proc.returncode
