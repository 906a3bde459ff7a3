"""Which language server answers for which language, and where its command is.

A server is one `ServerSpec` row. Rows with `default=True` are used whenever their command is found
(on PATH or next to the running interpreter, i.e. in the current venv's bin); the others are known
but untested here and are used only when named in `PROBE_LSP_SERVER_<LANG>` (LANG is the graph's
language family in capitals: PYTHON, JS, GO, RUST). That variable may also hold a whole command
line ("pyright-langserver --stdio"); set to "" it turns the language server off for that language.
"""
from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from ... import environment


@dataclass(frozen=True, slots=True)
class ServerSpec:
    name: str
    command: tuple[str, ...]
    languages: frozenset[str]  # language families (`resolve.family`) it answers for
    install: str  # what the "no language server" message suggests
    default: bool = True  # False: only when chosen through PROBE_LSP_SERVER_<LANG>


SERVERS: tuple[ServerSpec, ...] = (
    ServerSpec("jedi-language-server", ("jedi-language-server",), frozenset({"python"}), "jedi-language-server"),
    ServerSpec("pyright", ("pyright-langserver", "--stdio"), frozenset({"python"}), "pyright", default=False),
    ServerSpec("typescript-language-server", ("typescript-language-server", "--stdio"), frozenset({"js"}),
               "typescript-language-server", default=False),
    ServerSpec("gopls", ("gopls",), frozenset({"go"}), "gopls", default=False),
    ServerSpec("rust-analyzer", ("rust-analyzer",), frozenset({"rust"}), "rust-analyzer", default=False),
)

# didOpen's languageId where it differs from the graph's language name
LANGUAGE_IDS = {"tsx": "typescriptreact", "jsx": "javascriptreact"}


def find_command(exe: str) -> str | None:
    """`exe` on PATH, else in the running interpreter's bin folder (a venv not activated)."""
    found = shutil.which(exe)
    if found:
        return found
    local = Path(sys.executable).parent / exe
    return str(local) if local.is_file() and os.access(local, os.X_OK) else None


def discover(language: str) -> tuple[ServerSpec | None, list[str] | None, str]:
    """(spec, argv, why): argv is None when no server can answer for `language`; `why` says so."""
    var = f"PROBE_LSP_SERVER_{language.upper()}"
    chosen = environment.get(var)
    if chosen is not None:
        argv = shlex.split(chosen)
        if not argv:
            return None, None, f"the language server for {language} is off ({var} is empty)"
        named = next((s for s in SERVERS if s.name == argv[0]), None)
        candidates = [named] if named else [ServerSpec(Path(argv[0]).name, tuple(argv), frozenset({language}),
                                                       f"{argv[0]}, or fix {var}")]
    else:
        candidates = [s for s in SERVERS if s.default and language in s.languages]
    for spec in candidates:
        exe = find_command(spec.command[0])
        if exe:
            return spec, [exe, *spec.command[1:]], ""
    hint = f" (install {candidates[0].install})" if candidates else ""
    return (candidates[0] if candidates else None), None, f"no language server for {language}{hint}"
