"""Who answers on a local endpoint: a container published by this machine's Docker, an SSH
forward, another local process, or a remote host.

The two-computer setup keeps every URL on 127.0.0.1 through ``ssh -L``; the doctor says so when a
loopback port answers but no local container publishes it. On Linux the listening socket is
traced to its process through /proc (own processes, or all when root), which names ``ssh``.
"""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import docker

from ..stack.docker_state import container_publishing

_LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


@dataclass(frozen=True, slots=True)
class Endpoint:
    url: str
    host: str
    port: int
    reachable: bool
    origin: str  # "container probe-tei-1" | "ssh forward (pid 42)" | "process python3 (pid 7)" | "forwarded/remote" | "remote host"
    container: str | None = None

    @property
    def where(self) -> str:
        state = "reachable" if self.reachable else "not answering"
        return f"{self.host}:{self.port} → {state}" + (f" ({self.origin})" if self.reachable else "")


def parse(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return host, port


def port_open(host: str, port: int, timeout_s: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def listening_inodes(port: int | None = None) -> set[str]:
    """Socket inodes of the TCP listeners on this machine (on ``port``, or all), from /proc."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == "0A" and (port is None or int(cols[1].rsplit(":", 1)[1], 16) == port):
                inodes.add(cols[9])
    return inodes


def listener_process(port: int) -> tuple[str, int] | None:
    """(process name, pid) listening on TCP ``port`` on this machine, when /proc lets us see it."""
    inodes = listening_inodes(port)
    if not inodes:
        return None
    targets = {f"socket:[{i}]" for i in inodes}
    for pid_dir in Path("/proc").iterdir():
        if not pid_dir.name.isdigit():
            continue
        try:
            fds = list((pid_dir / "fd").iterdir())
        except OSError:  # not ours to read, or gone
            continue
        for fd in fds:
            try:
                if os.readlink(fd) in targets:
                    return (pid_dir / "comm").read_text().strip(), int(pid_dir.name)
            except OSError:  # closed while we looked
                continue
    return None


def probe_endpoint(url: str, client: docker.DockerClient | None, timeout_s: float = 1.5) -> Endpoint:
    """Is ``url`` answering, and who is behind it."""
    host, port = parse(url)
    reachable = port_open(host, port, timeout_s)
    if host not in _LOOPBACK:
        return Endpoint(url, host, port, reachable, "remote host")
    container = container_publishing(client, port) if client is not None else None
    if container is not None:
        return Endpoint(url, host, port, reachable, f"container {container.container}", container.container)
    listener = listener_process(port) if reachable else None
    if listener and listener[0] in ("ssh", "autossh"):
        origin = f"SSH forward ({listener[0]} pid {listener[1]})"
    elif listener:
        origin = f"process {listener[0]} (pid {listener[1]}), not a local container"
    elif client is None:
        origin = "no local Docker to ask: an SSH forward or a server outside Docker"
    else:
        origin = "forwarded/remote: no local container publishes it (looks like an SSH forward)"
    return Endpoint(url, host, port, reachable, origin)
