"""The MCP tools' input and output models: what an agent reads in ``tools/list``.

Field descriptions are written for the model that calls the tools. Outputs are validated against
these models by the SDK before they leave the server (``structuredContent``).
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class SearchFilters(BaseModel):
    """Optional restrictions; every list is OR inside, AND across keys."""

    model_config = ConfigDict(extra="forbid")

    languages: list[str] | None = Field(None, description='Only these languages, e.g. ["python", "go"].')
    chunk_kinds: list[Literal["code", "doc", "config", "test"]] | None = Field(
        None, description='Only these kinds of content, e.g. ["code"] to skip docs and tests.')
    include_globs: list[str] | None = Field(
        None, description='Only paths matching these gitignore-style globs, e.g. ["src/auth/**"]. In a monorepo, '
                          'name the project you work in (["services/billing/**"]): other projects\' code '
                          'answers the same question otherwise.')
    exclude_globs: list[str] | None = Field(None, description='Skip paths matching these globs, e.g. ["**/vendor/**"].')
    branch: str | None = Field(None, description=(
        'Git branch to search: default the checked-out one; "*" every indexed branch; or a branch name '
        "(its versions as last indexed while it was checked out)."))
    collections: list[str] | None = Field(  # values checked in probe_core, for a one-line error
        None, description='Which sources to search: "project" and/or "libraries": ["project"] (default), '
                          '["libraries"] (the user\'s reference libraries only) or both (merged by similarity '
                          'to the query).')
    libraries: list[str] | None = Field(
        None, description='Only these reference libraries, by name (implies the "libraries" collection).')


class Signals(BaseModel):
    dense_rank: int | None = Field(None, description="Rank in the semantic (embedding) list; null if absent there.")
    bm25_rank: int | None = Field(None, description="Rank in the lexical (BM25) list; null if absent there.")
    literal_rank: int | None = Field(None, description="Rank among the chunks holding a string the query quotes.")
    identifier_rank: int | None = Field(
        None, description="Rank among the chunks defining or using an identifier the query names.")
    graph_rank: int | None = Field(None, description="Rank among the callers/callees/related types of the top hits.")
    rerank_score: float | None = None
    dense_score: float | None = Field(
        None, description="Cosine similarity of the best chunk to the query (what merges libraries with code).")


class SearchHit(BaseModel):
    path: str = Field(description="File path relative to the repository root.")
    start_line: int = Field(description="First line of the matching range (1-based).")
    end_line: int = Field(description="Last line of the matching range (inclusive).")
    source: str = Field(description="Cite this (path#Lstart-Lend); pass it to open_file to read the range.")
    snippet: str = Field(description="The first lines of the range, read from disk now.")
    snippet_truncated: bool = Field(description="True when the snippet shows less than the whole range.")
    score: float = Field(description="Fused rank score (higher is better); compare within one answer only.")
    stale: bool = Field(description="The file changed since it was indexed: re-read it with open_file.")
    symbol: str | None = Field(None, description="Function, class or section the range belongs to.")
    language: str | None = None
    chunk_kind: str | None = Field(None, description="code, doc, config or test.")
    signals: Signals
    branches: list[str] | None = Field(
        None, description="Only for another branch's version of the file (filters.branch): the branches that "
                          "have it; the snippet is read from git, and open_file shows the checked-out file.")
    collection: Literal["project", "libraries"] = Field(
        "project", description='"project": this repository; "libraries": a reference library (see library_name).')
    library_name: str | None = Field(None, description="The reference library of a library result.")


class Truncation(BaseModel):
    results_dropped: int = Field(description="Results left out to fit max_tokens.")
    snippets_shortened: int = Field(description="Snippets cut short to fit max_tokens.")
    max_tokens: int | None = None
    estimated_tokens: int = Field(description="Estimated size of this answer (characters / 4).")


class SearchOutput(BaseModel):
    results: list[SearchHit]
    status: Literal["healthy", "uncertain", "degraded"] = Field(
        description="uncertain: the index is still being built, lacks dense vectors, or has an update pending "
                    "(files changed, not indexed yet), so results may miss things or show old content; "
                    "degraded: a backend is impaired.")
    message: str | None = Field(None, description="Why the status is not healthy, and what was trimmed.")
    truncated: Truncation
    indexing_in_progress: bool = False
    index_update_pending: bool | None = Field(
        None, description="True when changes (a checkout, edits, a requested rescan) are not indexed yet.")
    index_generation: int
    dense_coverage: float = Field(description="Share of chunks that have semantic vectors (1.0 = all).")
    took_ms: float
    mode: str
    sources: list[dict] | None = Field(
        None, description="With libraries: each source searched (collection, library_name, status, results).")


class OpenFileOutput(BaseModel):
    path: str = Field(description="The file, relative to the repository root.")
    start_line: int
    end_line: int
    total_lines: int = Field(description="Lines in the whole file.")
    lines: list[str] = Field(description="The exact lines start_line..end_line from disk, without line ends.")
    file_hash: str = Field(description="16 hex digits of sha256 over the file's text (as the index records it).")
    mtime: float = Field(description="Modification time, seconds since the epoch.")
    size: int
    truncated: bool = Field(description="True when the range was longer than one answer carries.")
    next_start_line: int | None = Field(None, description="Where to continue when truncated.")
    index_state: Literal["current", "stale", "not_indexed", "unknown", "damaged"] = Field(
        description="Whether the index holds this exact version of the file (damaged: the index's files are; "
                    "a running server rebuilds them, message says so).")
    message: str | None = None
    collection: Literal["project", "libraries"] | None = Field(
        None, description='"libraries" for a library document (read from the library\'s index).')
    library_name: str | None = None
    file: str | None = Field(None, description="A library document's file on disk (absolute path).")


class Progress(BaseModel):
    phase: str = Field(description="starting, scanning, chunking, sparse, dense, idle or error.")
    files_scanned: int
    files_total: int
    chunks_indexed: int
    chunks_embedded: int
    chunks_total: int


class StatusOutput(BaseModel):
    model_config = ConfigDict(extra="allow")

    root: str
    role: Literal["owner", "attached", "direct"] = Field(
        description="owner: this process indexes; attached: it forwards to the owner process.")
    pid: int
    owner_pid: int | None = None
    indexing_in_progress: bool
    progress: Progress | None = None
    watcher_running: bool | None = None
    backend_reachable: bool | None = Field(
        None, description="Whether the store and embedder answered (null: not checked yet); see last_error.")
    last_error: str | None = None
    index_generation: int | None = None
    files_indexed: int | None = None
    chunks_indexed: int | None = None
    chunks_embedded: int | None = None
    dense_coverage: float | None = None
    index_config_mismatch: bool | None = None
    index_damaged: bool | None = Field(
        None, description="A file under .probe/ is corrupt (last_error says which): a running server rebuilds it by "
                          "itself, or run `probe index --rebuild`.")
    index_update_pending: bool | None = Field(
        None, description="Changes the watcher saw are not indexed yet: searches may show old content.")
    preset: str | None = None
    branch: str | None = Field(None, description="The checked-out git branch (search's default filter).")
    indexed_branches: list[str] | None = Field(
        None, description="Branches whose versions are indexed (each as last checked out): values for filters.branch.")
    files_skipped: int | None = Field(
        None, description="Files the last full scan left out (binary, too large, links out of the root, "
                          "undecodable names, unreadable); ignored files are not counted.")
    skipped: dict | None = Field(
        None, description="by_reason: {reason: count}; examples: [{path, reason}] of the files left out.")


class IntelItem(BaseModel):
    model_config = ConfigDict(extra="allow")

    path: str = Field(description="File path relative to the repository root.")
    line: int = Field(description="The line of the call, reference or declaration (1-based).")
    symbol: str | None = Field(None, description="The definition this location is (or is inside).")
    kind: str = Field(description="call | reference | import | definition | implementation ...")
    context: str = Field("", description="The source line, trimmed.")
    confidence: float = Field(description="1.0 = resolved through scopes/imports; lower = a same-named candidate.")


class IntelOutput(BaseModel):
    model_config = ConfigDict(extra="allow")

    target: dict | None = Field(description="The definition the question resolved to (path, line, symbol).")
    items: list[IntelItem]
    truncated: bool = Field(description="True when max_results or max_tokens cut the list.")
    source: str = Field(description='"treesitter" (static symbol graph) or "lsp" (a language server answered).')


class MapOutput(BaseModel):
    model_config = ConfigDict(extra="allow")

    target: dict
    items: list[dict] = Field(description="Files with their language, line count and (by detail) symbols.")
    dirs: list[dict] = Field(description="Folders below `depth`, summarised.")
    text: str = Field(description="The map as indented text.")
    truncated: bool
    source: str


class MemoryRule(BaseModel):
    model_config = ConfigDict(extra="allow")

    label: str = Field(description="Unique within its scope: lowercase, hyphenated, at most 15 characters.")
    scope: Literal["global", "project"] = Field(description="global: every repository; project: this one.")
    content: str = Field(description="The rule itself, as the agent should follow it.")
    title: str | None = None
    tags: list[str] = Field(default_factory=list)
    created_at: str
    updated_at: str


class MemoryOutput(BaseModel):
    model_config = ConfigDict(extra="allow")

    action: str = Field(description="add | update | remove | list")
    rule: MemoryRule | None = Field(None, description="The rule added, updated or removed (null for list).")
    rules: list[MemoryRule] = Field(description="For list: all current rules, global first, then the project's, by "
                                                "creation. Empty for add/update/remove (see `rule`).")
    message: str


class StoreOutput(BaseModel):
    model_config = ConfigDict(extra="allow")

    library_name: str
    path: str = Field(description="The stored document, as library:NAME/FILE (open_file reads it).")
    source: str = Field(description="Same as path: cite it, or pass it to open_file.")
    file: str = Field(description="The Markdown file written under the user's data dir.")
    created: bool = Field(description="False when identical content was already stored (nothing written).")
    library_created: bool = Field(description="True when this call created the library.")
    chunks_indexed: int = Field(description="Chunks indexed now (searchable at once; semantic vectors follow).")
    message: str
