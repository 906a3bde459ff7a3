"""A file's graph rows made ready to write where the file was graphed.

The one process that writes the index turned every use of a name (2.9M on a 2.9M-line monorepo)
into a tuple, looked its names up and packed them (``packing.pack_uses``): over half of its CPU in
a new index. ``file_rows`` does all of that but the name ids in the indexer's worker processes
(``indexing/prepare_pool.py``): the uses become columns of positions in the file's own sorted
list of names, so the writer maps each distinct name to its id once and renumbers the columns
(``pack``); symbols and edges come as the tuples their tables take. The serial path runs the same
two functions in the writer, so both give the same bytes.
"""
from __future__ import annotations

import zlib
from array import array
from dataclasses import dataclass

from .model import FileGraph
from .packing import _LEVEL, _WIDE_LINES, _WIDE_NAMES, REF_KINDS, pack_imports


@dataclass(slots=True)
class FileRows:
    """One file's graph as its tables take it. ``names``: the distinct names its uses mention
    (name, qualifier, enclosing definition), sorted; the name columns hold 1-based positions in
    it (0: None), the uses sorted by line as ``packing.pack_rows`` keeps them."""

    path: str
    language: str | None
    lines: int
    symbols: list[tuple]
    edges: list[tuple]
    names: list[str]
    uses: int  # how many
    name_col: array
    qual_col: array
    encl_col: array
    rest: tuple[bytes, bytes, bytes]  # lines, kinds, enclosing lines: as stored
    posted: dict[int, int]  # name position → bit mask of its kinds (graph_refs)
    imports: bytes | None  # packed (``packing.pack_imports``)


def file_rows(g: FileGraph) -> FileRows:
    """``g`` made ready to write (no index needed: a worker process runs this)."""
    refs = sorted(g.refs, key=lambda r: r.line)  # stable: a line's uses keep the extractor's order
    names = sorted({x for r in refs for x in (r.name, r.qualifier, r.enclosing) if x is not None})
    local = {x: k for k, x in enumerate(names, 1)}
    local[None] = 0
    nt = "I" if len(names) >= 0xFFFF else "H"
    lines = [r.line for r in refs]
    encl_lines = [r.enclosing_line or 0 for r in refs]
    lt = "I" if any(x > 0xFFFF for x in lines) or any(x > 0xFFFF for x in encl_lines) else "H"
    kinds = bytes(REF_KINDS.index(r.kind) for r in refs)
    name_col = array(nt, [local[r.name] for r in refs])
    posted: dict[int, int] = {}
    for k, kind in zip(name_col, kinds):
        posted[k] = posted.get(k, 0) | (1 << kind)
    return FileRows(
        g.path, g.language, g.lines,
        [(s.path, s.name, s.qualname, s.kind, s.line, s.end_line, s.signature, s.doc, s.parent, s.language)
         for s in g.symbols],
        [(e.path, e.line, e.child, e.parent, e.kind, e.parent_qualifier) for e in g.edges],
        names, len(refs), name_col, array(nt, [local[r.qualifier] for r in refs]),
        array(nt, [local[r.enclosing] for r in refs]),
        (array(lt, lines).tobytes(), kinds, array(lt, encl_lines).tobytes()), posted, pack_imports(g.imports))


def pack(f: FileRows, ids: dict[str, int]) -> tuple[bytes, dict[int, int]]:
    """``packing.pack_uses`` of the file's uses with the graph's name ``ids``: the same bytes and
    posting entries (name id → kind bits)."""
    gids = [ids[x] for x in f.names]
    order = sorted(range(len(gids)), key=gids.__getitem__)
    lut = [0] * (len(gids) + 1)  # a name's position in the file's names → in its sorted ids
    for rank, k in enumerate(order, 1):
        lut[k + 1] = rank
    nt = f.name_col.typecode
    wide_lines = len(f.rest[0]) > 2 * f.uses
    head = array("I", [f.uses, len(gids), (nt == "I") * _WIDE_NAMES | wide_lines * _WIDE_LINES])
    lines, kinds, encl_lines = f.rest
    raw = b"".join((head.tobytes(), array("I", [gids[k] for k in order]).tobytes(),
                    array(nt, map(lut.__getitem__, f.name_col)).tobytes(), lines, kinds,
                    array(nt, map(lut.__getitem__, f.qual_col)).tobytes(),
                    array(nt, map(lut.__getitem__, f.encl_col)).tobytes(), encl_lines))
    return zlib.compress(raw, _LEVEL), {gids[k - 1]: bits for k, bits in f.posted.items()}
