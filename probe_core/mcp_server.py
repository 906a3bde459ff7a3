"""``probe mcp``: the MCP stdio server. It maps three tools onto an ``Engine`` and shapes answers.

Whether this process indexes (owner) or forwards to another ``probe mcp`` on the same repository
(attached) is the engine's business (``probe_core/engine``); tools look the same either way.

Startup stays fast: the engine, and with it the heavy imports (onnxruntime, Qdrant Edge,
tree-sitter), starts in the server's lifespan, after the stdio transport owns the real stdout,
and does its work on background threads while ``initialize`` and ``tools/list`` are answered.

Stdout carries protocol messages only: from the first line of ``run_stdio`` fd 1 points at stderr
and the wire lives on a private duplicate that only the SDK's stdio transport writes to
(``_StdoutGuard``), so stray prints from any library, Python or C, land on stderr. Logs go to
stderr and ``.probe/logs/probe-mcp.log``.
"""
from __future__ import annotations

import logging
import logging.handlers
import os
import signal
import sys
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from .errors import ProbeError
from .limits import INTEL_DEPTH, MAP_DEPTH, MAX_RESULTS, MAX_TOKENS, QUERY, TOP_K
from .mcp_input import ReplyToUnreadable, refuse_unknown_arguments
from .mcp_schemas import (IntelOutput, MapOutput, MemoryOutput, OpenFileOutput, SearchFilters, SearchOutput, StatusOutput,
                          StoreOutput)
from .private_dir import ensure_private_dir
from .redaction import RedactingFilter, redact

log = logging.getLogger("probe.mcp")

INSTRUCTIONS = """\
Probe searches this repository by meaning and by identifiers at once (semantic + BM25 hybrid), \
keeps its index fresh as files change, and reads exact lines from disk.

When to use which tool:
- search: questions about behaviour or concepts ("where are failed uploads retried?", "how is the \
session token validated?"), paraphrases, and names you do not know exactly. It beats grep there; \
for an exact string you already know, grep is fine.
- open_file: read the exact current lines of a result (pass its `source`, e.g. "src/a.py#L10-L40") \
before quoting or editing; snippets in search results are short previews.
- index_status: whether indexing is finished, watcher and backend health, last errors.
- map_code: the shape of the repository or a folder (files, classes, functions, signatures).
- find_callers / find_callees / find_references / find_implementations: structural questions \
about one symbol (give `symbol`, e.g. "Router.route", or `file` + `line` of its definition). They \
resolve names through imports and `self`/`this`, which grep cannot; `confidence` < 1 marks a \
same-named candidate rather than a resolved one.
- impact_analysis: before changing a symbol, what calls it, uses its type, implements it, and \
which tests cover it, with a risk level.
- memory: durable rules for this user (scope "global") or repository (scope "project"): add one \
when the user states a lasting preference or convention ("always use uv", "no mocks in tests"); \
list them with action "list" or read the resource `probe://memory/rules`. Follow them.
- store: save a reference document (API notes, a spec, a how-to the user pastes or you fetched) into a named library; it is searchable at once. search with `include_libraries: true` (or `filters.collections`) to search the user's reference libraries beside the code; such results have `collection: "libraries"` and a `source` like "library:NAME/PATH#L1-L20" that open_file reads.

Cite results by their `source` (path#Lstart-Lend). `stale: true` means the file changed since it \
was indexed: re-read it with open_file. `status: uncertain` means the index is incomplete (still \
being built, or semantic vectors still filling in): results may miss things, so confirm with grep.\
"""

SEARCH_DOC = """\
Find code and docs in this repository by meaning and by identifiers (hybrid semantic + BM25).

Use it for concept and paraphrase questions ("where do we throttle concurrent requests?"), for \
unknown names, and to locate an implementation before reading it; use grep for exact strings you \
already know. Returns ranked line ranges with a short snippet and a `source` (path#Lstart-Lend): \
cite `source`, and call open_file(source) for the full, current text before editing. The answer \
fits `max_tokens`; anything trimmed is reported in `truncated`. With `include_libraries: true` the \
user's reference libraries (documentation folders, stored documents) are searched too and fused with \
the code results; each result says its `collection` ("project" or "libraries") and `library_name`."""

OPEN_FILE_DOC = """\
Read exact lines of a repository file from disk, with line numbers, file_hash and mtime.

The authority for file content: use it on a search result's `source` ("src/a.py#L10-L40") or a \
path plus start_line/end_line before quoting or editing. Paths are relative to the repository \
root; anything resolving outside it (../, absolute paths elsewhere, symlinks out) is refused. \
Long ranges come back in pages of 400 lines (`next_start_line`). A library result's source \
("library:NAME/PATH#L1-L20") reads that library document's indexed text."""

STORE_DOC = """\
Save a reference document into a named library of the user's (created on first use), indexed at once \
and found later by search with `include_libraries: true`, from any repository.

Use it for knowledge worth keeping beyond this task: API notes, a spec or an excerpt of documentation \
the user gives or you fetched, a decision record. One call stores one document (Markdown or plain \
text); storing identical content again changes nothing. `library_name`: lowercase letters, digits, \
'-', '_' or '.', e.g. "stripe-api". Folder libraries (`probe library add`) cannot be stored into."""

STATUS_DOC = """\
Report the index: files and chunks indexed, whether indexing is still in progress (with progress), \
file-watcher and backend health, the index generation, and recent errors. Call it when search says \
`uncertain` or fails."""

SYMBOL_DOC = ("The symbol's name: a function, class or method (`Type.method`). Or omit it and give "
              "`file` + `line` of the definition.")
INTEL_DOCS = {
    "find_callers": "Every call site of a function or method (with the calling definition), resolved through "
                    "imports and self/this; `depth` > 1 follows callers of callers. Beats grep on common names.",
    "find_callees": "The functions a function calls, as their definition locations in this repository "
                    "(library calls left out); `depth` > 1 follows them transitively (cycles cut).",
    "find_references": "Every use of a symbol: calls, imports, type annotations, subclassing "
                       "(`include_declaration` adds the definition).",
    "find_implementations": "Classes/types implementing an interface, trait or protocol, or subclassing a class "
                            "(transitively; Go by method set).",
    "impact_analysis": "What breaks if this symbol changes: direct callers, type references, implementations and "
                       "tests covering it, with file/function counts and a risk level, within `max_tokens`.",
}

MEMORY_DOC = """\
Keep durable rules the agent must follow in later sessions: user preferences (scope "global", every \
repository) and project conventions (scope "project", this repository).

Actions: "list" (global rules first, then the project's); "add" (label + content; the label must be \
new in its scope); "update" (label + any of content, title, tags); "remove" (label). Labels are short, \
lowercase and hyphenated, at most 15 characters ("use-uv", "no-mocks"). Add a rule when the user states \
a lasting preference or convention, not for one-off task details. The current rules are also in the \
resource `probe://memory/rules` and in these instructions at session start."""

MEMORY_RESOURCE = "probe://memory/rules"


def memory_instructions(root: Path | None, *, max_chars: int = 3000) -> str:
    """A short "Memory rules" section for the server instructions, read straight from the stores
    (cheap SQLite reads); "" when there are none or they cannot be read."""
    if root is None:
        return ""
    try:
        from .memory.rules import RuleStore, render_rules_markdown

        rules = RuleStore(root).list()
        if not rules:
            return ""
        text = render_rules_markdown(rules, heading="Memory rules (follow these; manage them with the memory tool):")
    except Exception:
        log.warning("could not read the memory rules for the instructions", exc_info=True)
        return ""
    if len(text) > max_chars:
        text = text[:max_chars].rsplit("\n", 1)[0] + f"\n… (more: read {MEMORY_RESOURCE})"
    return text


def render_memory(out: dict) -> str:
    from .memory.rules import render_rules_markdown

    if out.get("action") != "list":  # a change answers with the rule it changed, not the whole list
        return out["message"] + ("\n\n" + render_rules_markdown([out["rule"]], heading="") if out.get("rule") else "")
    return out["message"] + "\n\n" + render_rules_markdown(out["rules"])


# argument types shared by the code-intelligence tools (module level: the SDK evaluates annotations)
Symbol = Annotated[str | None, Field(description=SYMBOL_DOC)]
File = Annotated[str | None, Field(description="File of the definition (with `line`), relative to the root.")]
Line = Annotated[int | None, Field(ge=1, description="Line of the definition in `file`.")]
MaxResults = Annotated[int, Field(ge=MAX_RESULTS.low, le=MAX_RESULTS.high,
                                  description="At most this many locations.")]
MaxTokens = Annotated[int, Field(ge=MAX_TOKENS.low, le=MAX_TOKENS.high,
                                 description="Budget for the answer (characters/4).")]
Depth = Annotated[int, Field(ge=INTEL_DEPTH.low, le=INTEL_DEPTH.high,
                             description="1 = direct only; more follows the graph (cycles cut).")]


READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class _EngineSlot:
    """Holds the engine the lifespan starts; tools reach it through here."""

    def __init__(self, factory: Callable[[], object], libraries_factory: Callable[[], object] | None = None):
        self.factory = factory
        self.engine = None
        self.libraries_factory = libraries_factory
        self.libraries = None  # a libraries.LibraryPool once started (None: no reference libraries here)

    def close(self) -> None:
        """Close the library engines and the project engine (idempotent)."""
        pool, self.libraries = self.libraries, None
        if pool is not None:
            pool.close()
        engine, self.engine = self.engine, None
        if engine is not None:
            engine.close()

    def get(self):
        if self.engine is None:
            raise ToolError("Probe is starting; try again in a moment")
        return self.engine


MAX_ERROR_CHARS = 1000  # an error names the bad input; it must not echo a 1 MB argument back


def _one_line(message: str) -> str:
    """An error message as one line of bounded length (messages quote what the caller sent)."""
    line = " ".join(redact(message[:4 * MAX_ERROR_CHARS]).split())  # a key that fits the answer is masked
    return line if len(line) <= MAX_ERROR_CHARS else line[:MAX_ERROR_CHARS] + "… (message cut)"


def _call(fn, *args, **kwargs):
    """Run an engine call; every failure becomes a ToolError whose message the agent can act on."""
    try:
        return fn(*args, **kwargs)
    except ToolError:
        raise
    except ProbeError as exc:
        raise ToolError(_one_line(str(exc))) from exc
    except Exception as exc:
        from .storage.damage import as_probe_error

        if isinstance(known := as_probe_error(exc), ProbeError):  # a damaged index file: say so, with the fix
            raise ToolError(_one_line(str(known))) from exc
        log.exception("tool failed")
        raise ToolError(_one_line(f"internal error: {type(exc).__name__}: {exc}")
                        + " (details in .probe/logs/probe-mcp.log)") from exc


def render_search(out: dict) -> str:
    """The short text rendering of a search answer (the structured content carries the same)."""
    lines = []
    if out.get("status") != "healthy" or out.get("message"):
        lines.append(f"[{out.get('status')}] {out.get('message') or ''}".rstrip())
    if not out["results"]:
        lines.append("No results.")
    for i, r in enumerate(out["results"], 1):
        lib = f"library {r['library_name']}" if r.get("collection") == "libraries" else None
        tags = [t for t in (lib, r.get("symbol"), r.get("chunk_kind")) if t]
        flags = " STALE (file changed since indexing; open_file for current text)" if r.get("stale") else ""
        lines.append(f"{i}. {r['source']}" + (f"  ({', '.join(tags)})" if tags else "") + flags)
        for n, text in enumerate((r.get("snippet") or "").split("\n"), r["start_line"]):
            lines.append(f"{n:>6}  {text}")
        if r.get("snippet_truncated"):
            lines.append(f"{'':>6}  … open_file(\"{r['source']}\") for lines {r['start_line']}-{r['end_line']}")
    lines.append(f"({len(out['results'])} results, {out.get('took_ms', 0):.0f} ms, "
                 f"index generation {out.get('index_generation')}, dense coverage {out.get('dense_coverage', 0):.0%})")
    return "\n".join(lines)


def render_open_file(out: dict) -> str:
    head = (f"{out['path']} lines {out['start_line']}-{out['end_line']} of {out['total_lines']} "
            f"(file_hash {out['file_hash']}, index {out['index_state']})")
    body = [f"{n:>6}\t{text}" for n, text in enumerate(out["lines"], out["start_line"])]
    tail = [out["message"]] if out.get("message") else []
    return "\n".join([head, *body, *tail])


def render_status(st: dict) -> str:
    p = st.get("progress") or {}
    parts = [
        f"role {st.get('role')} (owner pid {st.get('owner_pid')}), root {st.get('root')}",
        f"indexing in progress: {st.get('indexing_in_progress')}"
        + (f" — {p.get('phase')}: {p.get('files_scanned')}/{p.get('files_total')} files, "
           f"{p.get('chunks_embedded')}/{p.get('chunks_total')} chunks embedded" if p else ""),
        f"files {st.get('files_indexed')}, chunks {st.get('chunks_indexed')}, dense coverage "
        f"{st.get('dense_coverage')}, generation {st.get('index_generation')}",
        f"watcher running: {st.get('watcher_running')}, backend reachable: {st.get('backend_reachable')}",
    ]
    if st.get("last_error"):
        parts.append(f"last error: {st['last_error']}")
    return "\n".join(parts)


def build_server(engine_factory: Callable[[], object], *, default_max_tokens: int = 6000,
                 root: Path | None = None, libraries_factory: Callable[[], object] | None = None) -> MCPServer:
    """The MCP server; ``engine_factory`` runs in the lifespan (after the transport is up).
    ``root`` (optional) puts the workspace's memory rules into the instructions.
    ``libraries_factory`` (optional) starts the reference libraries' ``LibraryPool``."""
    slot = _EngineSlot(engine_factory, libraries_factory)

    @asynccontextmanager
    async def lifespan(_server):
        slot.engine = await anyio.to_thread.run_sync(slot.factory)
        if slot.libraries_factory is not None:
            slot.libraries = await anyio.to_thread.run_sync(slot.libraries_factory)
        try:
            yield {}
        finally:
            await anyio.to_thread.run_sync(slot.close)

    instructions = INSTRUCTIONS
    if rules_text := memory_instructions(root):
        instructions += "\n\n" + rules_text
    from . import package_version

    server = MCPServer(name="probe", version=package_version(), instructions=instructions, lifespan=lifespan,
                       log_level="WARNING")
    server.probe_engine_slot = slot  # run_stdio closes the engine on SIGTERM
    server.middleware.append(refuse_unknown_arguments(server.list_tools))

    @server.tool(title="Search the codebase", description=SEARCH_DOC, annotations=READ_ONLY)
    def search(
        query: Annotated[str, Field(
            min_length=1, max_length=QUERY.high,
            description="What you are looking for, in words or code terms: a behaviour "
                        "(\"retry failed uploads with backoff\"), a concept, or a (partial) identifier.")],
        top_k: Annotated[int, Field(ge=TOP_K.low, le=TOP_K.high, description="How many ranges to return.")] = 12,
        mode: Annotated[Literal["auto", "fast", "quality"], Field(
            description="fast: hybrid retrieval only; quality: also rerank when a reranker is configured; "
                        "auto: let Probe choose.")] = "auto",
        instruction: Annotated[str | None, Field(
            description="Optional task description for instruction-aware embedders/rerankers, e.g. "
                        "\"find the implementation, not tests\".")] = None,
        filters: Annotated[SearchFilters | None, Field(
            description="Optional: restrict by languages, chunk_kinds, include_globs, exclude_globs, branch; "
                        "collections/libraries pick the sources.")] = None,
        include_libraries: Annotated[bool, Field(
            description="Also search the user's reference libraries (documentation folders and stored documents) "
                        "and fuse them with the code results; same as filters.collections "
                        "[\"project\", \"libraries\"].")] = False,
        max_tokens: Annotated[int, Field(
            ge=MAX_TOKENS.low, le=MAX_TOKENS.high,
            description="Budget for this answer (estimated as characters/4). Snippets are shortened, then "
                        "results dropped, to fit; the answer says what was cut.")] = default_max_tokens,
    ) -> Annotated[CallToolResult, SearchOutput]:
        from .libraries.fusion import search_sources

        out = _call(search_sources, slot.get(), slot.libraries, query, top_k=top_k, mode=mode,
                    instruction=instruction, filters=filters.model_dump(exclude_none=True) if filters else None,
                    max_tokens=max_tokens, include_libraries=include_libraries)
        return CallToolResult(content=[TextContent(type="text", text=render_search(out))], structured_content=out)

    @server.tool(title="Open file lines", description=OPEN_FILE_DOC, annotations=READ_ONLY)
    def open_file(
        path: Annotated[str, Field(
            min_length=1,
            description="File path relative to the repository root, or a search result's source "
                        "(\"src/a.py#L10-L40\") when start_line/end_line are omitted.")],
        start_line: Annotated[int | None, Field(ge=1, description="First line to read (1-based). Default 1.")] = None,
        end_line: Annotated[int | None, Field(
            ge=1, description="Last line to read (inclusive). Default: the end of the file (paged).")] = None,
    ) -> Annotated[CallToolResult, OpenFileOutput]:
        if path.strip().startswith("library:"):  # a reference library's document, read from its index
            from .libraries.documents import open_document

            out = _call(open_document, path.strip(), start_line, end_line)
        else:
            out = _call(slot.get().open_file, path, start_line, end_line)
        return CallToolResult(content=[TextContent(type="text", text=render_open_file(out))], structured_content=out)

    @server.tool(title="Index status", description=STATUS_DOC, annotations=READ_ONLY)
    def index_status() -> Annotated[CallToolResult, StatusOutput]:
        st = _call(slot.get().index_status)
        if slot.libraries is not None:
            st["libraries"] = _with_roles(st.get("libraries") or [], slot.libraries)
        return CallToolResult(content=[TextContent(type="text", text=render_status(st))], structured_content=st)

    def intel(tool: str, args: dict) -> CallToolResult:
        out = _call(slot.get().intel, tool, args)
        return CallToolResult(content=[TextContent(type="text", text=render_intel(out))], structured_content=out)

    @server.tool(title="Map the code", annotations=READ_ONLY, description=(
        "The structure of the repository or a folder: files, and (by `detail`) classes, functions and "
        "signatures, within `max_tokens`. Start here in an unfamiliar codebase."))
    def map_code(
        path: Annotated[str, Field(description="Folder or file relative to the root.")] = ".",
        depth: Annotated[int, Field(ge=MAP_DEPTH.low, le=MAP_DEPTH.high, description="Folder levels to expand.")] = 2,
        detail: Annotated[Literal["files", "signatures", "full"], Field(
            description="files: paths only; signatures: + definitions; full: + docstrings.")] = "signatures",
        language: Annotated[str | None, Field(description="Only this language, e.g. \"go\".")] = None,
        max_tokens: MaxTokens = 4000,
    ) -> Annotated[CallToolResult, MapOutput]:
        return intel("map_code", {"path": path, "depth": depth, "detail": detail, "language": language,
                                  "max_tokens": max_tokens})

    @server.tool(title="Find callers", description=INTEL_DOCS["find_callers"], annotations=READ_ONLY)
    def find_callers(symbol: Symbol = None, file: File = None, line: Line = None, depth: Depth = 1,
                     max_results: MaxResults = 50, max_tokens: MaxTokens = 4000) -> Annotated[CallToolResult, IntelOutput]:
        return intel("find_callers", {"symbol": symbol, "file": file, "line": line, "depth": depth,
                                      "max_results": max_results, "max_tokens": max_tokens})

    @server.tool(title="Find callees", description=INTEL_DOCS["find_callees"], annotations=READ_ONLY)
    def find_callees(symbol: Symbol = None, file: File = None, line: Line = None, depth: Depth = 1,
                     max_results: MaxResults = 50, max_tokens: MaxTokens = 4000) -> Annotated[CallToolResult, IntelOutput]:
        return intel("find_callees", {"symbol": symbol, "file": file, "line": line, "depth": depth,
                                      "max_results": max_results, "max_tokens": max_tokens})

    @server.tool(title="Find references", description=INTEL_DOCS["find_references"], annotations=READ_ONLY)
    def find_references(symbol: Symbol = None, file: File = None, line: Line = None,
                        include_declaration: Annotated[bool, Field(description="Also list the definition.")] = False,
                        max_results: MaxResults = 50,
                        max_tokens: MaxTokens = 4000) -> Annotated[CallToolResult, IntelOutput]:
        return intel("find_references", {"symbol": symbol, "file": file, "line": line,
                                         "include_declaration": include_declaration,
                                         "max_results": max_results, "max_tokens": max_tokens})

    @server.tool(title="Find implementations", description=INTEL_DOCS["find_implementations"], annotations=READ_ONLY)
    def find_implementations(symbol: Symbol = None, file: File = None, line: Line = None,
                             max_results: MaxResults = 50,
                             max_tokens: MaxTokens = 4000) -> Annotated[CallToolResult, IntelOutput]:
        return intel("find_implementations", {"symbol": symbol, "file": file, "line": line,
                                              "max_results": max_results, "max_tokens": max_tokens})

    @server.tool(title="Impact analysis", description=INTEL_DOCS["impact_analysis"], annotations=READ_ONLY)
    def impact_analysis(symbol: Symbol = None, file: File = None, line: Line = None, depth: Depth = 1,
                        max_results: MaxResults = 100,
                        max_tokens: MaxTokens = 4000) -> Annotated[CallToolResult, IntelOutput]:
        return intel("impact_analysis", {"symbol": symbol, "file": file, "line": line, "depth": depth,
                                         "max_results": max_results, "max_tokens": max_tokens})

    @server.tool(title="Memory rules", description=MEMORY_DOC, annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False))
    def memory(
        action: Annotated[Literal["list", "add", "update", "remove"], Field(
            description="list: show the rules; add: a new rule; update: change one; remove: delete one.")] = "list",
        label: Annotated[str | None, Field(
            description="The rule's label (add/update/remove): lowercase, hyphenated, at most 15 characters, "
                        "e.g. \"use-uv\".")] = None,
        content: Annotated[str | None, Field(
            description="The rule's text (required for add): one instruction the agent must follow.")] = None,
        scope: Annotated[Literal["project", "global"], Field(
            description="project: this repository only; global: every repository of this user.")] = "project",
        title: Annotated[str | None, Field(description="Optional short title.")] = None,
        tags: Annotated[list[str] | None, Field(description="Optional tags, e.g. [\"testing\"].")] = None,
    ) -> Annotated[CallToolResult, MemoryOutput]:
        args = {"label": label, "content": content, "scope": scope, "title": title, "tags": tags}
        out = _call(slot.get().memory, action, args)
        return CallToolResult(content=[TextContent(type="text", text=render_memory(out))], structured_content=out)

    @server.tool(title="Store a reference document", description=STORE_DOC, annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False))
    def store(
        content: Annotated[str, Field(description="The document's text (Markdown or plain text).")],
        library_name: Annotated[str, Field(
            description="The library to store it in (created if new): lowercase letters, digits, '-', '_', '.', "
                        "e.g. \"stripe-api\".")],
        title: Annotated[str | None, Field(description="Optional title (becomes the document's heading).")] = None,
        source: Annotated[str | None, Field(description="Optional: where it came from (a book, a ticket, ...).")] = None,
        url: Annotated[str | None, Field(description="Optional: the URL it came from.")] = None,
    ) -> Annotated[CallToolResult, StoreOutput]:
        from .libraries.store_doc import store as store_document

        if slot.libraries is None:
            raise ToolError("reference libraries are not available in this server")
        out = _call(store_document, slot.libraries, content, library_name, title, source, url)
        return CallToolResult(content=[TextContent(type="text", text=out["message"])], structured_content=out)

    @server.resource(MEMORY_RESOURCE, name="memory-rules", title="Memory rules", mime_type="text/markdown",
                     description="The user's global and this repository's memory rules, as markdown.")
    def memory_rules() -> str:
        from .memory.rules import render_rules_markdown

        out = _call(slot.get().memory, "list", {})
        return render_rules_markdown(out["rules"])

    return server


def _with_roles(libraries: list[dict], pool) -> list[dict]:
    """The status's libraries (counts, failures) with this process's role for each (never raises)."""
    try:
        roles = pool.roles()
    except Exception:
        log.warning("could not read the libraries' roles", exc_info=True)
        roles = {}
    return [{**lib, "role": roles.get(lib["name"])} for lib in libraries]


def render_intel(out: dict) -> str:
    """A short text rendering of a code-intelligence answer (the JSON is in structuredContent)."""
    if "text" in out and "dirs" in out:  # map_code: its text says what a budget cut, if anything
        return out["text"]
    t = out.get("target") or {}
    head = (f"{t.get('symbol', '?')} ({t.get('path', '?')}:{t.get('line', '?')}): {len(out['items'])} locations "
            f"from {out.get('source', 'treesitter')}")
    if out.get("truncated"):
        head += " (truncated)"
    lines = [head] + [f"{i['path']}:{i['line']} {i.get('symbol') or ''} [{i['kind']}] {i.get('context', '')[:100]}"
                      for i in out["items"][:40]]
    if out.get("message"):
        lines.append(out["message"])
    return "\n".join(lines)


def find_root(start: Path) -> Path:
    """The workspace for a server started without ``--root``: the nearest directory at or above
    ``start`` that has a Probe index, else the nearest git repository, else ``start``."""
    start = start.resolve()
    for marker in (Path(".probe") / "config.json", Path(".git")):
        for d in (start, *start.parents):
            if (d / marker).exists():
                return d
    return start


def configure_logging(root: Path) -> None:
    """Probe's logs to stderr and a rotating ``.probe/logs/probe-mcp.log``; never to stdout."""
    level = os.environ.get("PROBE_LOG", "INFO").upper()
    fmt = logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    handlers: list[logging.Handler] = []
    try:
        log_dir = root / ".probe" / "logs"
        ensure_private_dir(log_dir.parent)
        log_dir.mkdir(exist_ok=True)
        handlers.append(logging.handlers.RotatingFileHandler(log_dir / "probe-mcp.log", maxBytes=2_000_000,
                                                             backupCount=3, encoding="utf-8"))
    except OSError as exc:
        print(f"probe: cannot write logs under {root / '.probe'}: {exc}", file=sys.stderr)
    handlers.append(logging.StreamHandler(sys.stderr))
    probe_log = logging.getLogger("probe")
    for h in handlers:
        h.setFormatter(fmt)
        h.addFilter(RedactingFilter())
        probe_log.addHandler(h)
    probe_log.setLevel(level)
    probe_log.propagate = False


class _StdoutGuard:
    """Keep everything but the MCP transport off the real stdout, from the first line on.

    fd 1 is pointed at stderr at once (C libraries, child processes); the wire lives on a private
    duplicate. ``sys.stdout`` is stderr except while the SDK's ``stdio_server`` starts: it takes
    the stream it will serve from ``sys.stdout`` at that moment, so ``wire()`` hands it the private
    duplicate and ``seal()`` (first thing in the lifespan, once it has it) takes it back.
    """

    def __init__(self):
        import io

        self._wire = io.TextIOWrapper(io.FileIO(os.dup(1), "wb", closefd=True), encoding="utf-8",
                                      write_through=True)
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def wire(self) -> None:
        sys.stdout = self._wire

    def seal(self) -> None:
        sys.stdout = sys.stderr


async def _serve_stdio(server: MCPServer) -> None:
    """``MCPServer.run_stdio_async``, with unreadable JSON-RPC lines answered (``mcp_input``) rather
    than dropped: the SDK offers no hook for that, so the low-level server is driven directly."""
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(ReplyToUnreadable(read_stream, write_stream), write_stream,
                           lowlevel.create_initialization_options())


def run_stdio(root: Path | None = None) -> int:
    """Serve MCP over stdin/stdout for ``root`` until the client disconnects."""
    from .engine import EngineSettings, open_engine
    from .scan import refuse_git_internals

    guard = _StdoutGuard()
    root = Path(root).expanduser().resolve() if root else find_root(Path.cwd())
    if not root.is_dir():
        raise ProbeError(f"{root} is not a directory")
    refuse_git_internals(root)  # a bare repository or .git/: refused before .probe/logs is made in it
    configure_logging(root)
    settings = EngineSettings.from_env()

    def start_engine():
        guard.seal()
        return open_engine(root, settings=settings)

    def start_libraries():
        from .libraries.pool import LibraryPool

        return LibraryPool(settings).start()  # opens each library's engine in the background

    server = build_server(start_engine, default_max_tokens=settings.default_max_tokens, root=root,
                          libraries_factory=start_libraries)
    log.info("probe mcp starting for %s (pid %d)", root, os.getpid())
    from .config import user_data_dir_problem

    if problem := user_data_dir_problem():  # said at start, not when the first global rule fails
        log.warning("%s", problem)

    def _terminate(signum, _frame):
        # A client stopping us. The transport's stdin reader sits in a thread that cancellation
        # cannot reach, so close the engine (flush the index, drop the owner lock) right here.
        log.info("signal %d: shutting down", signum)
        try:
            server.probe_engine_slot.close()
        except Exception:
            log.exception("closing the engines failed")
        logging.shutdown()
        os._exit(0)

    signal.signal(signal.SIGTERM, _terminate)
    # Ctrl-C, or a client that interrupts its server: the same clean exit. Left to Python, SIGINT
    # raised KeyboardInterrupt inside the event loop, which stopped answering while the stdin reader
    # thread kept the process alive.
    signal.signal(signal.SIGINT, _terminate)
    guard.wire()
    try:
        anyio.run(_serve_stdio, server)
    except KeyboardInterrupt:
        pass
    except BaseExceptionGroup as group:
        # the client closed its end with answers still on their way: it left, which is how a stdio
        # server's life ends, not an internal error; anything else in the group still is one
        rest = group.split(_CLIENT_GONE)[1]
        if rest is not None:
            raise rest
        log.info("the client went away with calls in flight; shutting down")
        try:  # the lifespan may not have got to it: flush the index, drop the owner lock, stop the
            server.probe_engine_slot.close()  # native threads before the interpreter exits
        except Exception:
            log.exception("closing the engines failed")
    finally:
        guard.seal()
    return 0


_CLIENT_GONE = (BrokenPipeError, ConnectionResetError, anyio.BrokenResourceError, anyio.ClosedResourceError)
