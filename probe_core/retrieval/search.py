"""Hybrid search: dense + BM25 prefetch → RRF in the store → merge → expand → snippets from disk."""
from __future__ import annotations

import dataclasses
import functools
import json
import time
from dataclasses import dataclass, field

import pathspec

from .. import environment
from .. import sparse
from ..errors import ConfigError, ProbeError
from ..limits import QUERY, TOP_K
from ..records import SearchResult
from ..storage.protocol import HybridQuery, StoreFilter, StoreHit
from ..workspace import Workspace
from .cache import LruCache
from .coverage import DENSE_NEARLY_DONE, coverage_note, index_health, query_vector  # noqa: F401 - the first two: their old home
from .expansion import query_expansion, with_bridged_words
from .graph_evidence import graph_list, join_neighbours
from .index_state import index_state
from .literals import ExactLists, exact_lists, with_named_definition
from .priors import apply_priors, kind_prior
from .query_intent import QueryIntent, parse_query
from .rank_fusion import fuse, lead_with
from .ranges import Range, cap_per_file, drop_overlaps, expand_tiny, join_following, lift_file_mates, merge_hits
from .ranking import DEFAULT_RANKING, RankingSettings
from .filter_values import clean_filter_value
from .snippets import FileLines

EXPAND_TOP = 5  # the top hits get their tiny neighbours folded in
MERGE_POOL = 30  # fused hits that become ranges
MODES = ("fast", "quality", "auto")
RRF_K = DEFAULT_RANKING.rrf_k
FILTER_KEYS = ("languages", "chunk_kinds", "include_globs", "exclude_globs", "branch")

_cache = LruCache(512)


@dataclass(slots=True)
class SearchFilters:
    languages: list[str] | None = None
    chunk_kinds: list[str] | None = None
    include_globs: list[str] | None = None
    exclude_globs: list[str] | None = None
    branch: str | None = None

    @classmethod
    def from_dict(cls, data: dict | None) -> "SearchFilters":
        if not data:
            return cls()
        if not isinstance(data, dict):
            raise ConfigError("filters must be an object with keys: " + ", ".join(FILTER_KEYS))
        unknown = set(data) - set(FILTER_KEYS)
        if unknown:
            raise ConfigError(f"unknown filter key(s) {sorted(unknown)}; allowed: {', '.join(FILTER_KEYS)}")
        out = cls()
        for key in FILTER_KEYS:
            val = data.get(key)
            if val is None:
                continue
            if key == "branch":
                if not isinstance(val, str):
                    raise ConfigError("filters.branch must be a string")
            elif not (isinstance(val, list) and all(isinstance(x, str) for x in val)):
                raise ConfigError(f"filters.{key} must be a list of strings")
            else:  # languages by alias, globs checked: a value that can match nothing is an error
                val = clean_filter_value(key, val)
            setattr(out, key, val)
        return out


@dataclass(slots=True)
class SearchResponse:
    results: list[SearchResult]
    status: str  # healthy | uncertain | degraded
    message: str | None = None
    took_ms: float = 0.0
    generation: int = 0
    dense_coverage: float = 0.0
    mode: str = "fast"
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {"results": [r.to_dict() for r in self.results], "status": self.status,
               "took_ms": round(self.took_ms, 2), "index_generation": self.generation,
               "dense_coverage": round(self.dense_coverage, 4), "mode": self.mode}
        if self.message:
            out["message"] = self.message
        out.update(self.extra)
        return out


def check_query(query: str, top_k: int, mode: str) -> None:
    """The arguments every search checks (a project's and a library's)."""
    if not isinstance(query, str) or not query.strip():
        raise ConfigError("query must be a non-empty string")
    QUERY.check(query)
    TOP_K.check(top_k)
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}")


def file_filter(ws: Workspace, flt: SearchFilters) -> list[str] | None:
    """Globs become an exact list of indexed paths, so the store filters them itself (the list is
    kept per index state: ``IndexState.paths_matching``)."""
    if not flt.include_globs and not flt.exclude_globs:
        return None
    include, exclude = tuple(flt.include_globs or ()), tuple(flt.exclude_globs or ())

    def match(paths: list[str]) -> list[str]:
        if include:
            spec = pathspec.PathSpec.from_lines("gitignore", include)
            paths = [p for p in paths if spec.match_file(p)]
        if exclude:
            spec = pathspec.PathSpec.from_lines("gitignore", exclude)
            paths = [p for p in paths if not spec.match_file(p)]
        return paths
    return index_state(ws).paths_matching(ws, (include, exclude), match)


@dataclass(slots=True)
class _Ranked:
    """What the cache keeps: the ranked ranges and how they were made. Snippets and ``stale`` are
    not cached: they are read from disk on every call, so an edit shows at once."""

    ranges: list[Range]
    rerank_scores: dict[int, float]
    notes: list[str]
    status: str
    coverage: float
    mode: str
    cacheable: bool = True


def search(ws: Workspace, query: str, *, top_k: int = 12, mode: str = "auto", instruction: str | None = None,
           filters: dict | SearchFilters | None = None, ranking: RankingSettings | None = None) -> SearchResponse:
    """Answer a natural-language or identifier query over the workspace's index.

    ``ranking``: the fusion and prior settings (default: ``DEFAULT_RANKING``; benchmarks compare variants)."""
    t0 = time.perf_counter()
    check_query(query, top_k, mode)
    flt = filters if isinstance(filters, SearchFilters) else SearchFilters.from_dict(filters)
    flt = dataclasses.replace(flt, branch=_resolve_branch(ws, flt.branch))
    from ..indexing.indexer import check_identity

    check_identity(ws, adopt=False)
    ranking = ranking or DEFAULT_RANKING
    man = ws.manifest
    key = (ws.workspace_id, man.generation, ws.state_version, ranking, query, top_k, mode,
           instruction, json.dumps(dataclasses.asdict(flt), sort_keys=True))
    ranked = _cache.get(key)
    cached = ranked is not None
    files = FileLines(ws.root)
    if ranked is None:
        ranked = _rank(ws, query, top_k, mode, instruction, flt, files, ranking)
        if ranked.cacheable:
            _cache.put(key, ranked)

    results: list[SearchResult] = []
    live = man.live_ids([r.best.id for r in ranked.ranges])
    chunk_hashes = man.chunk_hashes([h.id for r in ranked.ranges for h in r.hits if "chunk_hash" not in h.payload])
    for r in ranked.ranges:
        best = r.best
        other = None if best.id in live else _branches_of(best)  # another branch's version of the file
        read_from = (flt.branch or (other[0] if other else None)) if other is not None else None
        stale = any(files.is_stale(h.payload["file_path"], int(h.payload["start_line"]), int(h.payload["end_line"]),
                                   h.payload.get("chunk_hash") or chunk_hashes.get(h.id, ""), branch=read_from)
                    for h in r.hits)
        # the range's closest chunk to the query: the similarity libraries are fused by (a literal-only
        # best hit has none of its own)
        dense_score = max((h.dense_score for h in r.hits if h.dense_score is not None), default=None)
        signals = {"dense_rank": best.dense_rank, "bm25_rank": best.bm25_rank, "dense_score": dense_score}
        signals.update({f"{name}_rank": rank for name, rank in best.extra_ranks.items()})
        if id(r) in ranked.rerank_scores:
            signals["rerank_score"] = round(ranked.rerank_scores[id(r)], 6)
        results.append(SearchResult(
            path=r.path, start_line=r.start, end_line=r.end,
            snippet=files.snippet(r.path, r.start, r.end, branch=read_from),
            score=r.score, stale=stale, symbol=best.payload.get("symbol"), language=best.payload.get("language"),
            chunk_kind=best.payload.get("chunk_kind"), signals=signals, branches=other,
        ))
    return SearchResponse(results=results, status=ranked.status, message="; ".join(ranked.notes) or None,
                          took_ms=(time.perf_counter() - t0) * 1000, generation=man.generation,
                          dense_coverage=ranked.coverage, mode=ranked.mode,
                          extra={"cached": True} if cached else {})


def _resolve_branch(ws: Workspace, requested: str | None) -> str | None:
    """The branch filter a search uses: the checked-out branch by default, none for "*"."""
    if requested == "*":
        return None
    if requested:
        return requested
    current = ws.branch
    if not current:
        return None  # outside git there is nothing to filter on
    if ws.manifest.has_branch(current):
        return current
    # just checked out, not scanned yet (the watcher's scan is seconds away): keep answering from
    # the branch indexed last rather than from nothing
    return ws.manifest.get_meta("last_branch") or current


def _branches_of(hit: StoreHit) -> list[str]:
    tag = hit.payload.get("branch")
    return list(tag) if isinstance(tag, list) else ([tag] if tag else [])


def _rank(ws: Workspace, query: str, top_k: int, mode: str, instruction: str | None, flt: SearchFilters,
          files: FileLines, ranking: RankingSettings) -> _Ranked:
    """Query the store, fuse its lists with the exact-match lists, apply the priors, then merge,
    rerank, diversify and expand (everything but disk reads)."""
    counts = index_state(ws).counts(ws)  # kept until the next write: COUNTs over every chunk
    coverage = counts["chunks_dense"] / counts["chunks"] if counts["chunks"] else 0.0
    status, notes, cacheable = "healthy", [], True
    bridged: list[str] = []
    if ranking.vocab_weight and counts["chunks"]:
        bridged, cacheable = query_expansion(ws, query)  # the previous generation's words: not cached
    dense_vec, down = query_vector(ws, counts, " ".join([query, *bridged]) if ranking.vocab_dense else query,
                                   instruction)
    if down:  # the embedder died: answer lexically, say so, retry next time
        status, cacheable = "degraded", False
        notes.append(down)
    paths = file_filter(ws, flt)
    store_filter = StoreFilter(
        workspace_id=ws.workspace_id, file_paths=paths, languages=flt.languages,
        chunk_kinds=flt.chunk_kinds, branch=flt.branch,
    )
    prefetch = max(100, top_k * 8)
    # the fused list is asked for the whole union of both prefetch lists: every candidate comes
    # back with its rank in each, and rank_fusion adds the exact-match lists to the same formula
    query_sparse = with_bridged_words(sparse.embed_query(query), bridged, ranking.vocab_weight)
    hq = HybridQuery(sparse=query_sparse, dense=dense_vec, filter=store_filter,
                     limit=2 * prefetch, prefetch_limit=prefetch,
                     rrf_k=ranking.rrf_k, weights=(ranking.dense_weight, ranking.sparse_weight))
    hits = ws.store.hybrid_query(hq) if counts["chunks"] else []
    intent = parse_query(query)
    lists: dict[str, tuple[list[str], float]] = {}
    live_tree = _exact_lists_apply(ws, flt)  # the extra lists read the live (last indexed) versions
    allowed = _allowed(flt, paths)
    exact = ExactLists()
    if hits and live_tree:
        exact = exact_lists(ws, with_named_definition(ws, query, intent), allowed, lambda path, kind: kind_prior(
            {"file_path": path, "chunk_kind": kind}, intent, flt.chunk_kinds, ranking))
        lists = {"literal": (exact.literal, ranking.literal_weight),
                 "identifier": (exact.identifier, ranking.identifier_weight)}
    hits = fuse(hits, lists, ranking, ws.manifest.chunk_payloads,  # dense counts for what it can see
                coverage=coverage if dense_vec is not None else 1.0, without_vector=ws.manifest.without_dense)
    hits = lead_with(apply_priors(hits, intent, flt.chunk_kinds, ranking), exact.definitions)
    # only the head is merged into ranges: a long tail of weak hits would stretch the top ranges
    pool = max(MERGE_POOL, top_k * 3)
    ranges = merge_hits(hits[:pool])
    join_following(ranges, hits[pool:], top_k, files.lines, ws.manifest.live_ids([r.best.id for r in ranges[:top_k]]))
    if hits and live_tree and ranking.graph_weight:
        ranges = _with_graph_neighbours(ws, ranges, hits, intent, flt, allowed, ranking)
    ranges = lift_file_mates(ranges, ranking.file_weight, ranking.rrf_k)
    effective = mode if mode != "auto" else ("quality" if ws.config.reranker_url else "fast")
    rerank_scores: dict[int, float] = {}
    if effective == "quality":
        ranges, rerank_scores, note = _rerank(ws, query, instruction, ranges, files)
        if note:
            notes.append(note)
            cacheable = cacheable and "did not answer" not in note  # a fallback is worth retrying
    ranges = cap_per_file(ranges, ranking.per_file_cap, top_k)
    live = ws.manifest.live_ids([r.best.id for r in ranges[:EXPAND_TOP]])
    for r in ranges[:EXPAND_TOP]:
        if r.best.id in live:  # the manifest's neighbours are the checked-out version's
            expand_tiny(ws, r)
    ranges = drop_overlaps(ranges)[:top_k]

    if flt.branch and not hits and flt.branch != ws.branch and flt.branch not in ws.manifest.branches():
        known = ", ".join(ws.manifest.branches()) or "none"
        notes.append(f"branch {flt.branch!r} has not been indexed (Probe indexes a branch while it is checked out; "
                     f"indexed: {known})")
    status, first = index_health(counts, coverage, status)
    if first:
        notes.insert(0, first)
    return _Ranked(ranges, rerank_scores, notes, status, coverage, effective, cacheable)


def _with_graph_neighbours(ws: Workspace, ranges: list[Range], hits: list[StoreHit], intent: QueryIntent,
                           flt: SearchFilters, allowed, ranking: RankingSettings) -> list[Range]:
    """The ranges with the symbol-graph neighbours of the top hits joined (graph_evidence.py);
    ``allowed``: the search's filters as a predicate (``_allowed``)."""
    wanted = set(flt.chunk_kinds or []) | ({"test"} if intent.asks_tests else set())

    @functools.cache
    def neighbour_allowed(path: str) -> bool:  # a few dozen candidates: rows by key, not the whole table
        meta = ws.manifest.indexed_file(path)
        return (meta is not None and allowed(path, meta[1], meta[2])
                and (meta[2] != "test" or "test" in wanted))

    ids = graph_list(ws, hits, neighbour_allowed)
    by_id = {h.id: h for h in hits}
    fetched = ws.manifest.chunk_payloads([i for i in ids if i not in by_id])
    neighbours = [by_id.get(i) or StoreHit(id=i, score=0.0, payload=fetched[i])
                  for i in ids if i in by_id or i in fetched]
    return join_neighbours(ranges, neighbours, ranking.graph_weight, ranking.rrf_k,
                           lambda h: kind_prior(h.payload, intent, flt.chunk_kinds, ranking),
                           ranking.graph_head_weight if intent.asks_mechanism else 0.0)


def _exact_lists_apply(ws: Workspace, flt: SearchFilters) -> bool:
    """The exact-match and graph lists map lines to the manifest's live chunks, which are the
    versions of the branch indexed last (none outside git): they serve a search of that branch
    only. The checked-out branch is not enough: just after a checkout, before its scan, the live
    chunks are still the previous branch's, and they would join the answer beside the checked-out
    versions the store returns."""
    return flt.branch is None or flt.branch == (ws.manifest.get_meta("last_branch") or "")


def _allowed(flt: SearchFilters, paths: list[str] | None):
    """The search's filters as a predicate over indexed files (the store applies the same ones):
    ``allowed(path, language, chunk_kind)``."""
    path_set = set(paths) if paths is not None else None

    def allowed(path: str, language: str | None, chunk_kind: str | None) -> bool:
        return ((path_set is None or path in path_set)
                and (not flt.languages or language in flt.languages)
                and (not flt.chunk_kinds or chunk_kind in flt.chunk_kinds))
    return allowed


def _rerank(ws: Workspace, query: str, instruction: str | None, ranges: list[Range],
            files: FileLines) -> tuple[list[Range], dict[int, float], str | None]:
    """Quality mode: rerank the head of the fused list; on timeout keep RRF order (never fail)."""
    if not ws.config.reranker_url:
        return ranges, {}, "no reranker configured: quality mode used RRF order"
    if not ranges:
        return ranges, {}, None
    from ..rerank import candidates_to_rerank, client_for, order_by_scores

    n = candidates_to_rerank(len(ranges))
    head = ranges[:n]
    client = client_for(ws.config.reranker_url, environment.get("RERANKER_API_KEY"))
    scores = client.rerank(query, [files.snippet(r.path, r.start, r.end) for r in head], instruction)
    if scores is None:
        return ranges, {}, "the reranker did not answer in time: RRF order kept"
    reordered = [head[i] for i in order_by_scores(scores)] + ranges[n:]
    return reordered, {id(head[i]): float(sc) for i, sc in enumerate(scores)}, None


__all__ = ["SearchFilters", "SearchResponse", "search", "ProbeError"]
