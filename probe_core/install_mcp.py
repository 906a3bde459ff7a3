"""``probe install-mcp``: register ``probe mcp`` with Claude Code, Cursor or Codex.

Each writer merges into what is there (other servers and settings are kept byte for byte where
the format allows), writes only when something changes, and refuses to touch a file it cannot
parse. User scope honours ``$HOME``.

| client | project scope | user scope |
| --- | --- | --- |
| claude | ``<root>/.mcp.json`` ``mcpServers.probe`` | ``~/.claude.json`` ``mcpServers.probe`` |
| cursor | ``<root>/.cursor/mcp.json`` ``mcpServers.probe`` | ``~/.cursor/mcp.json`` |
| codex | ``<root>/.codex/config.toml`` ``[mcp_servers.probe]`` | ``~/.codex/config.toml`` |

Claude Code and Codex start servers in the project directory, where ``probe mcp`` finds the
repository; Cursor's working directory is not the project, so its entry passes
``--root ${workspaceFolder}`` (Cursor expands it). Codex reads a project's ``.codex/config.toml``
only when the project is trusted (Codex asks the first time it opens it); ``--scope user`` works
everywhere.

The command written is the absolute path of the Probe that runs ``install-mcp`` (``probe_command``):
an editor does not share the shell's PATH or its activated virtualenv, and the quick start installs
Probe into a project's ``.venv/``, where a bare ``probe`` is not found. ``command=`` overrides it
(e.g. ``probe`` for a config committed to a repository whose users all have ``probe`` on PATH);
``command_warning`` says when that command cannot be found here.

TOML is written by hand (Python ships a TOML reader only): the ``[mcp_servers.probe]`` table's own
lines are replaced or appended, everything else in the file is left as it was, and the result is
parsed back before it is written.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import environment
from .errors import ConfigError

CLIENTS = ("claude", "cursor", "codex")
SCOPES = ("project", "user")
SERVER_NAME = "probe"
BLOCK_BEGIN = "<!-- probe:begin (managed by `probe install-mcp --agents-md`) -->"
BLOCK_END = "<!-- probe:end -->"
AGENTS_BLOCK = """\
## Code search with Probe

This repository is indexed by Probe (MCP server `probe`). Prefer its tools over grep when:
- the question is about behaviour or concepts ("where are retries handled?", "how is auth checked?"),
- you only know roughly what something is called, or want the implementation behind a name.
Use `search` first, cite results by their `source` (path#Lstart-Lend), and call `open_file`
on a `source` for the exact current lines before quoting or editing. Use grep for exact strings
you already know. If `search` reports `status: uncertain`, the index is still building: confirm
with grep. `index_status` shows indexing progress and health."""


@dataclass(frozen=True, slots=True)
class InstallResult:
    path: Path
    changed: bool
    what: str

    def line(self) -> str:
        return f"{'wrote' if self.changed else 'unchanged'} {self.path} ({self.what})"


def probe_command() -> list[str]:
    """The command line that runs this very Probe, absolute: its ``probe`` script, or this Python
    with ``-m probe_cli`` when there is no script (a source tree run with ``python -m``)."""
    argv0 = Path(sys.argv[0])
    if argv0.name in ("probe", "probe.exe") and argv0.is_file():
        return [str(argv0.absolute())]  # not resolved: ~/.local/bin/probe survives `uv tool upgrade`
    beside = Path(sys.executable).parent / ("probe.exe" if os.name == "nt" else "probe")
    if beside.is_file():  # the script of the environment this interpreter belongs to
        return [str(beside)]
    return [sys.executable, "-m", "probe_cli"]


def command_warning(command: str) -> str | None:
    """Why a client may fail to start ``command`` (None when nothing suggests it would)."""
    found = shutil.which(command)
    fix = f"give the full path (`--command {probe_command()[0]}`) or leave --command out to write it"
    if found is None:
        return f"`{command}` is not on PATH here, so the client may not find it either; {fix}"
    venv = environment.get("VIRTUAL_ENV")
    if venv and not os.path.isabs(command) and Path(found).parent == Path(venv) / "bin":
        # `uv run` and an activated venv put .venv/bin on this shell's PATH only
        return (f"`{command}` is found here only through the active virtualenv ({venv}); an editor started "
                f"elsewhere will not find it: {fix}")
    return None


def server_entry(client: str, command: str | list[str] = "probe", root: Path | None = None) -> dict:
    """The server definition a client's config gets (``command``: a program, or a program and its
    first arguments, as ``probe_command`` gives)."""
    argv = [command] if isinstance(command, str) else list(command)
    command, args = argv[0], [*argv[1:], "mcp"]
    if root is not None:
        args += ["--root", str(root)]
    elif client == "cursor":
        args += ["--root", "${workspaceFolder}"]
    return {"command": command, "args": args}


def config_path(client: str, scope: str, root: Path) -> Path:
    home = Path(environment.get("HOME") or Path.home())
    if client == "claude":
        return root / ".mcp.json" if scope == "project" else home / ".claude.json"
    if client == "cursor":
        return (root if scope == "project" else home) / ".cursor" / "mcp.json"
    if client == "codex":
        return (root if scope == "project" else home) / ".codex" / "config.toml"
    raise ConfigError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")


def _write_if_changed(path: Path, text: str) -> bool:
    try:
        if path.read_text("utf-8") == text:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.probe-tmp")
    tmp.write_text(text, "utf-8")
    if path.exists():
        os.chmod(tmp, path.stat().st_mode & 0o7777)
    os.replace(tmp, path)
    return True


def install_json(path: Path, entry: dict) -> bool:
    """Set ``mcpServers.probe`` in a JSON config, keeping every other key. True if written."""
    data: dict = {}
    if path.exists():
        raw = path.read_text("utf-8")
        if raw.strip():
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path} is not valid JSON ({exc}); fix it, then run install-mcp again") from exc
            if not isinstance(data, dict):
                raise ConfigError(f"{path} does not hold a JSON object")
        servers = data.get("mcpServers")
        if servers is not None and not isinstance(servers, dict):
            raise ConfigError(f"{path}: mcpServers is not an object")
        if servers is not None and servers.get(SERVER_NAME) == entry:
            return False
    data.setdefault("mcpServers", {})[SERVER_NAME] = entry
    return _write_if_changed(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_PROBE_HEADERS = {f"mcp_servers.{SERVER_NAME}", f'mcp_servers."{SERVER_NAME}"'}


def install_toml(path: Path, entry: dict) -> bool:
    """Set the ``[mcp_servers.probe]`` table's ``command``/``args`` in a Codex config. True if written."""
    text = path.read_text("utf-8") if path.exists() else ""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it, then run install-mcp again") from exc
    current = doc.get("mcp_servers", {}).get(SERVER_NAME)
    if isinstance(current, dict) and {k: current.get(k) for k in entry} == entry:
        return False
    body = [f"command = {_toml_str(entry['command'])}",
            "args = [" + ", ".join(_toml_str(a) for a in entry["args"]) + "]"]
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines)
                  if (m := _HEADER.match(ln)) and m[1].replace(" ", "") in _PROBE_HEADERS), None)
    if start is None:
        if current is not None:
            raise ConfigError(f"{path} defines mcp_servers.{SERVER_NAME} inline; edit it by hand or remove it")
        sep = [] if not lines or not lines[-1].strip() else [""]
        new_lines = lines + sep + [f"[mcp_servers.{SERVER_NAME}]", *body]
    else:
        end = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
        new_lines = lines[:start + 1] + body + _other_keys(lines[start + 1:end]) + lines[end:]
    new_text = "\n".join(new_lines) + "\n"
    parsed = tomllib.loads(new_text)  # never write a file Codex could not read
    got = parsed.get("mcp_servers", {}).get(SERVER_NAME, {})
    if got.get("command") != entry["command"] or got.get("args") != entry["args"]:
        raise ConfigError(f"could not update {path} safely; add [mcp_servers.{SERVER_NAME}] by hand")
    return _write_if_changed(path, new_text)


def _other_keys(section: list[str]) -> list[str]:
    """The lines of our table other than ``command`` and ``args`` (a multi-line ``args`` included)."""
    out, in_args = [], False
    for ln in section:
        code = ln.split("#", 1)[0]
        if in_args:
            in_args = "]" not in code
            continue
        if re.match(r"^\s*command\s*=", ln):
            continue
        if re.match(r"^\s*args\s*=", ln):
            in_args = "[" in code and "]" not in code
            continue
        out.append(ln)
    return out


def install_agents_md(path: Path) -> bool:
    """Add (or refresh) Probe's block between marker comments in AGENTS.md / CLAUDE.md."""
    text = path.read_text("utf-8") if path.exists() else ""
    block = f"{BLOCK_BEGIN}\n{AGENTS_BLOCK}\n{BLOCK_END}"
    if BLOCK_BEGIN in text and BLOCK_END in text:
        before, _, rest = text.partition(BLOCK_BEGIN)
        _, _, after = rest.partition(BLOCK_END)
        new = before + block + after
    else:
        new = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block + "\n"
    return _write_if_changed(path, new)


def install(client: str, scope: str = "project", root: Path | None = None, *, agents_md: bool = False,
            command: str | None = None, pin_root: bool = False) -> list[InstallResult]:
    """Write ``client``'s MCP config for Probe (and the agents' guidance file with ``agents_md``).
    ``command`` None: this Probe's absolute command (``probe_command``)."""
    if client not in CLIENTS:
        raise ConfigError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")
    if scope not in SCOPES:
        raise ConfigError(f"unknown scope {scope!r}; choose project or user")
    root = Path(root or os.getcwd()).expanduser().resolve()
    if not root.is_dir():
        raise ConfigError(f"{root} is not a directory")
    entry = server_entry(client, probe_command() if command is None else command, root if pin_root else None)
    path = config_path(client, scope, root)
    changed = install_toml(path, entry) if client == "codex" else install_json(path, entry)
    results = [InstallResult(path, changed, f"{client} {scope} MCP server `{SERVER_NAME}`")]
    if agents_md:
        guide = root / ("CLAUDE.md" if client == "claude" else "AGENTS.md")
        results.append(InstallResult(guide, install_agents_md(guide), "when to use Probe's tools"))
    return results
