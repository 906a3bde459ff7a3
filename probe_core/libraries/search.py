"""Search one library's index: the same hybrid query as a project (BM25 + dense, RRF in the store),
with snippets from the text kept in the index (``texts``) instead of from disk.

Answers have the shape of a project search answer (``SearchResponse.to_dict``); each result also
says ``collection: "libraries"`` and ``library_name``, and its ``path`` and ``source`` are
``library:<name>/<path>`` (``open_file`` reads those from the index).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .. import sparse
from ..errors import ConfigError
from ..retrieval.coverage import Wording, index_health, query_vector
from ..retrieval.search import RRF_K, SearchFilters, check_query, file_filter
from ..retrieval.snippets import SNIPPET_LINES
from ..storage.protocol import HybridQuery, StoreFilter
from .texts import TextReader

if TYPE_CHECKING:
    from ..workspace import Workspace

LIBRARY_PREFIX = "library:"
COLLECTION = "libraries"  # every library result's (and point's) ``collection``


def wording(name: str) -> Wording:
    """A library's notes name it (they join a fused answer's), and it stays ``uncertain`` until
    every chunk has its vector."""
    return Wording(prefix=f"library {name}: ", lexical_only="lexical results only",
                   empty=f"library {name} is empty or not indexed yet", uncertain_below=1.0,
                   partial=lambda coverage: f"dense vectors cover {coverage:.0%} of chunks (lexical results are complete)")


def library_ref(name: str, path: str) -> str:
    """``library:<name>/<path>``: how a library document is named in results and ``open_file``."""
    return f"{LIBRARY_PREFIX}{name}/{path}"


def parse_library_ref(ref: str) -> tuple[str, str]:
    """``library:numpy/guide/a.md`` → ``("numpy", "guide/a.md")``."""
    rest = ref[len(LIBRARY_PREFIX):] if ref.startswith(LIBRARY_PREFIX) else ref
    name, sep, path = rest.partition("/")
    if not sep or not name or not path:
        raise ConfigError(f"{ref!r} is not a library document reference; expected 'library:NAME/PATH'")
    return name, path


def library_search(ws: "Workspace", query: str, *, top_k: int = 12, mode: str = "auto",
                   instruction: str | None = None, filters: dict | None = None) -> dict:
    """One library's ranked results, shaped like a project search answer."""
    from ..indexing.indexer import check_identity

    t0 = time.perf_counter()
    check_query(query, top_k, mode)
    flt = SearchFilters.from_dict(filters)  # branch: libraries have none, ignored
    check_identity(ws, adopt=False)
    name = ws.profile.name
    words = wording(name)
    counts = ws.manifest.counts()
    coverage = counts["chunks_dense"] / counts["chunks"] if counts["chunks"] else 0.0
    dense_vec, down = query_vector(ws, counts, query, instruction, words)
    status, notes = ("degraded", [down]) if down else ("healthy", [])
    store_filter = StoreFilter(workspace_id=ws.workspace_id, file_paths=file_filter(ws, flt), languages=flt.languages,
                               chunk_kinds=flt.chunk_kinds)
    hq = HybridQuery(sparse=sparse.embed_query(query), dense=dense_vec, filter=store_filter,
                     limit=max(30, top_k * 3), prefetch_limit=max(100, top_k * 8), rrf_k=RRF_K)
    hits = ws.store.hybrid_query(hq) if counts["chunks"] else []

    reader = TextReader(ws.probe_dir / "manifest.sqlite")
    results: list[dict] = []
    kept: dict[str, list[tuple[int, int]]] = {}
    try:
        for h in hits:
            p = h.payload
            path, start, end = p["file_path"], int(p["start_line"]), int(p["end_line"])
            if any(s <= start and end <= e for s, e in kept.get(path, [])):
                continue  # inside a range already listed (an overlapping fragment)
            kept.setdefault(path, []).append((start, end))
            row = reader.get(path, p.get("file_hash"))
            lines = row[0].splitlines() if row else []
            ref = library_ref(name, path)
            results.append({
                "path": ref, "start_line": start, "end_line": end,
                "snippet": "\n".join(lines[start - 1:min(end, start + SNIPPET_LINES - 1)]),
                "score": round(h.score, 6), "stale": False, "source": f"{ref}#L{start}-L{end}",
                "symbol": p.get("symbol"), "language": p.get("language"), "chunk_kind": p.get("chunk_kind"),
                "signals": {"dense_rank": h.dense_rank, "bm25_rank": h.bm25_rank, "dense_score": h.dense_score},
                "collection": COLLECTION, "library_name": name,
            })
            if len(results) >= top_k:
                break
    finally:
        reader.close()

    status, first = index_health(counts, coverage, status, words)
    if first:
        notes.insert(0, first)
    out = {"results": results, "status": status, "took_ms": round((time.perf_counter() - t0) * 1000, 2),
           "index_generation": ws.manifest.generation, "dense_coverage": round(coverage, 4),
           "mode": "fast" if mode == "auto" else mode}
    if notes:
        out["message"] = "; ".join(notes)
    return out
