"""One search over the project and reference libraries: each source ranks its own results, then
the ranked lists are merged into one and cut to ``top_k``.

Merging by position (Reciprocal Rank Fusion) put every source's #1 above everything else, however
weak: a query answered word for word by a library document came back behind an unrelated project
file and an unrelated note. So the lists are merged by evidence that compares across sources: the
cosine similarity of each result's best chunk to the query (``signals.dense_score``), which is on
one scale when every source is embedded by the same model. Each source's own order (hybrid
ranking, test penalty, rerank) is kept: a result's merge key is the lowest similarity at or above
it in its list, so a source never contradicts itself, it only interleaves. When the similarities
are not comparable (a source embedded by another model, or without dense vectors yet), the lists
are fused by rank as before and the answer says so. Measured on a labelled set
(``tests/libraries/test_fusion_quality.py``, ``docs/libraries.md``).

Sources: the project (``collection: "project"``) and each selected library (``collection:
"libraries"``, one ranked list per library, since each library has its own index and its scores
are not comparable with another's). ``filters.collections`` (``["project"]``, ``["libraries"]`` or
both) picks them, ``include_libraries=True`` is the same as both, and ``filters.libraries``
narrows the libraries to those names. Every result says which collection (and library) it came
from. A library that fails or does not answer in time costs its results, not the search: the
answer says so and is ``degraded``.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from typing import Protocol

from ..errors import ConfigError, ProbeError
from ..limits import MAX_TOKENS
from ..records import SearchRequest
from ..retrieval.finish import fit_answer, mark_project
from .registry import LibraryError

RRF_K = 60
COLLECTIONS = ("project", "libraries")
LIBRARY_TIMEOUT_S = 15.0  # a library whose owner is busy (e.g. `probe library add` indexing) is left out
_STATUS_ORDER = {"healthy": 0, "uncertain": 1, "degraded": 2}


class SearchEngine(Protocol):
    def search(self, request: SearchRequest) -> dict: ...


class LibrarySource(Protocol):
    """Where library engines come from (``pool.LibraryPool``)."""

    def engines(self, names: list[str] | None = None) -> dict[str, SearchEngine]: ...


def select_sources(filters: dict | None, include_libraries: bool) -> tuple[bool, list[str] | None, bool, dict | None]:
    """Split the source selection off ``filters``.

    Returns ``(project, library_names, libraries, rest)``: whether to search the project, which
    libraries (None: all), whether to search libraries at all, and the remaining filters.
    """
    rest = dict(filters or {})
    collections = rest.pop("collections", None)
    names = rest.pop("libraries", None)
    if collections is None:
        selected = {"project", "libraries"} if include_libraries else {"project"}
    else:
        if not isinstance(collections, list) or not collections or not all(isinstance(c, str) for c in collections):
            raise ConfigError('filters.collections must be a non-empty list: "project" and/or "libraries"')
        unknown = [c for c in collections if c not in COLLECTIONS]
        if unknown:
            raise ConfigError(f"unknown collection(s) {unknown}; use \"project\" and/or \"libraries\"")
        selected = set(collections) | ({"libraries"} if include_libraries else set())
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError("filters.libraries must be a list of library names")
        if collections is not None and "libraries" not in selected:
            raise ConfigError('filters.libraries needs "libraries" in filters.collections')
        selected.add("libraries")
    return "project" in selected, names, "libraries" in selected, rest or None


def rrf_fuse(lists: list[list[dict]], *, k: int = RRF_K, top_k: int) -> list[dict]:
    """Fuse ranked lists by position: score = 1/(k + rank). Items are distinct across lists (each
    source has its own documents), so ties (the same rank in two lists) keep the order of ``lists``."""
    return _merged([(1.0 / (k + rank), rank, li, r) for li, results in enumerate(lists)
                    for rank, r in enumerate(results, 1)], top_k)


def evidence_fuse(lists: list[list[dict]], *, top_k: int) -> list[dict]:
    """Merge ranked lists by each result's query similarity (``signals.dense_score``), keeping every
    list's own order: a result's key is the lowest similarity at or above it in its list (a result
    without one inherits the key of the result above it). Ties keep rank, then list order."""
    scored: list[tuple[float, int, int, dict]] = []
    for li, results in enumerate(lists):
        sims = [(r.get("signals") or {}).get("dense_score") for r in results]
        key = max((s for s in sims if s is not None), default=-1.0)
        for rank, (r, sim) in enumerate(zip(results, sims), 1):
            key = key if sim is None else min(key, sim)
            scored.append((key, rank, li, r))
    return _merged(scored, top_k)


def _merged(scored: list[tuple[float, int, int, dict]], top_k: int) -> list[dict]:
    """The best ``top_k`` of ``(score, rank, list index, result)``, each result copied with its fused
    score and its place in its own source (``signals.source_rank``, ``source_score``)."""
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    out = []
    for score, rank, _li, r in scored[:top_k]:
        r = dict(r)
        r["signals"] = {**(r.get("signals") or {}), "source_rank": rank, "source_score": r.get("score")}
        r["score"] = round(score, 6)
        out.append(r)
    return out


def comparable(answers: list[dict]) -> str | None:
    """None when every answer's similarities share one scale; else why they do not."""
    models = {a.get("embedding_model_id") for a in answers}
    if len(models) > 1 or None in models:
        return "the sources are embedded by different models"
    if any(a.get("dense_coverage", 0) == 0 and a.get("results") for a in answers):
        return "a source has no semantic vectors yet"
    if any(a.get("results") and all((r.get("signals") or {}).get("dense_score") is None for r in a["results"])
           for a in answers):  # e.g. its embedder failed and it answered lexically
        return "a source answered without semantic similarities"
    return None


def search_sources(project: SearchEngine | None, libraries: LibrarySource | None, request: SearchRequest | str, *,
                   include_libraries: bool = False, **options) -> dict:
    """Search the selected sources and fuse them (see the module docstring). ``options``: the
    keyword form of the request (``SearchRequest.of``)."""
    request = SearchRequest.of(request, **options)
    top_k, filters, max_tokens = request.top_k, request.filters, request.max_tokens
    t0 = time.perf_counter()
    want_project, names, want_libraries, rest = select_sources(filters, include_libraries)
    if not want_libraries:
        if project is None:
            raise ConfigError("no project is open here; search the libraries with include_libraries")
        return mark_project(project.search(request.replace(filters=rest)))
    if max_tokens is not None:
        MAX_TOKENS.check(max_tokens)
    if libraries is None:
        raise LibraryError("reference libraries are not available in this process")
    engines = libraries.engines(names)  # raises LibraryError for unknown names
    if not want_project and not engines:
        raise LibraryError("no reference libraries are registered; add one with `probe library add PATH "
                           "--name NAME` or the store tool")

    each = request.replace(filters=rest, max_tokens=None)  # the budget applies to the fused answer
    answers, notes, statuses, errors = _ask_sources(project if want_project else None, engines, each)
    if not answers and errors:
        raise errors[0] if isinstance(errors[0], ProbeError) else ProbeError(str(errors[0]))

    lists = [a["results"] for _, _, a in answers]
    why_not = comparable([a for _, _, a in answers])
    if why_not is None:
        fused = evidence_fuse(lists, top_k=top_k)
    else:  # similarities on different scales would mislead: fall back to positions, and say so
        fused = rrf_fuse(lists, top_k=top_k)
        notes.append(f"results merged by rank, not by similarity: {why_not}")
    project_answer = next((a for c, _, a in answers if c == "project"), None)
    out = {
        "results": fused,
        "status": max(statuses, key=_STATUS_ORDER.get) if statuses else "healthy",
        "took_ms": round((time.perf_counter() - t0) * 1000, 2),
        "index_generation": (project_answer or {}).get("index_generation", 0),
        "dense_coverage": min((a.get("dense_coverage", 1.0) for _, _, a in answers), default=0.0),
        "mode": (project_answer or (answers[0][2] if answers else {})).get("mode", "fast"),
        "indexing_in_progress": any(a.get("indexing_in_progress") for _, _, a in answers),
        "sources": [{"collection": c, "library_name": n, "status": a.get("status"), "results": len(a["results"])}
                    for c, n, a in answers],
    }
    trimmed = fit_answer(out, max_tokens)
    if trimmed:
        notes.append(trimmed)
    if notes:
        out["message"] = "; ".join(notes)
    return out


def _ask_sources(project: SearchEngine | None, engines: dict[str, SearchEngine], each: SearchRequest,
                 ) -> tuple[list[tuple[str, str | None, dict]], list[str], list[str], list[Exception]]:
    """Ask every source at once: the project is always waited for (its errors are the search's),
    libraries up to ``LIBRARY_TIMEOUT_S`` (a library's failure costs its results and is noted).
    Returns ``(answers as (collection, library name, answer), notes, statuses, errors)``."""
    sources: list[tuple[str, str | None, object]] = []
    answers, notes, statuses, errors = [], [], [], []
    pool = ThreadPoolExecutor(max_workers=max(1, len(engines) + 1), thread_name_prefix="probe-fuse")
    try:
        if project is not None:
            sources.append(("project", None, pool.submit(project.search, each)))
        for name, engine in sorted(engines.items()):
            sources.append(("libraries", name, pool.submit(engine.search, each)))
        deadline = time.monotonic() + LIBRARY_TIMEOUT_S
        for collection, name, fut in sources:
            label = "project" if collection == "project" else f"library {name}"
            try:
                ans = fut.result() if collection == "project" else fut.result(max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                errors.append(LibraryError(f"{label} did not answer within {LIBRARY_TIMEOUT_S:.0f} s"))
                notes.append(f"{label} did not answer in time (its index may be busy in another process)")
                statuses.append("degraded")
                continue
            except ProbeError as exc:
                if collection == "project":
                    raise
                errors.append(exc)
                notes.append(f"{label}: {exc}")
                statuses.append("degraded")
                continue
            for r in ans["results"]:
                r.setdefault("collection", collection)
                r.setdefault("library_name", name)
            answers.append((collection, name, ans))
            statuses.append(ans.get("status", "healthy"))
            if ans.get("message"):
                msg = ans["message"]
                notes.append(msg if collection == "libraries" and msg.startswith("library ") else f"{label}: {msg}")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return answers, notes, statuses, errors
