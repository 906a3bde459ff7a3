"""From line ranges to `Chunk`s: trimming, folding stray closers, windows and size caps.

Every chunker (syntax tree, Markdown, config, plain lines) first produces `Segment`s, i.e.
line ranges with a symbol, and this module turns them into bounded `Chunk`s the same way.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate

from probe_core.records import Chunk, ChunkKind

MAX_LINES = 150  # a unit longer than this is split into windows
OVERLAP = 30  # lines shared by consecutive windows, so no statement loses its context
# A chunk's text is split by lines above this. A single line longer than this (minified code,
# embedded data) becomes one chunk holding only its first MAX_CHARS characters: pieces of it
# would share one line range, and ranges identify points in the store; such blobs only add
# noise to search anyway.
MAX_CHARS = 8000

# Lines that only close (or open) a block: a chunk of just "}" or "end" is useless to search,
# so such lines are folded into the neighbouring chunk instead of standing alone.
_TRIVIAL_LINE = re.compile(
    r"\s*(?:[{}()\[\];,]+|end|#\s*endif\b.*|#\s*else\b.*)\s*[;,]?\s*(?://.*|/\*.*|#.*)?"
)


@dataclass(slots=True)
class Segment:
    """A line range (0-based, inclusive) with what it holds, before size limits apply."""

    start: int
    end: int
    symbol: str | None = None
    symbol_kind: str | None = None
    parent_symbol: str | None = None
    is_fragment: bool = False
    trivial: bool = False  # only block closers: folded into a neighbour by fold_trivial()


class SourceLines:
    """The file's lines exactly as `str.splitlines()` gives them, with cheap size queries."""

    __slots__ = ("lines", "_offsets", "_blank")

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        # _offsets[i] = characters before line i when joined with "\n" (plus one per line).
        self._offsets = [0, *accumulate(len(line) + 1 for line in self.lines)]
        self._blank: list[bool] | None = None

    def __len__(self) -> int:
        return len(self.lines)

    def is_blank(self, i: int) -> bool:
        if self._blank is None:
            self._blank = [not line.strip() for line in self.lines]
        return self._blank[i]

    def chars(self, start: int, end: int) -> int:
        """Length of the joined text of lines start..end."""
        return self._offsets[end + 1] - self._offsets[start] - 1

    def join(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start : end + 1])

    def long_line_chars(self) -> int:
        """Characters in lines longer than MAX_CHARS (minified code, embedded data)."""
        return sum(n for n in map(len, self.lines) if n > MAX_CHARS)

    def is_trivial(self, start: int, end: int) -> bool:
        """True when every non-blank line of start..end only opens or closes a block."""
        return all(
            self.is_blank(i) or _TRIVIAL_LINE.fullmatch(self.lines[i]) for i in range(start, end + 1)
        )

    def trim(self, start: int, end: int) -> tuple[int, int] | None:
        """The range without its leading and trailing blank lines; None if all blank."""
        while start <= end and self.is_blank(start):
            start += 1
        while end >= start and self.is_blank(end):
            end -= 1
        return (start, end) if start <= end else None


# Line-break characters that str.splitlines() honours but tree-sitter rows do not (\n only).
_EXTRA_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_EXTRA_BREAKS_BUT_CRLF = re.compile("\r(?!\n)|[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


class RowMap:
    """Maps tree-sitter rows (split on \\n) to `str.splitlines()` line indexes.

    They differ only when the text holds other line breaks (\\r alone, form feeds, U+2028...);
    in the usual case the map is the identity and costs nothing.
    """

    __slots__ = ("_first", "_last")

    def __init__(self, text: str, line_count: int) -> None:
        self._first: list[int] | None = None
        self._last = line_count - 1
        if _EXTRA_BREAKS_BUT_CRLF.search(text) is None:
            return
        rows = text.split("\n")
        first, line = [], 0
        for i, row in enumerate(rows):
            first.append(line)
            extra = len(_EXTRA_BREAKS.findall(row))
            if row.endswith("\r") and i < len(rows) - 1:
                extra -= 1  # "\r\n" is one break
            line += 1 + extra
        first.append(line)
        self._first = first

    def span(self, start_row: int, end_row: int) -> tuple[int, int]:
        """Line range covering rows start_row..end_row."""
        if self._first is None:
            return min(start_row, self._last), min(end_row, self._last)
        rows = len(self._first) - 1
        start = self._first[min(start_row, rows - 1)]
        end = self._first[min(end_row + 1, rows)] - 1
        return min(start, self._last), min(max(end, start), self._last)


def fold_trivial(segments: list[Segment]) -> list[Segment]:
    """Merge closer-only segments into the previous segment (or the next, at the start).

    Segments must be in line order and not overlap. A file made only of closers keeps them
    as one plain segment, so that no non-blank line goes uncovered.
    """
    kept: list[Segment] = []
    pending_start: int | None = None  # closers seen before any real segment
    for seg in segments:
        if seg.trivial:
            if kept:
                kept[-1].end = max(kept[-1].end, seg.end)
            elif pending_start is None:
                pending_start = seg.start
            continue
        if pending_start is not None:
            seg.start = min(seg.start, pending_start)
            pending_start = None
        kept.append(seg)
    if pending_start is not None:
        seg = segments[-1]
        kept.append(Segment(pending_start, seg.end, symbol_kind=seg.symbol_kind))
    return kept


def line_windows(
    start: int, end: int, size: int = MAX_LINES, overlap: int = OVERLAP
) -> list[tuple[int, int]]:
    """Split start..end into windows of at most `size` lines sharing `overlap` lines.

    The windows are balanced (equal length, give or take one) so the last one is never a
    sliver that repeats the previous window's tail.
    """
    length = end - start + 1
    if length <= size:
        return [(start, end)]
    step_room = size - overlap
    count = -(-(length - overlap) // step_room)  # ceil
    width = -(-(length + (count - 1) * overlap) // count)
    windows = []
    for i in range(count):
        s = start + i * (width - overlap)
        e = min(s + width - 1, end)
        windows.append((s, e))
        if e == end:
            break
    if windows[-1][1] != end:  # rounding safety: never drop the tail
        windows.append((max(start, end - width + 1), end))
    return windows


def _dense_windows(src: SourceLines, start: int, end: int) -> list[tuple[int, int]]:
    """Windows bounded by MAX_LINES and MAX_CHARS, for text with long lines.

    Greedy rather than balanced: window sizes vary with line lengths. Consecutive windows share
    up to OVERLAP lines (at most a quarter of a window); a line longer than MAX_CHARS is a
    window by itself, truncated later.
    """
    windows = []
    s = start
    while True:
        e = s
        while e < end and e + 1 - s < MAX_LINES and src.chars(s, e + 1) <= MAX_CHARS:
            e += 1
        windows.append((s, e))
        if e >= end:
            return windows
        overlap = min(OVERLAP, (e - s + 1) // 4)
        # share lines only if the next window can still reach past this one
        while overlap and src.chars(e + 1 - overlap, e + 1) > MAX_CHARS:
            overlap //= 2
        s = e + 1 - overlap


def to_chunks(
    segments: list[Segment], src: SourceLines, *, path: str, language: str, chunk_kind: ChunkKind
) -> list[Chunk]:
    """Turn segments into Chunks: trim blank edges, window long ones, cap their text size.

    Pieces of a segment that had to be split carry its symbol with `is_fragment=True`. No two
    chunks share a line range.
    """
    chunks: list[Chunk] = []

    def add(start: int, end: int, seg: Segment, fragment: bool, text: str | None = None) -> None:
        chunks.append(
            Chunk(
                path=path,
                start_line=start + 1,
                end_line=end + 1,
                text=src.join(start, end) if text is None else text,
                language=language,
                chunk_kind=chunk_kind,
                symbol=seg.symbol,
                symbol_kind=seg.symbol_kind,
                parent_symbol=seg.parent_symbol,
                is_fragment=fragment,
            )
        )

    for seg in segments:
        bounds = src.trim(seg.start, min(seg.end, len(src) - 1))
        if bounds is None:
            continue
        windows = line_windows(*bounds)
        if any(src.chars(s, e) > MAX_CHARS for s, e in windows):
            windows = _dense_windows(src, *bounds)
        split = len(windows) > 1
        last_end = -1
        for w_start, w_end in windows:
            trimmed = src.trim(w_start, w_end)
            if trimmed is None or trimmed[1] <= last_end:
                continue  # blank, or nothing the previous window did not already hold
            w_start, w_end = trimmed
            last_end = w_end
            line = src.lines[w_start]
            if w_start == w_end and len(line) > MAX_CHARS:
                add(w_start, w_end, seg, True, line[:MAX_CHARS])
            else:
                # windows of a plain text file are not pieces of any unit
                add(w_start, w_end, seg, seg.is_fragment or (split and seg.symbol_kind != "lines"))
    return chunks
