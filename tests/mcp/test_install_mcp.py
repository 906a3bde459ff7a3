"""`probe install-mcp`: the right file per client and scope, merged, idempotent."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest

from probe_core.errors import ConfigError
from probe_core.install_mcp import BLOCK_BEGIN, BLOCK_END, install

PROBE = [sys.executable, "-m", "probe_cli"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    return h


def snapshot(*paths):
    return {p: p.read_bytes() for p in paths if p.exists()}


@pytest.mark.parametrize("client,scope,rel,key,args", [
    ("claude", "project", "{root}/.mcp.json", "mcpServers", ["mcp"]),
    ("claude", "user", "{home}/.claude.json", "mcpServers", ["mcp"]),
    ("cursor", "project", "{root}/.cursor/mcp.json", "mcpServers", ["mcp", "--root", "${workspaceFolder}"]),
    ("cursor", "user", "{home}/.cursor/mcp.json", "mcpServers", ["mcp", "--root", "${workspaceFolder}"]),
])
def test_json_clients_write_merge_and_stay_idempotent(repo, home, client, scope, rel, key, args):
    path = type(repo)(rel.format(root=repo, home=home))
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = {"theme": "dark", "projects": {"/x": {"allowedTools": []}},
                key: {"other": {"command": "other-server", "args": ["--flag"], "env": {"K": "v"}}}}
    path.write_text(json.dumps(existing, indent=2))

    [res] = install(client, scope, repo, command="probe")
    assert res.changed and res.path == path
    data = json.loads(path.read_text())
    assert data[key]["probe"] == {"command": "probe", "args": args}
    assert data[key]["other"] == existing[key]["other"]
    assert data["theme"] == "dark" and data["projects"] == existing["projects"]

    before = snapshot(path)
    [again] = install(client, scope, repo, command="probe")
    assert not again.changed and snapshot(path) == before

    # a stale entry is replaced, nothing else moves
    data[key]["probe"] = {"command": "/old/probe", "args": ["serve"]}
    path.write_text(json.dumps(data, indent=2))
    assert install(client, scope, repo, command="probe")[0].changed
    assert json.loads(path.read_text())[key]["probe"]["command"] == "probe"


def test_json_created_when_missing_and_refuses_broken_files(repo, home):
    [res] = install("claude", "project", repo, command="probe")
    expected = {"mcpServers": {"probe": {"command": "probe", "args": ["mcp"]}}}
    assert res.changed and json.loads((repo / ".mcp.json").read_text()) == expected
    broken = home / ".cursor" / "mcp.json"
    broken.parent.mkdir()
    broken.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        install("cursor", "user", repo)
    assert broken.read_text() == "{not json"  # never clobbered


@pytest.mark.parametrize("scope", ["project", "user"])
def test_codex_toml_merge_by_hand_and_idempotent(repo, home, scope):
    path = (repo if scope == "project" else home) / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    original = (
        '# my codex settings\nmodel = "o4"\napproval_policy = "on-request"\n\n'
        '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-mcp"]\n\n'
        '[profiles.fast]\nmodel = "o4-mini"\n'
    )
    path.write_text(original)
    [res] = install("codex", scope, repo, command="probe")
    assert res.changed
    text = path.read_text()
    assert text.startswith(original)  # everything that was there is untouched
    doc = tomllib.loads(text)
    assert doc["mcp_servers"]["probe"] == {"command": "probe", "args": ["mcp"]}
    assert doc["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-mcp"]}
    assert doc["profiles"]["fast"]["model"] == "o4-mini" and doc["model"] == "o4"

    before = snapshot(path)
    assert not install("codex", scope, repo, command="probe")[0].changed and snapshot(path) == before

    # an existing probe table with extra keys and a multi-line args: only command/args change
    path.write_text(original + '\n[mcp_servers.probe]\ncommand = "/old/probe"\nargs = [\n  "serve",\n  "--x",\n]\n'
                               'startup_timeout_sec = 30\n\n[mcp_servers.probe.env]\nPROBE_LOG = "DEBUG"\n')
    assert install("codex", scope, repo, command="/opt/probe/bin/probe")[0].changed
    doc = tomllib.loads(path.read_text())
    assert doc["mcp_servers"]["probe"]["command"] == "/opt/probe/bin/probe"
    assert doc["mcp_servers"]["probe"]["args"] == ["mcp"]
    assert doc["mcp_servers"]["probe"]["startup_timeout_sec"] == 30
    assert doc["mcp_servers"]["probe"]["env"] == {"PROBE_LOG": "DEBUG"}
    assert doc["mcp_servers"]["docs"]["command"] == "npx"
    before = snapshot(path)
    assert not install("codex", scope, repo, command="/opt/probe/bin/probe")[0].changed
    assert snapshot(path) == before


def test_codex_refuses_invalid_toml(repo, home):
    path = repo / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("model = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        install("codex", "project", repo)
    assert path.read_text() == "model = \n"


def test_agents_md_block_is_idempotent(repo, home):
    (repo / "AGENTS.md").write_text("# Agents\n\nRun `make test` before committing.\n")
    results = install("codex", "project", repo, agents_md=True)
    assert [r.changed for r in results] == [True, True]
    text = (repo / "AGENTS.md").read_text()
    assert text.startswith("# Agents\n\nRun `make test` before committing.\n")
    assert text.count(BLOCK_BEGIN) == 1 and text.count(BLOCK_END) == 1
    assert "grep" in text and "open_file" in text and "source" in text
    before = snapshot(repo / "AGENTS.md", repo / ".codex" / "config.toml")
    assert [r.changed for r in install("codex", "project", repo, agents_md=True)] == [False, False]
    assert snapshot(repo / "AGENTS.md", repo / ".codex" / "config.toml") == before
    # claude reads CLAUDE.md
    res = install("claude", "project", repo, agents_md=True)
    assert res[1].path == repo / "CLAUDE.md" and BLOCK_BEGIN in (repo / "CLAUDE.md").read_text()
    # text appended after the block by the user survives a refresh
    (repo / "AGENTS.md").write_text(text.replace(BLOCK_END, BLOCK_END + "\n\nMy own notes.") .replace(
        "Prefer its tools", "Outdated wording. Prefer its tools"))
    assert install("codex", "project", repo, agents_md=True)[1].changed
    refreshed = (repo / "AGENTS.md").read_text()
    assert "Outdated wording" not in refreshed and "My own notes." in refreshed


def test_cli_install_mcp(repo, home):
    def run(*args):
        return subprocess.run([*PROBE, "install-mcp", *args], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "HOME": str(home)})

    out = run("--client", "claude", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("wrote ") and ".mcp.json" in out.stdout
    out = run("--client", "claude", "--root", str(repo))
    assert out.stdout.startswith("unchanged ")
    out = run("--client", "codex", "--scope", "user", "--root", str(repo), "--agents-md")
    assert out.returncode == 0 and (home / ".codex" / "config.toml").exists() and (repo / "AGENTS.md").exists()
    out = run("--client", "vim", "--root", str(repo))
    assert out.returncode == 2 and "invalid choice" in out.stderr


@pytest.mark.asyncio
async def test_the_written_command_starts_probe_without_path_or_venv(repo, home):
    """The quick start installs Probe into .venv/, which an editor's PATH does not have: the entry
    must name this install absolutely, and a real MCP client must start it from a bare PATH."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    bare = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PROBE_DATA_DIR": os.environ["PROBE_DATA_DIR"]}
    out = subprocess.run([*PROBE, "install-mcp", "--client", "claude", "--root", str(repo)], capture_output=True,
                         text=True, timeout=60, env={**os.environ, "HOME": str(home)})
    assert out.returncode == 0 and out.stderr == "", out.stderr
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["probe"]
    assert os.path.isabs(entry["command"]) and os.access(entry["command"], os.X_OK)
    assert entry["args"][-1] == "mcp"
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=bare, cwd=str(repo))
    async with Client(stdio_client(params), mode="legacy", read_timeout_seconds=60) as client:
        st = (await client.call_tool("index_status", {})).structured_content
        assert st["root"] == str(repo.resolve())


def test_a_command_the_client_may_not_find_is_a_warning(repo, home, tmp_path):
    bare = {**os.environ, "HOME": str(home), "PATH": "/usr/bin:/bin"}
    bare.pop("VIRTUAL_ENV", None)
    out = subprocess.run([*PROBE, "install-mcp", "--client", "cursor", "--root", str(repo), "--command", "probe"],
                         capture_output=True, text=True, timeout=60, env=bare)
    assert out.returncode == 0 and out.stdout.startswith("wrote ")
    assert out.stderr.startswith("probe: warning: `probe` is not on PATH here") and out.stderr.count("\n") == 1
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "probe").write_text("#!/bin/sh\n")
    (venv / "bin" / "probe").chmod(0o755)
    inside = {**bare, "PATH": f"{venv / 'bin'}:/usr/bin:/bin", "VIRTUAL_ENV": str(venv)}
    out = subprocess.run([*PROBE, "install-mcp", "--client", "codex", "--root", str(repo), "--command", "probe"],
                         capture_output=True, text=True, timeout=60, env=inside)
    assert "only through the active virtualenv" in out.stderr
    assert "only in projects you trust" in out.stdout  # Codex ignores an untrusted project's config
