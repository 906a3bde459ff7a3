"""Helpers for the chunking tests: the invariants every chunk list must hold, lookups."""
from __future__ import annotations

from probe_core.chunking.segments import MAX_CHARS
from probe_core.records import Chunk


def check_invariants(text: str, chunks: list[Chunk]) -> None:
    """Line numbers match text.splitlines(), text is exactly those lines, no gaps, bounded size."""
    lines = text.splitlines()
    covered = bytearray(len(lines))
    previous_start = 0
    ranges = [(c.start_line, c.end_line) for c in chunks]
    assert len(set(ranges)) == len(ranges), "a line range identifies a chunk: no duplicates"
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines), chunk
        assert chunk.start_line >= previous_start, "chunks come in line order"
        previous_start = chunk.start_line
        joined = "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        if chunk.text != joined:
            # only a single over-long line is truncated
            assert chunk.start_line == chunk.end_line and chunk.is_fragment
            assert len(chunk.text) == MAX_CHARS and joined.startswith(chunk.text)
        assert 0 < len(chunk.text) <= MAX_CHARS
        assert chunk.text.strip()
        covered[chunk.start_line - 1 : chunk.end_line] = b"\x01" * (chunk.end_line - chunk.start_line + 1)
    missing = [i + 1 for i, line in enumerate(lines) if line.strip() and not covered[i]]
    assert not missing, f"non-blank lines in no chunk: {missing[:20]}"


def find(
    chunks: list[Chunk],
    symbol: str | None,
    kind: str | None = None,
    parent: object = ...,
    fragment: bool = False,
) -> Chunk:
    """The one chunk with this symbol (and kind, parent when given); whole units unless fragment."""
    hits = [
        c for c in chunks
        if c.symbol == symbol and (kind is None or c.symbol_kind == kind)
        and (parent is ... or c.parent_symbol == parent) and c.is_fragment == fragment
    ]
    seen = [(c.symbol, c.symbol_kind, c.parent_symbol) for c in chunks]
    assert len(hits) == 1, f"{symbol!r}/{kind}: {seen}"
    return hits[0]


def span(chunk: Chunk) -> tuple[int, int]:
    return chunk.start_line, chunk.end_line
