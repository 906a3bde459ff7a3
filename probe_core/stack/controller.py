"""``probe up`` / ``probe down``: plan the stack, write its env file, run compose, watch it come up.

Compose does the starting and stopping (the compose file is the single description of the
stack); the Docker SDK does the watching: container state, health, logs and events, and whether
the engine can hand out NVIDIA GPUs at all.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import docker

from ..hardware import NvmlReading, read_nvml, recommend
from .compose import DEFAULT_PROJECT, Compose
from .docker_state import ServiceState, StackEvent, connect, gpu_runtime, service_logs, service_states, watch_events
from .errors import ComposeFailed, StackConfigError, StackNotReady
from .settings import ENDPOINTS, StackSettings, env_file_path, plan, read_env_file, write_env_file

Say = Callable[[str], None]

# A crash loop caught while its container runs again shows no exit code (Docker and podman reset it
# on every start): how long ``wait_ready`` looks again for the stopped state that has it.
CRASH_LOOK_S = 3.0
# ``compose down`` that meets a crash-looping container mid-restart fails ("container state improper"):
# how many times it is run, a second apart, before the failure is reported.
DOWN_TRIES = 3


def _quiet(_: str) -> None:
    pass


@dataclass
class StackStatus:
    """The stack ``probe up`` last configured (None if never) and what the engine runs now."""

    settings: StackSettings | None
    services: dict[str, ServiceState] = field(default_factory=dict)

    @property
    def expected(self) -> tuple[str, ...]:
        return self.settings.services if self.settings else tuple(sorted(self.services))

    @property
    def running(self) -> bool:
        return any(s.status == "running" for s in self.services.values())

    @property
    def ready(self) -> bool:
        return bool(self.expected) and all(
            n in self.services and self.services[n].ready for n in self.expected)

    def describe(self) -> list[str]:
        lines = []
        for name in self.expected:
            state = self.services.get(name)
            lines.append(state.describe() if state else f"{name}: not created")
        return lines


class StackController:
    """Start, stop and inspect one compose project of Probe's stack."""

    def __init__(
        self,
        *,
        project: str = DEFAULT_PROJECT,
        env_file: Path | None = None,
        compose_directory: Path | None = None,
        extra_files: Sequence[Path] = (),
        compose_argv: list[str] | None = None,
        docker_timeout: float = 3.0,
    ) -> None:
        """``extra_files`` are compose overrides applied after the planned ones (tests use stand-in images)."""
        self.project = project
        self.env_file = Path(env_file) if env_file else env_file_path()
        self.compose_directory = compose_directory
        self.extra_files = tuple(Path(f) for f in extra_files)
        self.compose_argv = compose_argv
        self.docker_timeout = docker_timeout
        self._client: docker.DockerClient | None = None

    # -- planning -----------------------------------------------------------------------------
    def plan(self, profile: str | None = None, *, reading: NvmlReading | None = None, cpu: bool = False,
             tei_image_tag: str | None = None, api_keys: bool = False, lan_unsafe: bool = False) -> StackSettings:
        """Settings for ``profile`` (default: the preset this machine's GPU fits) on the detected hardware."""
        rec = recommend(reading if reading is not None else read_nvml())
        if profile is None:
            if rec.preset == "embedded":
                raise StackConfigError(
                    f"no stack preset fits this machine ({rec.reason}); pass --profile lite to run TEI on the CPU "
                    "anyway, or keep the embedded default")
            profile = rec.preset
        return plan(profile, rec, cpu=cpu, tei_image_tag=tei_image_tag, api_keys=api_keys, lan_unsafe=lan_unsafe)

    def configured(self) -> StackSettings | None:
        """The settings ``probe up`` last wrote, or None."""
        env = read_env_file(self.env_file)
        return StackSettings.from_env(env) if env else None

    # -- engine ---------------------------------------------------------------------------------
    @property
    def client(self) -> docker.DockerClient:
        """The Docker SDK client (``DockerUnavailable`` with the fix when no engine answers)."""
        if self._client is None:
            self._client = connect(self.docker_timeout)
        return self._client

    def _compose(self, settings: StackSettings) -> Compose:
        return Compose(env_file=self.env_file, files=[*settings.files, *self.extra_files], project=self.project,
                       directory=self.compose_directory, argv=self.compose_argv)

    # -- verbs ----------------------------------------------------------------------------------
    def up(self, settings: StackSettings, *, wait_s: float = 300, poll_s: float = 1.0, say: Say = _quiet) -> StackStatus:
        """Write the env file, ``compose up -d``, then wait up to ``wait_s`` for every service to be healthy."""
        client = self.client  # fail first, and clearly, when there is no engine
        if settings.gpu:
            ok, detail = gpu_runtime(client)
            if not ok:
                raise StackConfigError(
                    f"the Docker engine cannot give containers a GPU: {detail}. Install the NVIDIA container "
                    "toolkit and run `sudo nvidia-ctk runtime configure --runtime=docker`, then restart Docker; "
                    "or `probe up --cpu`")
        write_env_file(settings, self.env_file)
        say(f"env file: {self.env_file}")
        say(f"TEI image: {settings.tei_image_tag} · embedder: {settings.tei_model_id}"
            + (f" · reranker: {settings.reranker_model}" if settings.reranker_model else "")
            + (f" · GPU {settings.gpu_device}" if settings.gpu else " · CPU"))
        self._compose(settings).run("up", "--detach", "--remove-orphans", profiles=[settings.profile], on_line=say)
        if wait_s <= 0:
            return self.status()
        return self.wait_ready(settings, wait_s=wait_s, poll_s=poll_s, say=say)

    def wait_ready(self, settings: StackSettings, *, wait_s: float, poll_s: float = 1.0, say: Say = _quiet) -> StackStatus:
        """Poll container state until all of ``settings.services`` are ready; ``StackNotReady`` otherwise."""
        deadline = time.monotonic() + wait_s
        seen: dict[str, str] = {}
        while True:
            status = StackStatus(settings, service_states(self.client, self.project))
            for line in status.describe():
                name = line.split(":", 1)[0]
                if seen.get(name) != line:
                    seen[name] = line
                    say(line)
            failed = [s for n, s in status.services.items() if n in settings.services and s.failed]
            if failed:
                s = self._with_exit_code(failed[0], poll_s)
                tail = service_logs(self.client, self.project, s.service, tail=5).strip().splitlines()
                last = f"; last log line: {tail[-1].strip()}" if tail else ""
                raise StackNotReady(f"{s.describe()}{last} (see `probe doctor`, or the container logs)")
            if status.ready:
                return status
            if time.monotonic() >= deadline:
                waiting = ", ".join(ln for ln in status.describe() if not ln.endswith(("healthy", "running")))
                raise StackNotReady(
                    f"not ready after {wait_s:g}s: {waiting}. The first start downloads the models; run "
                    "`probe up` again to keep waiting, or check `probe doctor`")
            time.sleep(poll_s)

    def _with_exit_code(self, s: ServiceState, poll_s: float) -> ServiceState:
        """``s``, or for a crash loop caught running again, its state when next seen stopped (for
        the exit code: "tei: stopped (exit 3), restarted 5×" says more than "tei: running")."""
        deadline = time.monotonic() + CRASH_LOOK_S
        while s.status == "running" and s.restart_count >= 2 and time.monotonic() < deadline:
            time.sleep(min(poll_s, 0.1))
            s = service_states(self.client, self.project).get(s.service, s)
        return s

    def down(self, *, volumes: bool = False, say: Say = _quiet) -> None:
        """``compose down`` for the stack ``probe up`` started (``volumes`` also deletes indexes and models)."""
        settings = self.configured()
        if settings is None:
            raise StackConfigError(
                f"no stack env file at {self.env_file}: `probe up` started nothing here "
                "(a stack started by hand stops with `docker compose down`)")
        self.client  # noqa: B018 - fail clearly when there is no engine
        args = ["down", "--remove-orphans"] + (["--volumes"] if volumes else [])
        for attempt in range(1, DOWN_TRIES + 1):
            try:
                self._compose(settings).run(*args, profiles=[settings.profile], on_line=say)
                return
            except ComposeFailed as exc:  # a container restarting under it: what is left goes next time
                if attempt == DOWN_TRIES:
                    raise
                say(f"{exc}; trying again")
                time.sleep(1.0)

    def status(self) -> StackStatus:
        """What ``probe up`` configured and what the engine runs for this project."""
        return StackStatus(self.configured(), service_states(self.client, self.project))

    def logs(self, service: str, tail: int = 50) -> str:
        return service_logs(self.client, self.project, service, tail)

    def events(self, stop: threading.Event) -> Iterator[StackEvent]:
        """Live container events of the stack until ``stop`` is set (for the TUI's dashboard)."""
        return watch_events(self.client, self.project, stop)

    def gpu_runtime(self) -> tuple[bool, str]:
        return gpu_runtime(self.client)


def endpoint_settings(settings: StackSettings) -> dict[str, str]:
    """The environment a workspace needs to use this stack (QDRANT_URL, TEI_EMBED_URL, ...)."""
    out = {"PROBE_PRESET": settings.profile, "QDRANT_URL": ENDPOINTS["qdrant"], "TEI_EMBED_URL": ENDPOINTS["tei"]}
    if settings.reranker_model:
        out["RERANKER_URL"] = ENDPOINTS["reranker"]
    return out
