"""Line → innermost chunk on a real index: the same answer as a scan of every chunk, at a cost
that grows with lines + chunks, not lines × chunks."""
from __future__ import annotations

import dataclasses

import pytest

from probe_core import Workspace, index_workspace
from probe_core.retrieval.chunk_locator import ChunkLocator
from probe_core.storage.manifest import ChunkRow

CLASSES = 30  # each with 4 methods: chunks nest (a class and its methods)


def _generated() -> str:
    parts = ['"""Generated: classes with methods, and functions between them."""\n']
    for c in range(CLASSES):
        parts.append(f"\n\nclass Widget{c}:\n    \"\"\"Widget number {c}.\"\"\"\n")
        for m in range(4):
            parts.append(f"\n    def method_{m}(self, foo_bar_baz):\n        total = foo_bar_baz + {m}\n"
                         f"        total *= {c + 1}\n        return total\n")
        parts.append(f"\n\ndef helper_{c}(foo_bar_baz):\n    value = foo_bar_baz * {c}\n    return value\n")
    return "".join(parts)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("gen")
    (root / "gen.py").write_text(_generated())
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)
    yield ws
    ws.close()


def _innermost(rows: list[ChunkRow], line: int) -> ChunkRow | None:
    """The definition: the smallest chunk containing the line, the first of equals."""
    inside = [r for r in rows if r.start_line <= line <= r.end_line]
    return min(inside, key=lambda r: r.end_line - r.start_line) if inside else None


def test_the_innermost_chunk_of_every_line(generated):
    rows = generated.manifest.chunks_for("gen.py")
    assert len(rows) > CLASSES * 4 and any(r.symbol_kind == "class" for r in rows)
    total = len(_generated().splitlines())
    locator = ChunkLocator(generated)
    for line in range(0, total + 3):
        assert locator.at("gen.py", line) == _innermost(rows, line), line
    assert locator.at("missing.py", 3) is None


def test_overlapping_and_equal_chunks_resolve_like_the_definition():
    from probe_core.retrieval.chunk_locator import _FileChunks

    spans = [(1, 50), (1, 50), (3, 9), (5, 12), (5, 12), (10, 10), (40, 60), (70, 80)]
    rows = [ChunkRow(f"p{i}", "f", i, s, e, "", None, None, None, False) for i, (s, e) in enumerate(spans)]
    chunks = _FileChunks(rows)
    for line in range(0, 85):
        assert chunks.at(line) is _innermost(rows, line), line


class _CountingRow(ChunkRow):
    """A chunk row that counts how often its lines are read."""

    __slots__ = ()
    reads = 0

    def __getattribute__(self, name):
        if name in ("start_line", "end_line"):
            type(self).reads += 1
        return super().__getattribute__(name)


def test_mapping_every_line_reads_each_chunk_a_few_times_not_once_per_line(generated, monkeypatch):
    rows = [_CountingRow(**{f.name: getattr(r, f.name) for f in dataclasses.fields(ChunkRow)})
            for r in generated.manifest.chunks_for("gen.py")]
    monkeypatch.setattr(generated.manifest, "chunks_for", lambda path: list(rows))
    lines = range(1, len(_generated().splitlines()) + 1)
    _CountingRow.reads = 0
    locator = ChunkLocator(generated)
    found = [locator.at("gen.py", line) for line in lines]
    assert sum(r is not None for r in found) > len(lines) // 2
    # a scan of every chunk per line reads len(lines) × len(rows) (238,354 here, against 181 chunks + 871 lines)
    assert _CountingRow.reads <= 20 * (len(rows) + len(lines))


def test_one_line_lookups_give_the_same_chunks(generated):
    """``few_lines`` (the graph neighbours' mode): one indexed lookup a line, same answers."""
    rows = generated.manifest.chunks_for("gen.py")
    locator = ChunkLocator(generated, few_lines=True)
    for line in range(0, len(_generated().splitlines()) + 3):
        assert locator.at("gen.py", line) == _innermost(rows, line), line
    assert locator.at("missing.py", 3) is None


def test_one_line_lookups_resolve_equal_chunks_like_the_map(tmp_path):
    from probe_core.retrieval.chunk_locator import _FileChunks
    from probe_core.storage.manifest import Manifest

    spans = [(5, 12), (1, 50), (1, 50), (3, 9), (5, 12), (10, 10), (40, 60), (70, 80)]
    man = Manifest(tmp_path / "manifest.sqlite")
    with man.transaction() as db:
        db.execute("INSERT INTO paths(id, path) VALUES(1, 'f')")
        db.executemany("INSERT INTO chunks(point_id, file, chunk_idx, start_line, end_line, chunk_hash) VALUES(?,1,?,?,?,'')",
                       [(f"p{i}", i, s, e) for i, (s, e) in enumerate(spans)])
    chunks = _FileChunks(man.chunks_for("f"))
    for line in range(0, 85):
        assert man.chunk_at("f", line) == chunks.at(line), line
    man.close()
