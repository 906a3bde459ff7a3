"""What the stack runs, decided once and written to an env file compose reads.

The env file (``~/.local/state/probe/stack.env`` unless ``PROBE_STATE_DIR`` says otherwise) holds
the TEI image tag for this GPU, the preset's models, the GPU to reserve and the compose files in
use, so ``probe down`` and a by-hand ``docker compose --env-file ...`` see the same stack that
``probe up`` started. The stack is per machine (fixed ports), not per workspace.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .. import environment
from ..config import PRESETS
from ..hardware import Recommendation, cpu_tag
from .errors import StackConfigError

STACK_PROFILES = ("lite", "balanced", "pro")
ENV_FILE_NAME = "stack.env"

#: Where each service answers on this machine (the compose file publishes them on 127.0.0.1).
ENDPOINTS = {
    "qdrant": "http://127.0.0.1:6333",
    "tei": "http://127.0.0.1:8080",
    "reranker": "http://127.0.0.1:8081",
}

#: compose files by role, relative to the compose directory
BASE_FILE = "docker-compose.yml"
CPU_FILE = "docker-compose.cpu.yml"
AUTH_FILE = "docker-compose.auth.yml"
LAN_FILE = "docker-compose.lan.yml"

_API_KEY_VARS = ("QDRANT_API_KEY", "TEI_API_KEY", "RERANKER_API_KEY")
_SAFE_VALUE = re.compile(r"^[A-Za-z0-9._:/@+=,-]*$")


def state_dir() -> Path:
    """Per-user state: ``$PROBE_STATE_DIR``, else ``$XDG_STATE_HOME/probe``, else ``~/.local/state/probe``."""
    if environment.get("PROBE_STATE_DIR"):
        return Path(environment.get("PROBE_STATE_DIR")).expanduser()
    base = environment.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "probe"


def env_file_path() -> Path:
    return state_dir() / ENV_FILE_NAME


@dataclass(frozen=True, slots=True)
class StackSettings:
    """One stack: profile, images, models, GPU, and the compose files that express it."""

    profile: str
    tei_image_tag: str
    tei_model_id: str
    reranker_model: str | None
    gpu: bool
    gpu_device: str | None
    files: tuple[str, ...] = (BASE_FILE,)

    @property
    def services(self) -> tuple[str, ...]:
        """The services this profile starts (the compose file's profiles say the same)."""
        return ("qdrant", "tei", "reranker") if self.reranker_model else ("qdrant", "tei")

    def env(self) -> dict[str, str]:
        """The variables compose interpolates (and the ones ``probe down`` reads back)."""
        out = {
            "PROBE_PRESET": self.profile,
            "TEI_IMAGE_TAG": self.tei_image_tag,
            "TEI_MODEL_ID": self.tei_model_id,
            "PROBE_STACK_GPU": "1" if self.gpu else "0",
            "PROBE_STACK_FILES": ",".join(self.files),
        }
        if self.reranker_model:
            out["RERANKER_MODEL"] = self.reranker_model
        if self.gpu_device is not None:
            out["PROBE_GPU_DEVICE"] = self.gpu_device
        return out

    @classmethod
    def from_env(cls, env: dict[str, str]) -> StackSettings:
        try:
            profile = env["PROBE_PRESET"]
            return cls(
                profile=profile,
                tei_image_tag=env["TEI_IMAGE_TAG"],
                tei_model_id=env["TEI_MODEL_ID"],
                reranker_model=env.get("RERANKER_MODEL") if PRESETS[profile].reranker_model else None,
                gpu=env.get("PROBE_STACK_GPU", "1") == "1",
                gpu_device=env.get("PROBE_GPU_DEVICE"),
                files=tuple(f for f in env.get("PROBE_STACK_FILES", BASE_FILE).split(",") if f),
            )
        except KeyError as exc:
            raise StackConfigError(f"the stack env file lacks {exc.args[0]}: run `probe up` again") from None


def plan(
    profile: str,
    recommendation: Recommendation,
    *,
    cpu: bool = False,
    tei_image_tag: str | None = None,
    api_keys: bool = False,
    lan_unsafe: bool = False,
    env: dict[str, str] | None = None,
) -> StackSettings:
    """Decide the stack for ``profile`` on the hardware ``recommendation`` describes.

    The GPU variant when the recommendation found a GPU TEI can use and ``cpu`` is not forced;
    otherwise the CPU variant (no GPU reservation, the CPU image). ``tei_image_tag`` (or
    ``TEI_IMAGE_TAG`` in the environment) overrides the detected tag, and a GPU tag then means
    the GPU variant (the engine behind ``DOCKER_HOST`` may be another machine's).
    """
    env = environment.environ() if env is None else env
    if profile not in STACK_PROFILES:
        hint = " (the embedded default needs no stack)" if profile == "embedded" else ""
        raise StackConfigError(f"unknown stack profile {profile!r}{hint}; choose one of {', '.join(STACK_PROFILES)}")
    spec = PRESETS[profile]
    tag = tei_image_tag or env.get("TEI_IMAGE_TAG") or None
    gpu = recommendation.tei.gpu and not cpu
    if tag is None:
        tag = recommendation.tei.tag if gpu else cpu_tag()
    else:  # an explicit tag says what the engine has (DOCKER_HOST may be another machine)
        gpu = not cpu and not tag.startswith("cpu")
    if not _SAFE_VALUE.match(tag):
        raise StackConfigError(f"TEI image tag {tag!r} has characters an image tag cannot have")
    files = [BASE_FILE]
    if not gpu:
        files.append(CPU_FILE)
    if api_keys or lan_unsafe:
        missing = [v for v in _API_KEY_VARS if not env.get(v)]
        if missing:
            why = "LAN mode publishes the stack beyond this machine, so it requires API keys; " if lan_unsafe else ""
            raise StackConfigError(f"{why}set {', '.join(missing)} (long random strings) first")
        files.append(AUTH_FILE)
    if lan_unsafe:
        files.append(LAN_FILE)
    return StackSettings(
        profile=profile,
        tei_image_tag=tag,
        tei_model_id=spec.embedding_model,
        reranker_model=spec.reranker_model,
        gpu=gpu,
        gpu_device=(recommendation.device_id or "0") if gpu else None,
        files=tuple(files),
    )


def write_env_file(settings: StackSettings, path: Path | None = None) -> Path:
    """Write the env file atomically; returns its path."""
    path = path or env_file_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# Written by `probe up`; compose reads it with --env-file. Rerun `probe up` to change it."]
    for key, value in settings.env().items():
        if not _SAFE_VALUE.match(value):
            raise StackConfigError(f"{key}={value!r} cannot be written to an env file safely")
        lines.append(f"{key}={value}")
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", "utf-8")
    os.replace(tmp, path)
    return path


def read_env_file(path: Path | None = None) -> dict[str, str] | None:
    """The env file's variables, or None when ``probe up`` never wrote one."""
    path = path or env_file_path()
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return None
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        out[key.strip()] = value.strip()
    return out
