"""The running stack as the Docker engine sees it, through the Docker SDK (``docker`` package).

Containers are found by compose's labels (``com.docker.compose.project`` / ``.service``), so this
works for a stack started by ``probe up`` or by hand. Any Docker-compatible engine will do: Docker,
or podman's ``podman system service`` socket via ``DOCKER_HOST``.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import docker
from docker.errors import APIError, DockerException, NotFound

from .. import environment
from .errors import DockerUnavailable

PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"


def connect(timeout: float = 3.0) -> docker.DockerClient:
    """A client that has answered a ping; ``DockerUnavailable`` (one line, with the fix) otherwise."""
    where = environment.get("DOCKER_HOST") or "the default socket (/var/run/docker.sock)"
    try:
        client = docker.from_env(timeout=max(1, int(timeout)))
        client.ping()
        return client
    except DockerException as exc:
        raise DockerUnavailable(
            f"no Docker engine answers at {where} ({_short(exc)}): start Docker, or point DOCKER_HOST at a "
            "running engine; the embedded default needs no Docker") from exc


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    for marker in ("Connection refused", "No such file or directory", "Permission denied", "timed out"):
        if marker in text:
            return marker.lower()
    return text[:160]


@dataclass(frozen=True, slots=True)
class PublishedPort:
    host_ip: str
    host_port: int
    container_port: str  # "6333/tcp"


@dataclass(frozen=True, slots=True)
class ServiceState:
    """One compose service's container."""

    service: str
    container: str
    status: str  # created | running | restarting | exited | paused | dead
    health: str | None  # starting | healthy | unhealthy, None without a healthcheck
    image: str
    ports: tuple[PublishedPort, ...] = ()
    exit_code: int | None = None
    restart_count: int = 0

    @property
    def ready(self) -> bool:
        """Running, and healthy where a healthcheck exists."""
        return self.status == "running" and self.health in (None, "healthy")

    @property
    def failed(self) -> bool:
        """Stopped, dead, unhealthy or crash-looping (Docker says "restarting", podman "stopped" with a
        growing restart count)."""
        return (self.status in ("exited", "dead", "stopped", "restarting") or self.health == "unhealthy"
                or self.restart_count >= 2)

    def describe(self) -> str:
        health = f", {self.health}" if self.health and self.status == "running" else ""
        stopped = self.status in ("exited", "stopped", "dead", "restarting")
        code = f" (exit {self.exit_code})" if stopped and self.exit_code is not None else ""
        restarts = f", restarted {self.restart_count}×" if self.restart_count else ""
        return f"{self.service}: {self.status}{code}{health}{restarts}"


def _ports(attrs: dict) -> tuple[PublishedPort, ...]:
    out = []
    for container_port, bindings in ((attrs.get("NetworkSettings") or {}).get("Ports") or {}).items():
        for b in bindings or ():
            try:
                out.append(PublishedPort(b.get("HostIp") or "0.0.0.0", int(b["HostPort"]), container_port))
            except (KeyError, TypeError, ValueError):
                continue
    return tuple(out)


def _state(container) -> ServiceState:
    attrs = container.attrs
    state = attrs.get("State") or {}
    health = (state.get("Health") or {}).get("Status") or None
    return ServiceState(
        service=container.labels.get(SERVICE_LABEL, container.name),
        container=container.name,
        status=state.get("Status") or container.status,
        health=health if health in ("starting", "healthy", "unhealthy") else None,
        image=(attrs.get("Config") or {}).get("Image", ""),
        ports=_ports(attrs),
        exit_code=state.get("ExitCode"),
        restart_count=int(attrs.get("RestartCount") or 0),
    )


# Listing containers while one exits or goes away can fail once: podman answers 500 ("read
# /proc/PID/cgroup: no such process"), docker-py raises NotFound for a container removed between
# the list and its inspect. Tries of a list before the engine is said to have stopped answering:
LIST_TRIES = 3


def service_states(client: docker.DockerClient, project: str) -> dict[str, ServiceState]:
    """Every container of the compose project, by service name (stopped ones included)."""
    for attempt in range(1, LIST_TRIES + 1):
        try:
            containers = client.containers.list(all=True, filters={"label": f"{PROJECT_LABEL}={project}"})
            break
        except DockerException as exc:
            if attempt == LIST_TRIES or not _transient(exc):
                raise DockerUnavailable(f"Docker stopped answering while listing containers: {_short(exc)}") from exc
            time.sleep(0.2)
    return {s.service: s for s in (_state(c) for c in containers)}


def _transient(exc: DockerException) -> bool:
    """A failure that a container changing state under the request explains (worth a second try)."""
    return isinstance(exc, NotFound) or (isinstance(exc, APIError) and exc.is_server_error())


def service_logs(client: docker.DockerClient, project: str, service: str, tail: int = 50) -> str:
    """The last ``tail`` log lines of a service's container ("" when it has none)."""
    try:
        containers = client.containers.list(
            all=True, filters={"label": [f"{PROJECT_LABEL}={project}", f"{SERVICE_LABEL}={service}"]})
        if not containers:
            return ""
        raw = containers[0].logs(tail=tail, stdout=True, stderr=True)
    except (DockerException, NotFound):
        return ""
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


@dataclass(frozen=True, slots=True)
class StackEvent:
    """A container event of the project: ``action`` is Docker's (create, start, die, health_status...)."""

    service: str
    action: str
    container: str = ""
    attributes: dict = field(default_factory=dict)


def watch_events(client: docker.DockerClient, project: str, stop: threading.Event) -> Iterator[StackEvent]:
    """Live container events of the project until ``stop`` is set (checked as events arrive)."""
    stream = client.events(decode=True, filters={"type": "container", "label": f"{PROJECT_LABEL}={project}"})
    closer = threading.Thread(target=lambda: (stop.wait(), stream.close()), daemon=True)
    closer.start()
    try:
        for ev in stream:
            if stop.is_set():
                break
            attrs = (ev.get("Actor") or {}).get("Attributes") or {}
            yield StackEvent(service=attrs.get(SERVICE_LABEL, ""), action=ev.get("Action") or ev.get("status", ""),
                             container=attrs.get("name", ""), attributes=attrs)
    except (DockerException, OSError, ValueError):
        return  # the stream was closed under us: that is how it ends
    finally:
        stream.close()


def gpu_runtime(client: docker.DockerClient) -> tuple[bool, str]:
    """Whether the engine can hand NVIDIA GPUs to containers, and what says so."""
    try:
        info = client.info()
    except DockerException as exc:
        raise DockerUnavailable(f"Docker stopped answering: {_short(exc)}") from exc
    runtimes = info.get("Runtimes") or {}
    if "nvidia" in runtimes:
        return True, "the nvidia runtime is registered with the engine"
    cdi = [d.get("ID", "") for d in info.get("DiscoveredDevices") or () if isinstance(d, dict)]
    if any(i.startswith("nvidia.com/gpu") for i in cdi):
        return True, "CDI lists NVIDIA GPUs (" + ", ".join(i for i in cdi if i.startswith("nvidia.com/gpu")) + ")"
    names = ", ".join(sorted(runtimes)) or "none"
    return False, f"no NVIDIA runtime or CDI GPU device (runtimes: {names})"


def container_publishing(client: docker.DockerClient, port: int) -> ServiceState | None:
    """The running container (any project) that publishes host ``port``, if one does."""
    try:
        containers = client.containers.list()
    except DockerException:
        return None
    for c in containers:
        state = _state(c)
        if any(p.host_port == port for p in state.ports):
            return state
    return None
