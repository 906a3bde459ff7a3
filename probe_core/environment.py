"""The one reader of the process environment: every variable Probe reads, with its default, kind and meaning.

Configuration comes from ``.probe/config.json``, then the environment, then flags (``config.py``);
this module is the environment's part. A module that wants a variable asks ``get`` (or takes
``environ()`` where a function accepts an ``env`` mapping that tests replace); nothing else touches
``os.environ`` (``tests/test_environment.py`` checks it with an ``ast`` pass). Each read happens at
call time, never at import, so ``monkeypatch.setenv`` in a test applies to the next call. How a
value is parsed and checked stays with its reader (a bad ``PROBE_DEBOUNCE_S`` is a ``ConfigError``
in ``engine/settings.py``); the defaults listed here are checked against the readers' by the tests.

README.md's settings table is generated from ``VARIABLES``: ``python -m probe_core.environment
README.md`` rewrites it (a test fails when they differ). This module imports nothing of Probe's, so
any layer may import it, and costs a warm CLI call nothing.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Mapping


class Variable:
    """One environment variable: its name, the default in words, what it holds, what it changes.
    A name ending in ``<...>`` is a family (``PROBE_LSP_SERVER_<LANGUAGE>``)."""

    __slots__ = ("name", "default", "kind", "meaning")

    def __init__(self, name: str, default: str, kind: str, meaning: str):
        self.name, self.default, self.kind, self.meaning = name, default, kind, meaning

    def covers(self, name: str) -> bool:
        if self.name.endswith(">"):
            return name.startswith(self.name[: self.name.index("<")])
        return name == self.name


V = Variable
UNSET = ""  # shown as "(unset)": nothing is assumed, the meaning says what happens then

VARIABLES: tuple[Variable, ...] = (
    # -- backends and what is indexed (they win over .probe/config.json's keys of the same meaning)
    V("PROBE_PRESET", "embedded", "preset", "`embedded`, `lite`, `balanced` or `pro` (over config.json's `preset`)"),
    V("QDRANT_URL", UNSET, "URL", "a Qdrant server instead of the embedded Qdrant Edge shard"),
    V("QDRANT_API_KEY", UNSET, "secret", "the Qdrant server's API key (masked in every message and log)"),
    V("TEI_EMBED_URL", UNSET, "URL", "a TEI embedder instead of the in-process model"),
    V("TEI_API_KEY", UNSET, "secret", "TEI's API key"),
    V("RERANKER_URL", UNSET, "URL", "the reranker service (`services/reranker`); unset: no rerank"),
    V("RERANKER_API_KEY", UNSET, "secret", "the reranker's API key"),
    V("PROBE_EMBEDDER", "minilm", "`minilm`, `onnx:DIR`, `static:DIR`", "the in-process embedding model"),
    V("PROBE_MAX_FILE_BYTES", "1000000", "integer > 0", "files larger than this are not indexed"),
    V("PROBE_MIN_FREE_MB", "128", "integer ≥ 0", "indexing stops while less than this is free on the index's disk (0: off)"),
    V("PROBE_DENSE_STORAGE", "float16", "`float16`, `turbo8`", "how a new embedded shard stores dense vectors: `turbo8` halves them on disk, ranking slightly less finely"),
    V("PROBE_STORE_INDEX", "none", "`none`, `bm25`, `graph`", "what a new embedded shard's idle optimization builds: `bm25` an on-disk BM25 index, less RAM for more disk; `graph` that and an HNSW graph the dense search then uses, a dense leg that does not slow with the repository's size, for ~20 % more disk"),
    V("PROBE_INDEX_WORKERS", "(usable CPUs)", "integer 1-256", "processes that read, chunk and graph files when a run has 4 MB or more to read (1: none)"),
    # -- the long-running engine (probe mcp, the background owner): parsed by engine/settings.py
    V("PROBE_WATCH", "1", "0/1", "`0` turns the file watcher off (the index then changes only on restart)"),
    V("PROBE_DEBOUNCE_S", "3", "seconds", "trailing debounce: a change is indexed after this much quiet"),
    V("PROBE_MAX_WAIT_S", "30", "seconds", "...or at the latest this long after the first change of a batch"),
    V("PROBE_STABLE_S", "0.25", "seconds", "file-stable check: size and mtime must not move across this interval"),
    V("PROBE_BURST_FILES", "200", "integer", "a batch with more changed paths than this becomes one full incremental scan"),
    V("PROBE_RESCAN_S", "900", "seconds", "periodic stat rescan (mtime, size, ctime, inode) that catches missed events"),
    V("PROBE_DENSE_BATCH", "16", "integer", "chunks embedded between two chances for a search to run first"),
    V("PROBE_ATTACH_TIMEOUT_S", "30", "seconds", "how long an attached process waits for an owner (or to become one)"),
    V("PROBE_RPC_TIMEOUT_S", "120", "seconds", "how long an attached process waits for one answer from the owner"),
    V("PROBE_TAKEOVER_POLL_S", "0.5", "seconds", "how often an attached process checks whether the owner is gone"),
    V("PROBE_OWNER_PING_S", "3", "seconds", "a CLI call's ping: an owner silent this long is stopped or stuck"),
    V("PROBE_MAX_TOKENS", "6000", "integer", "default token budget of an MCP `search` answer"),
    V("PROBE_RECORD_INTERVAL_S", "300", "seconds", "owner heartbeat: re-record the workspace (`probe prune`); at most 300"),
    V("PROBE_DAEMON_IDLE_S", "600", "seconds", "the background owner exits after this long with nothing to do"),
    V("PROBE_OPTIMIZE_IDLE_S", "60", "seconds", "idle this long after the dense fill, the owner optimizes a much-written Qdrant Edge shard in a child process; 0 never"),
    V("PROBE_DAEMON", "1", "0/1", "`0`: the CLI never starts the background owner (`--background` is refused); a running one still answers"),
    V("MALLOC_ARENA_MAX", "2 in an owner", "integer", "glibc's malloc arenas; an owner (`probe mcp`, the daemon) caps them at 2 unless this is set"),
    V("PROBE_LIBRARY_POLL_S", "1.0", "seconds", "how often an owner looks for libraries added or removed elsewhere"),
    # -- code intelligence
    V("PROBE_LSP", "(config.json's `lsp`)", "0/1", "ask an installed language server (else the tree-sitter graph)"),
    V("PROBE_LSP_TIMEOUT_S", "10", "seconds", "how long one language-server question may take"),
    V("PROBE_LSP_IDLE_S", "300", "seconds", "a language server unused this long is stopped"),
    V("PROBE_LSP_SERVER_<LANGUAGE>", "(found on PATH)", "command", "the language server for LANGUAGE; empty: none"),
    # -- logs and the faces
    V("PROBE_LOG", "(WARNING in the CLI, INFO in `probe mcp` and the daemon)", "log level", "how much Probe logs (stderr, `.probe/logs/`)"),
    V("PROBE_DEBUG", UNSET, "any", "a CLI internal error prints its traceback"),
    V("PROBE_TUI_MASK", UNSET, "1", "the app shows placeholders for what changes run to run (snapshots)"),
    # -- the Docker stack
    V("PROBE_COMPOSE_DIR", "(the checkout's or the packaged compose/)", "path", "the folder holding docker-compose.yml"),
    V("PROBE_COMPOSE", "(docker compose, found)", "command", "the Compose v2 command `probe up`/`down` run"),
    V("TEI_IMAGE_TAG", "(for the detected GPU)", "image tag", "the TEI image `probe up` runs"),
    V("DOCKER_HOST", "(the default socket)", "URL", "the Docker engine (read by the Docker SDK; Probe names it)"),
    # -- where things are kept
    V("PROBE_DATA_DIR", "$XDG_DATA_HOME/probe", "path", "user data: global memory rules, libraries, registries"),
    V("XDG_DATA_HOME", "~/.local/share", "path", "the base of the user data dir"),
    V("PROBE_STATE_DIR", "$XDG_STATE_HOME/probe", "path", "the stack's env file (`stack.env`)"),
    V("XDG_STATE_HOME", "~/.local/state", "path", "the base of the state dir"),
    V("XDG_RUNTIME_DIR", "(a private folder in the temp dir)", "path", "the owner's socket when `.probe/` is too deep for one"),
    V("HOME", "(the user's home)", "path", "where `probe install-mcp` finds user-scope client configs"),
    V("VIRTUAL_ENV", UNSET, "path", "`probe install-mcp` warns when `probe` is on PATH only through it"),
)

#: Names Probe writes for another program, never reads back from its own environment.
WRITTEN: dict[str, str] = {
    "ORT_DISABLE_TELEMETRY": "set to 1 (unless set) before onnxruntime loads: no telemetry (embedding/onnx_minilm.py)",
    "PROBE_DATA_DIR": "the screenshot tool points its app and child terminal at a temporary dir (probe_tui/screenshots.py)",
    "TEI_MODEL_ID": "stack.env, for compose (stack/settings.py; also PROBE_PRESET and TEI_IMAGE_TAG)",
    "RERANKER_MODEL": "stack.env, for compose",
    "PROBE_STACK_GPU": "stack.env, read back by `probe down`",
    "PROBE_STACK_FILES": "stack.env, read back by `probe down`",
    "PROBE_GPU_DEVICE": "stack.env, for compose",
}


_BY_NAME = {v.name: v for v in VARIABLES}


def variable(name: str) -> Variable:
    """The listed variable ``name`` is, else ``KeyError``: reading an unlisted one is a bug."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    for v in VARIABLES:
        if v.covers(name):
            return v
    raise KeyError(f"{name} is not a listed setting: add it to probe_core/environment.py")


def get(name: str, default: str | None = None) -> str | None:
    """``os.environ.get(name, default)`` for a listed variable, read now."""
    variable(name)
    return os.environ.get(name, default)


class _Environment(Mapping):
    """The process environment as a read-only mapping that answers only for listed variables."""

    def __getitem__(self, name: str) -> str:
        variable(name)
        return os.environ[name]

    def get(self, name: str, default=None):
        return get(name, default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return (k for k in os.environ if any(v.covers(k) for v in VARIABLES))

    def __len__(self) -> int:
        return sum(1 for _ in self)


_ENVIRONMENT = _Environment()


def environ() -> Mapping[str, str]:
    """The live environment, for functions that take ``env`` (a test passes its own mapping)."""
    return _ENVIRONMENT


def child_env(without: tuple[str, ...] = ()) -> dict[str, str]:
    """A copy of the whole environment for a child process, less ``without``."""
    return {k: v for k, v in os.environ.items() if k not in without}


def set_default(name: str, value: str) -> None:
    """Set ``name`` for libraries loaded into this process, unless the user set it (``WRITTEN``)."""
    if name not in WRITTEN:
        raise KeyError(f"{name} is not listed in WRITTEN (probe_core/environment.py)")
    os.environ.setdefault(name, value)


# -- README.md's settings table ------------------------------------------------------------------
TABLE_BEGIN = "<!-- settings table: generated by `python -m probe_core.environment README.md` -->"
TABLE_END = "<!-- end of settings table -->"


def markdown_table() -> str:
    rows = ["| variable | default | kind | meaning |", "| --- | --- | --- | --- |"]
    for v in VARIABLES:
        default = f"`{v.default}`" if v.default and not v.default.startswith("(") else (v.default or "(unset)")
        rows.append(f"| `{v.name}` | {default} | {v.kind} | {v.meaning} |")
    return "\n".join(rows)


def with_table(readme: str) -> str:
    """``readme`` with the text between the table's markers replaced by ``markdown_table()``."""
    head, sep, rest = readme.partition(TABLE_BEGIN)
    _, sep2, tail = rest.partition(TABLE_END)
    if not (sep and sep2):
        raise ValueError(f"README has no {TABLE_BEGIN!r} ... {TABLE_END!r} block")
    return f"{head}{TABLE_BEGIN}\n{markdown_table()}\n{TABLE_END}{tail}"


if __name__ == "__main__":
    import sys
    from pathlib import Path

    for arg in sys.argv[1:] or ["README.md"]:
        path = Path(arg)
        path.write_text(with_table(path.read_text("utf-8")), "utf-8")
