"""The one table of MCP tools: each entry is a name, a description, its input (parameters the SDK turns
into the JSON schema and checks calls against), a handler over the engine, and a renderer.

Adding a tool is adding an entry to ``table``. An entry works without a server: ``check`` validates
arguments with the same model the SDK builds, ``handler`` answers them from an ``EngineSlot``, ``render``
turns the answer into text; ``server.build_server`` registers each entry's ``function``.
"""
from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from probe_core.errors import ProbeError
from probe_core.limits import INTEL_DEPTH, MAP_DEPTH, MAX_RESULTS, MAX_TOKENS, QUERY, TOP_K
from probe_core.memory.rules import MAX_RULES, MAX_SCOPE_CHARS
from probe_core.redaction import redact

from .render import render_intel, render_memory, render_message, render_open_file, render_search, render_status
from .schemas import (IntelOutput, MapOutput, MemoryOutput, OpenFileOutput, SearchFilters, SearchOutput, StatusOutput,
                      StoreOutput)

log = logging.getLogger("probe.mcp")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
MAX_ERROR_CHARS = 1000  # an error names the bad input; it must not echo a 1 MB argument back


class EngineSlot:
    """Holds the engine the server's lifespan starts; handlers reach it (and the library pool) through here."""

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


def _one_line(message: str) -> str:
    """An error message as one line of bounded length (messages quote what the caller sent)."""
    line = " ".join(redact(message[:4 * MAX_ERROR_CHARS]).split())  # a key that fits the answer is masked
    return line if len(line) <= MAX_ERROR_CHARS else line[:MAX_ERROR_CHARS] + "… (message cut)"


def call(fn, *args, **kwargs):
    """Run an engine call; every failure becomes a ToolError whose message the agent can act on."""
    try:
        return fn(*args, **kwargs)
    except ToolError:
        raise
    except ProbeError as exc:
        raise ToolError(_one_line(str(exc))) from exc
    except Exception as exc:
        from probe_core.storage.damage import as_probe_error

        if isinstance(known := as_probe_error(exc), ProbeError):  # a damaged index file: say so, with the fix
            raise ToolError(_one_line(str(known))) from exc
        log.exception("tool failed")
        raise ToolError(_one_line(f"internal error: {type(exc).__name__}: {exc}")
                        + " (details in .probe/logs/probe-mcp.log)") from exc


@dataclass(frozen=True)
class Tool:
    """One MCP tool. ``params`` are its arguments (name → (annotation, default)); the SDK derives the
    input schema from them. ``handler(slot, args)`` returns the structured answer, ``render`` its text."""

    name: str
    title: str
    description: str
    params: dict[str, tuple[Any, Any]]
    output: type[BaseModel]
    handler: Callable[[EngineSlot, dict], dict]
    render: Callable[[dict], str]
    annotations: ToolAnnotations = field(default_factory=lambda: READ_ONLY)

    def signature(self) -> inspect.Signature:
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        return inspect.Signature(
            [inspect.Parameter(n, kind, annotation=a, default=d) for n, (a, d) in self.params.items()],
            return_annotation=Annotated[CallToolResult, self.output])

    def function(self, slot: EngineSlot | None) -> Callable[..., CallToolResult]:
        """The callable the server registers: checked arguments in, handler's answer and its text out."""
        def tool(**args) -> CallToolResult:
            out = self.handler(slot, args)
            return CallToolResult(content=[TextContent(type="text", text=self.render(out))], structured_content=out)

        tool.__name__ = tool.__qualname__ = self.name
        tool.__signature__ = self.signature()
        return tool

    def check(self, args: dict) -> dict:
        """``args`` validated (defaults filled in) exactly as the SDK checks a call; raises ValidationError."""
        from mcp.server.mcpserver.utilities.func_metadata import func_metadata

        model = func_metadata(self.function(None)).arg_model
        return model.model_validate(args).model_dump_one_level()


REQUIRED = inspect.Parameter.empty

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

MAP_DOC = ("The structure of the repository or a folder: files, and (by `detail`) classes, functions and "
           "signatures, within `max_tokens`. Start here in an unfamiliar codebase.")

MEMORY_DOC = """\
Keep durable rules the agent must follow in later sessions: user preferences (scope "global", every \
repository) and project conventions (scope "project", this repository).

Actions: "list" (global rules first, then the project's); "add" (label + content; the label must be \
new in its scope); "update" (label + any of content, title, tags); "remove" (label). Labels are short, \
lowercase and hyphenated, at most 15 characters ("use-uv", "no-mocks"). Add a rule when the user states \
a lasting preference or convention, not for one-off task details. The current rules are also in the \
resource `probe://memory/rules` and in these instructions at session start. "add", "update" and \
"remove" answer with the one rule they changed; each scope keeps at most {max_rules} rules and \
{max_chars:,} characters.""".format(max_rules=MAX_RULES, max_chars=MAX_SCOPE_CHARS)

SYMBOL_DOC = ("The symbol's name: a function, class or method (`Type.method`). Or omit it and give "
              "`file` + `line` of the definition.")

# argument types shared by the code-intelligence tools
Symbol = Annotated[str | None, Field(description=SYMBOL_DOC)]
File = Annotated[str | None, Field(description="File of the definition (with `line`), relative to the root.")]
Line = Annotated[int | None, Field(ge=1, description="Line of the definition in `file`.")]
MaxResults = Annotated[int, Field(ge=MAX_RESULTS.low, le=MAX_RESULTS.high,
                                  description="At most this many locations.")]
MaxTokens = Annotated[int, Field(ge=MAX_TOKENS.low, le=MAX_TOKENS.high,
                                 description="Budget for the answer (characters/4).")]
Depth = Annotated[int, Field(ge=INTEL_DEPTH.low, le=INTEL_DEPTH.high,
                             description="1 = direct only; more follows the graph (cycles cut).")]
IncludeDeclaration = Annotated[bool, Field(description="Also list the definition.")]


def _search(slot: EngineSlot, a: dict) -> dict:
    from probe_core.libraries.fusion import search_sources
    from probe_core.records import SearchRequest

    filters = a["filters"]
    request = SearchRequest(a["query"], top_k=a["top_k"], mode=a["mode"], instruction=a["instruction"],
                            filters=filters.model_dump(exclude_none=True) if filters else None,
                            max_tokens=a["max_tokens"])
    return call(search_sources, slot.get(), slot.libraries, request, include_libraries=a["include_libraries"])


def _open_file(slot: EngineSlot, a: dict) -> dict:
    path = a["path"]
    if path.strip().startswith("library:"):  # a reference library's document, read from its index
        from probe_core.libraries.documents import open_document

        return call(open_document, path.strip(), a["start_line"], a["end_line"])
    return call(slot.get().open_file, path, a["start_line"], a["end_line"])


def _index_status(slot: EngineSlot, _a: dict) -> dict:
    from probe_core.libraries.manage import with_library_summaries

    st = call(with_library_summaries, call(slot.get().index_status))
    if slot.libraries is not None:
        st["libraries"] = _with_roles(st.get("libraries") or [], slot.libraries)
    return st


def _with_roles(libraries: list[dict], pool) -> list[dict]:
    """The status's libraries (counts, failures) with this process's role for each (never raises)."""
    try:
        roles = pool.roles()
    except Exception:
        log.warning("could not read the libraries' roles", exc_info=True)
        roles = {}
    return [{**lib, "role": roles.get(lib["name"])} for lib in libraries]


def _intel(name: str) -> Callable[[EngineSlot, dict], dict]:
    """The handler of a code-intelligence tool: the engine's ``intel`` verb under the tool's name."""
    return lambda slot, a: call(slot.get().intel, name, dict(a))


def _memory(slot: EngineSlot, a: dict) -> dict:
    args = dict(a)
    action = args.pop("action")
    return call(slot.get().memory, action, args)


def _store(slot: EngineSlot, a: dict) -> dict:
    from probe_core.libraries.store_doc import store as store_document

    if slot.libraries is None:
        raise ToolError("reference libraries are not available in this server")
    return call(store_document, slot.libraries, a["content"], a["library_name"], a["title"], a["source"], a["url"])


def _search_params(default_max_tokens: int) -> dict[str, tuple[Any, Any]]:
    return {
        "query": (Annotated[str, Field(
            min_length=1, max_length=QUERY.high,
            description="What you are looking for, in words or code terms: a behaviour "
                        "(\"retry failed uploads with backoff\"), a concept, or a (partial) identifier.")], REQUIRED),
        "top_k": (Annotated[int, Field(ge=TOP_K.low, le=TOP_K.high, description="How many ranges to return.")], 12),
        "mode": (Annotated[Literal["auto", "fast", "quality"], Field(
            description="fast: hybrid retrieval only; quality: also rerank when a reranker is configured; "
                        "auto: let Probe choose.")], "auto"),
        "instruction": (Annotated[str | None, Field(
            description="Optional task description for instruction-aware embedders/rerankers, e.g. "
                        "\"find the implementation, not tests\".")], None),
        "filters": (Annotated[SearchFilters | None, Field(
            description="Optional: restrict by languages, chunk_kinds, include_globs, exclude_globs, branch; "
                        "collections/libraries pick the sources.")], None),
        "include_libraries": (Annotated[bool, Field(
            description="Also search the user's reference libraries (documentation folders and stored documents) "
                        "and fuse them with the code results; same as filters.collections "
                        "[\"project\", \"libraries\"].")], False),
        "max_tokens": (Annotated[int, Field(
            ge=MAX_TOKENS.low, le=MAX_TOKENS.high,
            description="Budget for this answer (estimated as characters/4). Snippets are shortened, then "
                        "results dropped, to fit; the answer says what was cut.")], default_max_tokens),
    }


OPEN_FILE_PARAMS = {
    "path": (Annotated[str, Field(
        min_length=1,
        description="File path relative to the repository root, or a search result's source "
                    "(\"src/a.py#L10-L40\") when start_line/end_line are omitted.")], REQUIRED),
    "start_line": (Annotated[int | None, Field(ge=1, description="First line to read (1-based). Default 1.")], None),
    "end_line": (Annotated[int | None, Field(
        ge=1, description="Last line to read (inclusive). Default: the end of the file (paged).")], None),
}

MAP_PARAMS = {
    "path": (Annotated[str, Field(description="Folder or file relative to the root.")], "."),
    "depth": (Annotated[int, Field(ge=MAP_DEPTH.low, le=MAP_DEPTH.high, description="Folder levels to expand.")], 2),
    "detail": (Annotated[Literal["files", "signatures", "full"], Field(
        description="files: paths only; signatures: + definitions; full: + docstrings.")], "signatures"),
    "language": (Annotated[str | None, Field(description="Only this language, e.g. \"go\".")], None),
    "max_tokens": (MaxTokens, 4000),
}

MEMORY_PARAMS = {
    "action": (Annotated[Literal["list", "add", "update", "remove"], Field(
        description="list: show the rules; add: a new rule; update: change one; remove: delete one.")], "list"),
    "label": (Annotated[str | None, Field(
        description="The rule's label (add/update/remove): lowercase, hyphenated, at most 15 characters, "
                    "e.g. \"use-uv\".")], None),
    "content": (Annotated[str | None, Field(
        description="The rule's text (required for add): one instruction the agent must follow.")], None),
    "scope": (Annotated[Literal["project", "global"], Field(
        description="project: this repository only; global: every repository of this user.")], "project"),
    "title": (Annotated[str | None, Field(description="Optional short title.")], None),
    "tags": (Annotated[list[str] | None, Field(description="Optional tags, e.g. [\"testing\"].")], None),
}

STORE_PARAMS = {
    "content": (Annotated[str, Field(description="The document's text (Markdown or plain text).")], REQUIRED),
    "library_name": (Annotated[str, Field(
        description="The library to store it in (created if new): lowercase letters, digits, '-', '_', '.', "
                    "e.g. \"stripe-api\".")], REQUIRED),
    "title": (Annotated[str | None, Field(description="Optional title (becomes the document's heading).")], None),
    "source": (Annotated[str | None, Field(description="Optional: where it came from (a book, a ticket, ...).")], None),
    "url": (Annotated[str | None, Field(description="Optional: the URL it came from.")], None),
}

# the code-intelligence tools, one shape: (name, title, description, `depth`|`include_declaration`|None, max_results)
INTEL_TOOLS = (
    ("find_callers", "Find callers", "Every call site of a function or method (with the calling definition), "
     "resolved through imports and self/this; `depth` > 1 follows callers of callers. Beats grep on common names.",
     "depth", 50),
    ("find_callees", "Find callees", "The functions a function calls, as their definition locations in this "
     "repository (library calls left out); `depth` > 1 follows them transitively (cycles cut).", "depth", 50),
    ("find_references", "Find references", "Every use of a symbol: calls, imports, type annotations, subclassing "
     "(`include_declaration` adds the definition).", "include_declaration", 50),
    ("find_implementations", "Find implementations", "Classes/types implementing an interface, trait or protocol, "
     "or subclassing a class (transitively; Go by method set).", None, 50),
    ("impact_analysis", "Impact analysis", "What breaks if this symbol changes: direct callers, type references, "
     "implementations and tests covering it, with file/function counts and a risk level, within `max_tokens`.",
     "depth", 100),
)
_INTEL_EXTRA = {"depth": (Depth, 1), "include_declaration": (IncludeDeclaration, False)}


def intel_tool(name: str, title: str, description: str, extra: str | None, max_results: int) -> Tool:
    """A code-intelligence tool: a symbol (or file + line), one optional extra argument, and budgets."""
    params = {"symbol": (Symbol, None), "file": (File, None), "line": (Line, None),
              **({extra: _INTEL_EXTRA[extra]} if extra else {}),
              "max_results": (MaxResults, max_results), "max_tokens": (MaxTokens, 4000)}
    return Tool(name, title, description, params, IntelOutput, _intel(name), render_intel)


def table(default_max_tokens: int = 6000) -> tuple[Tool, ...]:
    """Every tool the server lists, in the order it lists them (``default_max_tokens``: search's budget)."""
    return (
        Tool("search", "Search the codebase", SEARCH_DOC, _search_params(default_max_tokens), SearchOutput,
             _search, render_search),
        Tool("open_file", "Open file lines", OPEN_FILE_DOC, OPEN_FILE_PARAMS, OpenFileOutput, _open_file,
             render_open_file),
        Tool("index_status", "Index status", STATUS_DOC, {}, StatusOutput, _index_status, render_status),
        Tool("map_code", "Map the code", MAP_DOC, MAP_PARAMS, MapOutput, _intel("map_code"), render_intel),
        *(intel_tool(*spec) for spec in INTEL_TOOLS),
        Tool("memory", "Memory rules", MEMORY_DOC, MEMORY_PARAMS, MemoryOutput, _memory, render_memory,
             ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                             open_world_hint=False)),
        Tool("store", "Store a reference document", STORE_DOC, STORE_PARAMS, StoreOutput, _store, render_message,
             ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)),
    )
