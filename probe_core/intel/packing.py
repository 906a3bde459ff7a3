"""A file's uses and imports packed into one compressed row each (``graph_uses``).

A use was a row with two indexes: 2.9M of them took 158 MB on a 2.9M-line monorepo, 1.7× the
source. Packed per file they take ~12 MB, and a posting list (``graph_refs``: name → the files
using it, with a bit per kind of use) finds the few files a query has to unpack.

The uses of a file are kept by line, the extractor's order among a line's uses (a query's ties
come out as the rows did; ``refs_in`` finds a line range by bisection). They are stored by column, integers of 4 bytes (``_INT``) but the kind (1 byte), zlib-compressed: a name id,
the line, the kind, the qualifier's and the enclosing definition's name ids and its line; 0 stands
for None (ids and lines start at 1). Decoding is zlib and ``array`` in C; a name's uses are found
with ``array.index``, so unpacking a file to answer one name does not loop over all its uses in Python.
"""
from __future__ import annotations

import json
import zlib
from array import array
from bisect import bisect_left, bisect_right

from .model import Import, Ref

REF_KINDS = ("call", "ref", "import")  # a use's kind is its position here; in graph_refs, bit 1 << position
_INT = "I"
_W = array(_INT).itemsize  # 4 on every platform Python builds on
_ROW = 5 * _W + 1  # bytes a use takes unpacked
_LEVEL = 1  # zlib level: 6 saves ~15 % more for twice the CPU (docs/benchmarks.md)


def kind_bits(kinds) -> int:
    """The posting list's mask of the kinds named (every kind: None)."""
    return 7 if kinds is None else sum(1 << REF_KINDS.index(k) for k in kinds)


def pack_uses(refs: list[Ref], ids: dict[str, int]) -> tuple[bytes, dict[int, int]]:
    """The packed uses of one file, and its posting entries (name id → bit mask of its kinds)."""
    return pack_rows([(ids[r.name], r.line, REF_KINDS.index(r.kind), 0 if r.qualifier is None else ids[r.qualifier],
                       0 if r.enclosing is None else ids[r.enclosing], r.enclosing_line or 0) for r in refs])


def pack_rows(rows: list[tuple[int, int, int, int, int, int]]) -> tuple[bytes, dict[int, int]]:
    """``pack_uses`` of (name, line, kind, qualifier, enclosing, enclosing line) rows in the
    extractor's order, ids already given (0: None)."""
    rows = sorted(rows, key=lambda r: r[1])  # by line; stable: a line's uses keep their order
    posted: dict[int, int] = {}
    for r in rows:
        posted[r[0]] = posted.get(r[0], 0) | (1 << r[2])
    cols = list(zip(*rows)) or [()] * 6
    raw = b"".join(bytes(col) if k == 2 else array(_INT, col).tobytes() for k, col in enumerate(cols))
    return zlib.compress(raw, _LEVEL), posted


class Uses:
    """One file's unpacked uses: columns read on demand."""

    __slots__ = ("_raw", "n", "names")

    def __init__(self, blob: bytes):
        self._raw = zlib.decompress(blob)
        self.n = len(self._raw) // _ROW
        self.names = array(_INT)
        self.names.frombytes(self._raw[:self.n * _W])

    def _column(self, at: int, width: int = _W) -> array:
        col = array(_INT if width == _W else "B")
        col.frombytes(self._raw[at:at + self.n * width])
        return col

    def between(self, start: int, end: int) -> range:
        """Positions of the uses on lines ``start``..``end``."""
        lines = self._column(self.n * _W)
        return range(bisect_left(lines, start), bisect_right(lines, end))

    def positions_of(self, name_id: int) -> list[int]:
        """Positions of the uses of one name (``array.index`` scans in C)."""
        out, names, start = [], self.names, 0
        try:
            while True:
                start = names.index(name_id, start)
                out.append(start)
                start += 1
        except ValueError:
            return out

    def rows(self, positions=None) -> list[tuple[int, int, int, int, int, int, int]]:
        """(position, name, line, kind, qualifier, enclosing, enclosing line) of the uses at
        ``positions`` (all: None); 0 stands for None."""
        n = self.n
        lines, kinds = self._column(n * _W), self._column(2 * n * _W, 1)
        quals, encls, encl_lines = (self._column(2 * n * _W + n + k * n * _W) for k in range(3))
        names = self.names
        return [(i, names[i], lines[i], kinds[i], quals[i], encls[i], encl_lines[i])
                for i in (range(n) if positions is None else positions)]


def used_names(blob: bytes) -> set[int]:
    """The name ids a packed file uses (its posting entries, to delete them)."""
    return set(Uses(blob).names)


def to_ref(path: str, row: tuple, names: dict[int, str]) -> Ref:
    """The ``Ref`` of an unpacked row, its name ids read from ``names``."""
    _, name, line, kind, qual, encl, encl_line = row
    return Ref(path, line, names[name], names[qual] if qual else None, REF_KINDS[kind],
               names[encl] if encl else None, encl_line or None)


def pack_imports(imports: list[Import]) -> bytes | None:
    if not imports:
        return None
    return zlib.compress(json.dumps([[i.line, i.module, i.name, i.alias] for i in imports],
                                    separators=(",", ":")).encode(), _LEVEL)


def unpack_imports(path: str, blob: bytes | None) -> list[Import]:
    if not blob:
        return []
    return [Import(path, line, module, name, alias) for line, module, name, alias in json.loads(zlib.decompress(blob))]
