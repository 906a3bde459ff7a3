"""From ranked chunk hits to the ranges an answer shows: nearby hits in one file fold into one
range, a range runs on into the chunk right after it when the ranking found that one too, tiny hits
absorb their neighbours, and no file takes over the answer."""
from __future__ import annotations

from dataclasses import dataclass

from ..storage.protocol import StoreHit
from ..workspace import Workspace

MERGE_GAP = 20  # hits in one file closer than this many lines become one range
MAX_MERGED_SPAN = 160  # ...as long as the merged range stays readable
TINY_CHUNK = 6


@dataclass(slots=True)
class Range:
    """A span of one file version in the answer, with the hits it holds (best first)."""

    path: str
    start: int
    end: int
    score: float
    hits: list[StoreHit]
    version: str = ""  # the file_hash: two branches' versions of a file never merge

    @property
    def best(self) -> StoreHit:
        return self.hits[0]

    def overlaps(self, other: "Range") -> bool:
        return (self.path == other.path and self.version == other.version
                and self.start <= other.end and other.start <= self.end)


def merge_hits(hits: list[StoreHit]) -> list[Range]:
    """Fold hits that sit close together in one file into one range, keeping fused order."""
    ranges: list[Range] = []
    for h in hits:
        p = h.payload
        path, start, end = p["file_path"], int(p["start_line"]), int(p["end_line"])
        version = p.get("file_hash", "")
        for r in ranges:
            if r.path != path or r.version != version:
                continue
            if start <= r.end + MERGE_GAP and end >= r.start - MERGE_GAP:
                new_start, new_end = min(r.start, start), max(r.end, end)
                if new_end - new_start + 1 <= MAX_MERGED_SPAN:
                    r.start, r.end = new_start, new_end
                    r.hits.append(h)
                    break
            if start >= r.start and end <= r.end:  # contained (e.g. an overlapping fragment)
                r.hits.append(h)
                break
        else:
            ranges.append(Range(path, start, end, h.score, [h], version))
    return ranges


def join_following(ranges: list[Range], later: list[StoreHit], top_k: int, lines_of, live: set[str]) -> None:
    """The first ``top_k`` ranges run on into the chunk that follows each (nothing but blank lines
    between) when that chunk is among the ``later`` candidates, the fused hits too far down to be
    merged (``merge_hits`` folds only the head). An answer's range then holds the neighbouring
    definition the ranking also found (a method and the helper after it, a struct and its reset
    function) instead of leaving it to rank 20; the range's start, and so its snippet, stay where
    the best hit put them. ``lines_of(path)``: the file's lines (``FileLines.lines``), the working
    tree's, so only a range of the checked-out version of its file runs on: ``live``, the point ids
    of those versions (another branch's version has other lines, and is left as it is)."""
    by_file: dict[tuple[str, str], list[Range]] = {}
    for r in ranges[:top_k]:
        if r.best.id not in live:
            continue
        by_file.setdefault((r.path, r.version), []).append(r)
    for h in later:
        p = h.payload
        start, end = int(p["start_line"]), int(p["end_line"])
        for r in by_file.get((p["file_path"], p.get("file_hash", "")), ()):
            if start > r.end and end - r.start + 1 <= MAX_MERGED_SPAN and _blank_between(lines_of(r.path), r.end, start):
                r.end = end
                r.hits.append(h)
                break


def _blank_between(lines: list[str] | None, end: int, start: int) -> bool:
    """Lines ``end + 1 .. start - 1`` (1-based) are all blank (none at all counts)."""
    return lines is not None and start - 1 <= len(lines) and not any(x.strip() for x in lines[end:start - 1])


FILE_HEAD = 5  # the ranges whose files lend evidence to the ranges behind them


def lift_file_mates(ranges: list[Range], weight: float, k: int) -> list[Range]:
    """The ranges behind the first ``FILE_HEAD`` with evidence from the file they share with one of
    those: each gains ``weight / (k + p - 1)`` for the best place ``p`` a range of its file (same
    version) holds in the head. The head keeps its places; the rest is re-sorted."""
    if not weight:
        return ranges
    head, rest = ranges[:FILE_HEAD], ranges[FILE_HEAD:]
    best: dict[tuple[str, str], int] = {}
    for pos, r in enumerate(head, 1):
        best.setdefault((r.path, r.version), pos)
    for r in rest:
        pos = best.get((r.path, r.version))
        if pos is not None:
            r.score += weight / (k + pos - 1)
    return head + sorted(rest, key=lambda r: -r.score)


def expand_tiny(ws: Workspace, r: Range) -> None:
    """A tiny hit (a one-line constant, a stub) is shown with the chunk around it."""
    if r.end - r.start + 1 >= TINY_CHUNK:
        return
    rows = ws.manifest.chunks_for(r.path)
    for row in rows:
        if row.end_line == r.start - 1 or row.start_line == r.end + 1:
            if row.end_line - row.start_line < 40:
                r.start, r.end = min(r.start, row.start_line), max(r.end, row.end_line)


def drop_overlaps(ranges: list[Range]) -> list[Range]:
    """An answer never shows the same lines twice: of two overlapping ranges (after merging or
    expansion), the worse one joins the better one when the join stays readable (within
    ``MAX_MERGED_SPAN`` lines, or the better one's own length), else it is clipped to the lines
    the better one does not show. A join grows a range, which can reach a third: each change is
    checked again until no two ranges overlap. Ranked order is kept."""
    kept: list[Range] = []
    for r in ranges:
        kept.append(r)
        changed: Range | None = r
        while changed is not None:
            changed = _settle(kept, changed)
    return kept


def _settle(kept: list[Range], changed: Range) -> Range | None:
    """Resolve one overlap of ``changed`` with another kept range (every other pair is apart).
    Returns the range that may still overlap something (None: ``changed`` overlaps nothing now)."""
    other = next((k for k in kept if k is not changed and k.overlaps(changed)), None)
    if other is None:
        return None
    better, worse = (other, changed) if kept.index(other) < kept.index(changed) else (changed, other)
    start, end = min(better.start, worse.start), max(better.end, worse.end)
    if end - start + 1 <= max(MAX_MERGED_SPAN, better.end - better.start + 1):
        better.start, better.end = start, end
        better.hits.extend(worse.hits)
        kept.remove(worse)
        return better
    before = (worse.start, better.start - 1) if worse.start < better.start else None
    after = (better.end + 1, worse.end) if worse.end > better.end else None
    # the worse range reaches past the better one on one side (on both it would contain it, and
    # the longer side is kept); it cannot lie inside it, since that join always fits
    worse.start, worse.end = max((p for p in (before, after) if p), key=lambda p: p[1] - p[0])
    return changed


def cap_per_file(ranges: list[Range], cap: int, top_k: int) -> list[Range]:
    """At most ``cap`` ranges of one file in the first ``top_k`` (the rest move behind them)."""
    if cap <= 0:
        return ranges
    head, tail, seen = [], [], {}
    for r in ranges:
        n = seen.get(r.path, 0)
        if n < cap and len(head) < top_k:
            head.append(r)
            seen[r.path] = n + 1
        else:
            tail.append(r)
    return head + tail
