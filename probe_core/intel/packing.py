"""A file's uses and imports packed into one compressed row each (``graph_uses``).

A use was a row with two indexes: 2.9M of them took 158 MB on a 2.9M-line monorepo, 1.7× the
source. Packed per file they take 11.6 MB, and a posting list (``graph_refs``: name → the files
using it, with a bit per kind of use; 6.2 MB) finds the few files a query has to unpack.

The uses of a file are kept by line, the extractor's order among a line's uses (a query's ties
come out as the rows did; ``refs_in`` finds a line range by bisection), zlib-compressed, by column:
a header (uses, dictionary size, widths), the file's dictionary (the sorted name ids it uses), then
per use its name, line, kind, qualifier, enclosing definition and that definition's line. Names are
positions in the dictionary (1-based, 0: None), 2 bytes each unless the file has 65,535 names or
more, lines 2 bytes unless it passes line 65,535: unpacking is then about half the bytes it would
be with plain ids, and unpacking is what a query pays (``refs_named`` unpacks every file the posting
list gives). Decoding is zlib and ``array`` in C; a name's uses are found with ``array.index``.
"""
from __future__ import annotations

import json
import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from itertools import accumulate

from .model import Import, Ref

REF_KINDS = ("call", "ref", "import")  # a use's kind is its position here; in graph_refs, bit 1 << position
_HEAD = array("I", [0, 0, 0])  # uses, dictionary size, flags
_WIDE_NAMES, _WIDE_LINES = 1, 2  # flags: 4-byte name positions, 4-byte lines
_LEVEL = 1  # zlib level: 6 saves ~10 % more for twice the CPU


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
    ids = sorted({x for r in rows for x in (r[0], r[3], r[4]) if x})
    local = {x: k for k, x in enumerate(ids, 1)}
    local[0] = 0
    wide_names = len(ids) >= 0xFFFF
    wide_lines = any(r[1] > 0xFFFF or r[5] > 0xFFFF for r in rows)
    nt, lt = "I" if wide_names else "H", "I" if wide_lines else "H"
    cols = list(zip(*rows)) or [()] * 6
    parts = [array("I", [len(rows), len(ids), wide_names * _WIDE_NAMES | wide_lines * _WIDE_LINES]), array("I", ids),
             array(nt, [local[x] for x in cols[0]]), array(lt, cols[1]), bytes(cols[2]),
             array(nt, [local[x] for x in cols[3]]), array(nt, [local[x] for x in cols[4]]), array(lt, cols[5])]
    raw = b"".join(p if isinstance(p, bytes) else p.tobytes() for p in parts)
    return zlib.compress(raw, _LEVEL), posted


class Uses:
    """One file's unpacked uses: columns read on demand."""

    __slots__ = ("_raw", "n", "ids", "names", "_nt", "_lt", "_at", "_cols")

    def __init__(self, blob: bytes):
        self._raw = raw = zlib.decompress(blob)
        head = array("I")
        head.frombytes(raw[:_HEAD.itemsize * 3])
        self.n, size, flags = head
        self._nt, self._lt = ("I" if flags & _WIDE_NAMES else "H"), ("I" if flags & _WIDE_LINES else "H")
        self.ids = self._read("I", _HEAD.itemsize * 3, size)
        self.names = self._read(self._nt, self._at, self.n)  # dictionary positions, 1-based
        self._cols: tuple[array, ...] | None = None

    def _read(self, typecode: str, at: int, count: int) -> array:
        col = array(typecode)
        end = at + count * col.itemsize
        col.frombytes(self._raw[at:end])
        self._at = end
        return col

    def _columns(self) -> tuple[array, ...]:
        """line, kind, qualifier, enclosing, enclosing line (after the names), read once."""
        if self._cols is not None:
            return self._cols
        n, nt = self.n, self._nt
        lines_at = _HEAD.itemsize * 3 + len(self.ids) * self.ids.itemsize + n * self.names.itemsize
        lines = self._read(self._lt, lines_at, n)
        kinds = self._read("B", self._at, n)
        quals = self._read(nt, self._at, n)
        encls = self._read(nt, self._at, n)
        self._cols = (lines, kinds, quals, encls, self._read(self._lt, self._at, n))
        return self._cols

    def between(self, start: int, end: int) -> range:
        """Positions of the uses on lines ``start``..``end``."""
        lines = self._columns()[0]
        return range(bisect_left(lines, start), bisect_right(lines, end))

    def positions_of(self, name_id: int) -> list[int]:
        """Positions of the uses of one name (``array.index`` scans in C)."""
        k = bisect_left(self.ids, name_id)
        if k == len(self.ids) or self.ids[k] != name_id:
            return []
        out, names, local, start = [], self.names, k + 1, 0
        try:
            while True:
                start = names.index(local, start)
                out.append(start)
                start += 1
        except ValueError:
            return out

    def rows(self, positions=None) -> list[tuple[int, int, int, int, int, int, int]]:
        """(position, name, line, kind, qualifier, enclosing, enclosing line) of the uses at
        ``positions`` (all: None); ids, 0 standing for None."""
        lines, kinds, quals, encls, encl_lines = self._columns()
        ids, names = (0, *self.ids), self.names
        return [(i, ids[names[i]], lines[i], kinds[i], ids[quals[i]], ids[encls[i]], encl_lines[i])
                for i in (range(self.n) if positions is None else positions)]


class UsesCache:
    """Unpacked files, the most recently read kept up to ``budget`` bytes, with the names and file
    ids met: a query asks for a name's uses more than once (the target's ranking, then its
    callers), search's graph evidence asks for the same hits' files again. Emptied when the graph
    changes (``fresh``)."""

    def __init__(self, budget: int = 32 << 20):
        self.budget, self.key, self.held = budget, None, 0
        self._files: OrderedDict[int, Uses] = OrderedDict()
        self.names: dict[int, str] = {}  # graph_names id → name
        self.file_ids: dict[str, int | None] = {}  # path → graph_files id

    def fresh(self, key) -> None:
        """Forget everything when ``key`` (the graph's state) moved, or the small maps grew large."""
        if key != self.key or len(self.names) + len(self.file_ids) > 500_000:
            self.key, self.held = key, 0
            self._files.clear()
            self.names.clear()
            self.file_ids.clear()

    def get(self, db, file_ids: list[int]) -> dict[int, Uses]:
        """file id → its uses (files without uses are left out), read through ``db`` as needed."""
        missing = [f for f in file_ids if f not in self._files]
        for start in range(0, len(missing), 500):
            part = missing[start:start + 500]
            for file_id, blob in db.execute(
                    f"SELECT file, uses FROM graph_uses WHERE file IN ({','.join('?' * len(part))})", part):
                uses = self._files[file_id] = Uses(blob)
                self.held += 2 * len(uses._raw)  # with its columns once read
        out = {}
        for f in file_ids:
            if f in self._files:
                self._files.move_to_end(f)
                out[f] = self._files[f]
        while self.held > self.budget and len(self._files) > len(out):
            _, dropped = self._files.popitem(last=False)
            self.held -= 2 * len(dropped._raw)
        return out


def used_names(blob: bytes) -> set[int]:
    """The name ids a packed file's uses are of (its posting entries, to delete them)."""
    uses = Uses(blob)
    return {uses.ids[k - 1] for k in set(uses.names)}


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


def pack_terms(ids: list[int]) -> bytes:
    """A file's sorted word ids (``graph_files.terms``, to delete its postings), as gaps,
    compressed: 2.2× smaller than 4 bytes an id."""
    return zlib.compress(array("I", [b - a for a, b in zip([0, *ids], ids)]).tobytes(), _LEVEL)


def unpack_terms(blob: bytes) -> list[int]:
    gaps = array("I")
    gaps.frombytes(zlib.decompress(blob))
    return list(accumulate(gaps))
