"""Evidence from the symbol graph: the code connected to the strongest hits.

A concept question ("how does a change reach the reactions that depend on it") is rarely answered
by one function: the answer is a small cluster of code that calls each other or extends one
another, and the first ranks usually hold one member of it. The callers, callees, subtypes and
supertypes of the top hits form one more ranked list (a neighbour of several strong hits first).
It works on the answer's ranges, after merging: a neighbour inside a range lifts that range, one
outside every range joins as a range of its own, and the first ranges, which hold the hits the
neighbours hang from, keep their places — unless the query asks how the code works, in words only
(``QueryIntent.asks_mechanism``): then a head range the others call or are called by gains a share
of its term and the head is re-sorted, the centre of the cluster first (for a task, "decode the
escapes", the head's order measured better as it was). Neighbours never merge into other ranges (measured: fused
as hits, they stretched and reshuffled the ranges around them).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

from ..storage.protocol import StoreHit
from ..workspace import Workspace
from .chunk_locator import ChunkLocator
from .rank_fusion import rrf_term
from .ranges import Range

HUBS = 5  # the top hits whose neighbours gain evidence
MAX_FANOUT = 12  # a name called from more places than this is a utility, not part of a concept
MAX_DEFINITIONS = 3  # a called name defined more often than this is ambiguous: left out
# The distinct names of one hub whose definitions are looked up, the first in line order: a bound
# on a search's graph work whatever the repository (measured: at most 27 in a dev-set hub, 23 in
# the monorepo's; a chunk is bounded, but a generated one can call hundreds).
MAX_CALLED = 48
LIST_LIMIT = 20
_DEFINITION_KINDS = frozenset({"function", "method", "class", "struct", "interface", "trait", "enum", "type",
                               "impl", "macro", "constructor"})


def _neighbour_lines(graph, path: str, start: int, end: int, name: str | None,
                     defines: bool, definitions: Callable[[str], tuple[tuple[str, int], ...]]) -> set[tuple[str, int]]:
    """(path, line) of the definitions this range calls, the call sites of what it defines, and
    the types its definition extends or is extended by. ``definitions(name)``: the (path, line) of
    a name's definitions when there are 1 to ``MAX_DEFINITIONS`` of them (asked once per name)."""
    out: set[tuple[str, int]] = set()
    called = dict.fromkeys(ref.name for ref in graph.refs_in(path, start, end, ("call",)))  # by line
    for callee in list(called)[:MAX_CALLED]:
        out.update(definitions(callee))
    if name and defines:
        # a name called from more files than the fan-out has more calls: counted, not read (a common
        # name's calls sit in thousands of files of a monorepo)
        if graph.files_using(name, ("call",), limit=MAX_FANOUT + 1) <= MAX_FANOUT:
            callers = graph.refs_named(name, ("call",), limit=MAX_FANOUT + 1)
            if len(callers) <= MAX_FANOUT:
                out.update((r.path, r.line) for r in callers)
        for edge in graph.edges_to(name, limit=MAX_FANOUT):  # subtypes / implementors
            out.add((edge.path, edge.line))
        for edge in graph.edges_from(name):  # what it extends
            out.update(definitions(edge.parent))
    return {(p, ln) for p, ln in out if not (p == path and start <= ln <= end)}


def graph_list(ws: Workspace, hits: list[StoreHit], allowed: Callable[[str], bool]) -> list[str]:
    """Point ids of the chunks connected to the top hits, best connected first."""
    from ..intel.build import graph_store

    graph = graph_store(ws)
    chunk_at = functools.cache(ChunkLocator(ws, few_lines=True).at)  # hubs share neighbours: one lookup each

    @functools.cache
    def definitions(name: str) -> tuple[tuple[str, int], ...]:
        """A name's definitions, read once per search: a hub calls a name many times, and the top
        hits of one question call the same helpers (a monorepo's hubs made ~30 reads a search)."""
        defs = graph.symbols_named(name, limit=MAX_DEFINITIONS + 1)  # enough to tell "too many"
        return tuple((d.path, d.line) for d in defs) if len(defs) <= MAX_DEFINITIONS else ()

    scores: dict[str, float] = {}
    where: dict[str, tuple[str, int]] = {}  # ties go to the earlier place in the tree, not the id (rank_fusion.tie_order)
    hub_ids = {h.id for h in hits[:HUBS]}
    for rank, hit in enumerate(hits[:HUBS], 1):
        p = hit.payload
        symbol = p.get("symbol")
        name = symbol.split(".")[-1] if symbol else None
        defines = p.get("symbol_kind") in _DEFINITION_KINDS
        for path, line in _neighbour_lines(graph, p["file_path"], int(p["start_line"]), int(p["end_line"]),
                                           name, defines, definitions):
            if not allowed(path):
                continue
            row = chunk_at(path, line)
            if row is not None and row.point_id not in hub_ids:
                scores[row.point_id] = scores.get(row.point_id, 0.0) + 1.0 / rank
                where[row.point_id] = (path, row.start_line)
    return sorted(scores, key=lambda pid: (-scores[pid], where[pid], pid))[:LIST_LIMIT]


def join_neighbours(ranges: list[Range], neighbours: list[StoreHit], weight: float, k: int,
                    prior: Callable[[StoreHit], float], head_weight: float = 0.0) -> list[Range]:
    """``ranges`` with the graph list's evidence: each neighbour (best connected first) lifts the
    range holding it or becomes a range; the first ``HUBS`` ranges stay where they are, unless
    ``head_weight`` (a question about how the code works): then a head range holding a neighbour
    gains ``head_weight`` times its term too, and the head is re-sorted (the range the others
    call or are called by, the centre of the cluster, comes first)."""
    head, rest = ranges[:HUBS], ranges[HUBS:]
    for rank, hit in enumerate(neighbours, 1):
        hit.extra_ranks["graph"] = rank
        bonus = rrf_term(rank, weight, k) * prior(hit)
        p = hit.payload
        start, end, version = int(p["start_line"]), int(p["end_line"]), p.get("file_hash", "")
        home = next((r for r in ranges if r.path == p["file_path"] and r.version == version
                     and r.start <= end and start <= r.end), None)
        if home is None:
            rest.append(Range(p["file_path"], start, end, hit.score + bonus, [hit], version))
        elif home not in head:
            home.score += bonus
        else:
            home.score += bonus * head_weight
    rest.sort(key=lambda r: -r.score)
    if head_weight:
        head.sort(key=lambda r: -r.score)
    return head + rest
