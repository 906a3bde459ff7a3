"""A file's graph rows made ready to write in the indexer's workers (``intel/rows.py``) pack to the
same bytes and posting entries as the writer's own packing of the uses (``packing.pack_uses``),
whatever ids the graph gives the names: on every fixture language, Probe's own graph code, and a
file wide enough for 4-byte names and lines."""
from __future__ import annotations

import random
from pathlib import Path

import probe_core
from probe_core.intel.extract import extract_file
from probe_core.intel.model import FileGraph, Ref
from probe_core.intel.packing import REF_KINDS, pack_uses
from probe_core.intel.rows import file_rows, pack
from probe_core.scan import read_text, scan_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "intel"


def _ids(graphs: list[FileGraph], seed: int) -> dict[str, int]:
    """Ids in an order unrelated to the names' (as a graph built over many files gives them)."""
    names = sorted({x for g in graphs for r in g.refs for x in (r.name, r.qualifier, r.enclosing) if x})
    ids = list(range(1, len(names) + 1))
    random.Random(seed).shuffle(ids)
    return dict(zip(names, ids))


def _same(graphs: list[FileGraph], seed: int) -> int:
    ids = _ids(graphs, seed)
    with_uses = 0
    for g in graphs:
        rows = file_rows(g)
        assert pack(rows, ids) == pack_uses(g.refs, ids), g.path
        assert rows.symbols == [(s.path, s.name, s.qualname, s.kind, s.line, s.end_line, s.signature, s.doc,
                                 s.parent, s.language) for s in g.symbols]
        assert rows.edges == [(e.path, e.line, e.child, e.parent, e.kind, e.parent_qualifier) for e in g.edges]
        assert rows.uses == len(g.refs)
        with_uses += bool(g.refs)
    return with_uses


def test_rows_made_ahead_pack_as_the_writer_did() -> None:
    graphs = []
    for root in (FIXTURES, Path(probe_core.__file__).parent / "intel"):
        graphs += [extract_file(f.path, read_text(root, f.path))
                   for f in scan_files(root, max_file_bytes=1_000_000).files]
    assert len({g.language for g in graphs if g.refs}) >= 8  # every language with uses is covered
    for seed in (1, 2):
        assert _same(graphs, seed) > 20


def test_wide_names_and_lines_pack_the_same() -> None:
    rng = random.Random(3)
    refs = [Ref("big.py", rng.randrange(1, 90_000), f"n{rng.randrange(200_000)}",
                rng.choice([None, f"q{rng.randrange(500)}"]), rng.choice(REF_KINDS),
                rng.choice([None, "Outer.f"]), rng.choice([None, 70_000, 12])) for _ in range(140_000)]
    wide = FileGraph("big.py", "python", 90_000, refs=refs)
    narrow = FileGraph("small.py", "python", 3, refs=refs[:50])
    empty = FileGraph("empty.py", "python", 0)
    assert _same([wide, narrow, empty], 4) == 2
    assert file_rows(wide).name_col.typecode == "I"
    assert file_rows(narrow).name_col.typecode == "H"
