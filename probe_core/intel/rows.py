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
from operator import attrgetter

from .model import FileGraph
from .packing import _LEVEL, _WIDE_LINES, _WIDE_NAMES, REF_KINDS, pack_imports

_LINE, _NAME, _QUAL, _ENCL = attrgetter("line"), attrgetter("name"), attrgetter("qualifier"), attrgetter("enclosing")
_ENCL_LINE, _KIND_OF = attrgetter("enclosing_line"), attrgetter("kind")
_KIND = {k: i for i, k in enumerate(REF_KINDS)}


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
    refs = sorted(g.refs, key=_LINE)  # stable: a line's uses keep the extractor's order
    name_of, qual_of, encl_of = list(map(_NAME, refs)), list(map(_QUAL, refs)), list(map(_ENCL, refs))
    names = sorted({*name_of, *qual_of, *encl_of} - {None})
    local = {x: k for k, x in enumerate(names, 1)}
    local[None] = 0
    nt = "I" if len(names) >= 0xFFFF else "H"
    lines = list(map(_LINE, refs))
    encl_lines = [x or 0 for x in map(_ENCL_LINE, refs)]
    lt = "I" if max(lines, default=0) > 0xFFFF or max(encl_lines, default=0) > 0xFFFF else "H"
    kinds = bytes(map(_KIND.__getitem__, map(_KIND_OF, refs)))
    name_col = array(nt, map(local.__getitem__, name_of))
    posted: dict[int, int] = {}
    for k, kind in zip(name_col, kinds):
        posted[k] = posted.get(k, 0) | (1 << kind)
    return FileRows(
        g.path, g.language, g.lines,
        [(s.path, s.name, s.qualname, s.kind, s.line, s.end_line, s.signature, s.doc, s.parent, s.language)
         for s in g.symbols],
        [(e.path, e.line, e.child, e.parent, e.kind, e.parent_qualifier) for e in g.edges],
        names, len(refs), name_col, array(nt, map(local.__getitem__, qual_of)),
        array(nt, map(local.__getitem__, encl_of)),
        (array(lt, lines).tobytes(), kinds, array(lt, encl_lines).tobytes()), posted, pack_imports(g.imports))


def pack(f: FileRows, ids: dict[str, int]) -> tuple[bytes, dict[int, int]]:
    """``packing.pack_uses`` of the file's uses with the graph's name ``ids``: the same bytes and
    posting entries (name id → kind bits)."""
    gids = list(map(ids.__getitem__, f.names))
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
