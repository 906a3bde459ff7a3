"""The owner's local RPC: newline-delimited JSON over a Unix domain socket.

A request is one line ``{"v": 1, "method": "search", "params": {...}}``; the answer is one line,
``{"result": ...}`` or ``{"error": {"type": "PathOutsideRoot", "message": "..."}}``. Error types
are the names of ``probe_core.errors`` classes, so an attached process re-raises exactly what the
owner raised and the MCP face shows the same message either way. Every method is read-only, so a
request whose connection died can safely be sent again (to the same or to a new owner).

The socket is created mode 0600 inside ``.probe/`` (itself 0700, or a private runtime directory):
only the user who owns the workspace can talk to its owner. The owner also checks the peer's uid on
every connection (``SO_PEERCRED``) and refuses any other user but root.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import struct
import threading
from collections.abc import Callable
from pathlib import Path

from .. import errors
from ..redaction import redact
from .lock import RPC_PROTOCOL

log = logging.getLogger("probe.engine.rpc")

MAX_LINE = 16 * 1024 * 1024
Dispatch = Callable[[str, dict], object]


class OwnerUnavailable(errors.ProbeError):
    """No owner answered: nothing listens on the socket, or the connection dropped mid-request."""


def error_payload(exc: BaseException) -> dict:
    """An error as the owner sends it to an attached process: redacted here, since the other side
    may print it anywhere (a CLI's stderr, an editor's log)."""
    from ..storage.damage import as_probe_error

    exc = as_probe_error(exc)  # SQLite saying a file is damaged: IndexDamaged, with the fix
    if isinstance(exc, errors.ProbeError):
        return {"type": type(exc).__name__, "message": redact(str(exc))}
    return {"type": "InternalError", "message": redact(f"internal error in the Probe owner process: "
                                                       f"{type(exc).__name__}: {exc}")}


def raise_error(payload: dict) -> None:
    """Re-raise an error answer as the ``ProbeError`` subclass it names."""
    cls = getattr(errors, str(payload.get("type")), None)
    if not (isinstance(cls, type) and issubclass(cls, errors.ProbeError)):
        cls = errors.ProbeError
    raise cls(str(payload.get("message", "unknown error")))


def _read_line(sock: socket.socket, buf: bytearray) -> bytes | None:
    """The next line (without ``\\n``), or None at EOF before a full line."""
    while True:
        nl = buf.find(b"\n")
        if nl >= 0:
            line = bytes(buf[:nl])
            del buf[:nl + 1]
            return line
        if len(buf) > MAX_LINE:
            raise ValueError("RPC message too long")
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf.extend(chunk)


class RpcServer:
    """Accepts connections on ``path`` and answers each request line with ``dispatch``."""

    def __init__(self, path: Path, dispatch: Dispatch):
        self.path = Path(path)
        self.dispatch = dispatch
        self._sock: socket.socket | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._inode: int | None = None

    def start(self) -> None:
        # Only the lock holder binds, so whatever sits at the path is a dead owner's leftover.
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            sock.bind(str(self.path))
        finally:
            os.umask(old_umask)
        sock.listen(32)
        sock.settimeout(0.5)
        self._inode = os.stat(self.path).st_ino
        self._sock = sock
        self._thread = threading.Thread(target=self._accept_loop, name="probe-rpc-accept", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._thread is not None:
            self._thread.join(timeout=2)
        try:  # remove the socket file only if it is still ours
            if self._inode is not None and os.stat(self.path).st_ino == self._inode:
                self.path.unlink()
        except OSError:
            pass

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            sock = self._sock
            if sock is None:
                return
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                log.exception("accept failed")
                continue
            threading.Thread(target=self._serve, args=(conn,), name="probe-rpc-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = bytearray()
        with conn:
            if (peer := peer_uid(conn)) is not None and peer not in (os.getuid(), 0):
                # The socket's mode already keeps other users out; this holds even if someone
                # loosened the mode or the directory (a shared .probe/ on a group-writable disk).
                log.warning("refused an RPC connection from uid %d (this workspace belongs to uid %d)",
                            peer, os.getuid())
                answer = {"error": {"type": "ProbeError", "message": f"refused: uid {peer} does not own this workspace"}}
                try:
                    conn.sendall(json.dumps(answer).encode() + b"\n")
                except OSError:
                    pass
                return
            conn.settimeout(None)
            while not self._stop.is_set():
                try:
                    line = _read_line(conn, buf)
                except (OSError, ValueError):
                    return
                if line is None:
                    return
                answer = self._answer(line)
                try:
                    conn.sendall(json.dumps(answer).encode() + b"\n")
                except OSError:
                    return

    def _answer(self, line: bytes) -> dict:
        try:
            req = json.loads(line)
            if not isinstance(req, dict) or not isinstance(req.get("method"), str):
                raise ValueError("not an RPC request")
        except ValueError as exc:
            return {"error": {"type": "ProbeError", "message": f"bad RPC request: {exc}"}}
        if req.get("v") != RPC_PROTOCOL:
            return {"error": {"type": "ConfigError", "message":
                              f"the Probe process that owns this workspace speaks RPC v{RPC_PROTOCOL}, this one "
                              f"v{req.get('v')}: run the same Probe version in every client"}}
        params = req.get("params") or {}
        try:
            return {"result": self.dispatch(req["method"], params)}
        except Exception as exc:  # every failure becomes an answer; the owner keeps serving
            if not isinstance(exc, errors.ProbeError):
                log.exception("RPC %s failed", req["method"])
            return {"error": error_payload(exc)}


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (``SO_PEERCRED``; Linux), or None
    where the platform cannot say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def rpc_call(path: Path | str, method: str, params: dict, *, timeout: float,
             connect_timeout: float = 2.0) -> object:
    """Send one request and wait for its answer.

    Raises ``OwnerUnavailable`` when nobody listens or the connection drops before the answer,
    ``BackendUnavailable`` when the owner does not answer within ``timeout``, and the owner's own
    ``ProbeError`` for an error answer.
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(connect_timeout)
        try:
            sock.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise OwnerUnavailable(f"no Probe owner listens on {path}") from exc
        except OSError as exc:
            raise OwnerUnavailable(f"cannot reach the Probe owner on {path}: {exc}") from exc
        sock.settimeout(timeout)
        try:
            sock.sendall(json.dumps({"v": RPC_PROTOCOL, "method": method, "params": params}).encode() + b"\n")
            line = _read_line(sock, bytearray())
        except TimeoutError as exc:
            raise errors.BackendUnavailable(
                f"the Probe owner process did not answer {method} within {timeout:.0f} s") from exc
        except OSError as exc:
            raise OwnerUnavailable(f"connection to the Probe owner dropped: {exc}") from exc
        if line is None:
            raise OwnerUnavailable("the Probe owner closed the connection before answering")
    finally:
        sock.close()
    answer = json.loads(line)
    if "error" in answer:
        raise_error(answer["error"])
    return answer.get("result")
