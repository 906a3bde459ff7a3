"""Who owns a workspace: an exclusive ``flock`` on ``.probe/engine.lock``, and where the owner listens.

``flock`` locks belong to an open file description, so the kernel drops the lock the moment its
holder dies, SIGKILL included: a crashed owner can never leave a stale lock behind. Two handles in
one process conflict like two processes do, which keeps in-process tests honest.

The owner's socket is ``.probe/engine.sock`` when that path fits ``AF_UNIX`` (108 bytes with the
terminating NUL); deeper roots use a short name under ``$XDG_RUNTIME_DIR`` or ``/tmp/probe-<uid>``.
Because two clients may not agree on ``XDG_RUNTIME_DIR``, the owner writes the path it bound to
``.probe/engine.json`` and attached processes read it from there.
"""
from __future__ import annotations

import fcntl
import json
import os
import stat
import time
from pathlib import Path

from .. import environment
from ..errors import ConfigError
from ..private_dir import ensure_private_dir

LOCK_FILE = "engine.lock"
SOCKET_FILE = "engine.sock"
INFO_FILE = "engine.json"
AF_UNIX_PATH_MAX = 107  # bytes, without the terminating NUL
RPC_PROTOCOL = 1


class EngineLock:
    """The exclusive owner lock of one workspace (non-blocking; re-entrant within this object)."""

    def __init__(self, probe_dir: Path):
        self.path = Path(probe_dir) / LOCK_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it. True when this object holds it afterwards."""
        if self._fd is not None:
            return True
        ensure_private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except OSError:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def is_free(self) -> bool:
        """Whether nobody holds the lock right now (probes with a throwaway descriptor)."""
        if self._fd is not None:
            return False
        if not self.path.exists():
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        finally:
            os.close(fd)  # closing drops the probe's lock, if it got one
        return True

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def socket_path_for(probe_dir: Path) -> Path:
    """Where an owner of this workspace binds its socket (short enough for ``AF_UNIX``)."""
    preferred = Path(probe_dir) / SOCKET_FILE
    if len(os.fsencode(preferred)) <= AF_UNIX_PATH_MAX:
        return preferred
    import hashlib  # here, not at the top: a warm CLI call imports this module and never gets here
    import tempfile

    digest = hashlib.sha256(os.fsencode(Path(probe_dir).resolve())).hexdigest()[:20]
    runtime = environment.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        base = Path(runtime)
    else:
        base = Path(tempfile.gettempdir()) / f"probe-{os.getuid()}"
        try:
            base.mkdir(mode=0o700, exist_ok=True)
            info = os.lstat(base)  # in a shared /tmp anyone could have made it first, or planted a link
        except OSError as exc:
            raise ConfigError(f"cannot make {base} for the owner's socket ({exc.strerror or exc}); "
                              "set XDG_RUNTIME_DIR to a directory of yours") from exc
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            raise ConfigError(f"{base} is not a directory of this user's; set XDG_RUNTIME_DIR to a directory of yours")
        ensure_private_dir(base)
    path = base / f"probe-{digest}.sock"
    if len(os.fsencode(path)) > AF_UNIX_PATH_MAX:  # a very long TMPDIR
        path = Path("/tmp") / f"probe-{os.getuid()}-{digest}.sock"
    return path


OWNER_NAMES = {"mcp": "probe mcp", "daemon": "Probe daemon", "index": "probe index"}


def owner_name(kind: str | None) -> str:
    """What a user knows an owner of this ``kind`` as (``engine.json``'s and ``index_status``'s kind)."""
    return OWNER_NAMES.get(kind or "", "probe mcp")  # an owner from before kinds existed was a probe mcp


def write_owner_info(probe_dir: Path, socket_path: Path, kind: str = "mcp", settings: str | None = None) -> None:
    """Publish the owner's pid, socket and kind for attached processes (atomic replace). ``kind``:
    ``mcp`` (a ``probe mcp`` an editor runs), ``daemon`` (the background owner the CLI starts,
    which ``probe stop`` may end) or ``index`` (a blocking ``probe index``, ``foreground.py``);
    ``settings``: its ``settings_digest``."""
    _write_info(probe_dir, {"pid": os.getpid(), "role": "owner", "kind": kind, "socket": str(socket_path),
                            "protocol": RPC_PROTOCOL, "started_at": time.time(), "settings": settings})


def _write_info(probe_dir: Path, info: dict) -> None:
    target = Path(probe_dir) / INFO_FILE
    tmp = target.with_name(f".{INFO_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info) + "\n", "utf-8")
    os.replace(tmp, target)


def read_owner_info(probe_dir: Path) -> dict:
    """What the current (or last) owner published; ``{}`` when nothing readable is there."""
    try:
        data = json.loads((Path(probe_dir) / INFO_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
