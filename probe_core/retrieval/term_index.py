"""The files that can hold a needle, from the word postings kept with the symbol graph.

The exact-match lists (``literals.py``) used to test every indexed file's text for every needle:
cost and memory grew with the repository (a 2M-line tree: ~80 MB of text in memory, a substring
pass over it per needle). As code search engines do (Zoekt, Google's codesearch), an index now
narrows the search first, and only the files it names are read and matched as before:

* the index is every file's set of words (``intel/words.py``), stored in the manifest's database
  as a list of files per word (``intel/postings.py``) and kept up to date with the symbol graph;
* a needle splits into its word runs; a run bounded inside the needle (or by the identifier
  pattern's word boundaries) is a whole word of the file, the first run of a literal may end a
  word, the last may begin one, a lone run may sit anywhere in one. The vocabulary (kept in memory:
  a few MB, appended to as words are added) answers each run with the words that fit, and the
  postings with the files holding one of them for every run. A whole word is found by hash, a
  word's beginning or end in the words sorted by their first (or last) 8 bytes, so neither scans
  the vocabulary; only a lone run (a substring of a word) does;
* that is a superset of the files the scan would match, never a subset, so the lists built from
  it are the scan's (``tests/retrieval/test_term_index.py`` checks it against the scan on a real
  repository). Files without postings (their graphing failed) are scanned as before.
"""
from __future__ import annotations

import bisect
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import TypeVar

import numpy as np

from ..errors import ProbeError
from ..intel.store import GraphStore
from ..intel.words import WORD
from ..per_workspace import PerWorkspace
from ..records import short_hash
from ..workspace import Workspace

# A run that fits more words than this narrows nothing worth a query of the postings: it is left
# out of the intersection (the other runs, or the scan, decide).
MAX_RUN_WORDS = 5000
MAX_PARAMETERS = 30000  # words a candidate query keeps (once SQLite's bound on host parameters)
TEXT_CACHE_BYTES = 32 << 20  # read texts kept for the next query (a bounded share of the repository)
# Vocabulary bytes a look-up may scan before the words are sorted (a scan of 256 KB is ~0.1 ms; a
# repository's vocabulary under it is never sorted)
TAIL_SCAN_BYTES = 256 << 10
_HASH_SLICE = 16384  # words hashed per slice of the blob
KEY_BYTES = 8  # the words' beginnings and ends are sorted by this many of their (folded) bytes
_TOO_MANY = object()  # more words fit a run than its caller's limit

T = TypeVar("T")
FileMeta = tuple[str, str, "str | None", "str | None"]  # (path, file_hash, language, chunk_kind)


class Vocabulary:
    """Every posted word once, in memory, as two newline-joined blobs (case kept, ASCII folded):
    a substring search of a blob finds the words that contain, begin or end with a run at C speed."""

    def __init__(self) -> None:
        self.epoch = ""
        self.last_id = 0
        self._blob = bytearray(b"\n")
        self._folded = bytearray(b"\n")
        self._starts = array("Q")  # offset of each word's first byte in the blobs
        self._ids = array("Q")
        self._sorted = _Sorted()  # the first ``_sorted.n`` words by hash and by their ends

    def refresh(self, store: GraphStore) -> None:
        epoch = store.terms_epoch()
        if epoch != self.epoch:
            self.__init__()
            self.epoch = epoch
        rows = store.terms_after(self.last_id)
        if not rows:
            return
        ids, words = zip(*rows)
        self._ids.extend(ids)
        self._starts.extend(accumulate((len(w) + 1 for w in words[:-1]), initial=len(self._blob)))
        added = b"\n".join(words) + b"\n"
        self._blob += added
        self._folded += added.lower()
        self.last_id = ids[-1]

    def words(self, run: bytes, *, case: bool, starts: bool, ends: bool, limit: int | None) -> list[int] | None:
        """Ids of the words that contain ``run`` (``starts``: begin with it, ``ends``: end with it);
        ASCII case folded unless ``case``. None when more than ``limit`` fit."""
        blob = self._blob if case else self._folded
        needle = (b"\n" if starts else b"") + (run if case else run.lower()) + (b"\n" if ends else b"")
        shift = 1 if starts else 0  # the match starts at the newline before the word
        out: list[int] = []
        at = 0
        if starts or ends:  # the sorted words answer, then only the words added since are scanned
            found = self._sorted_words(run, case=case, starts=starts, ends=ends, limit=limit)
            if found is _TOO_MANY:
                return None
            if found is not None:
                out, at = found
        at = blob.find(needle, at)
        while at >= 0:
            k = bisect.bisect_right(self._starts, at + shift) - 1
            out.append(self._ids[k])
            if limit is not None and len(out) > limit:
                return None
            nxt = self._starts[k + 1] if k + 1 < len(self._starts) else len(blob)
            at = blob.find(needle, nxt - shift)
        return None if limit is not None and len(out) > limit else out

    def _sorted_words(self, run: bytes, *, case: bool, starts: bool, ends: bool,
                      limit: int | None) -> tuple[list[int], int] | object | None:
        """Ids of the sorted words that fit ``run`` (whole: equal to it; else beginning or ending
        with it), in blob order, and the blob offset where the words not sorted yet begin (the
        newline before the first), to be scanned; ``_TOO_MANY`` when more than ``limit`` words fit;
        None where the scan is to answer instead (a vocabulary too small to sort, or more than
        ``limit`` words to verify one by one).
        Scanning a vocabulary's blob for each run cost ~3 ms on the monorepo (5 MB), this ~10 us."""
        ordered = self._sorted_up_to_date()
        if ordered.n == 0:
            return None
        if starts and ends:
            key = hash(bytes(run).lower())
            hashes, order = ordered.hashes, ordered.hash_order
            ks = order[np.searchsorted(hashes, key, "left"):np.searchsorted(hashes, key, "right")]
            fits = bytearray.__eq__
        else:
            folded = bytes(run).lower() if starts else bytes(run).lower()[::-1]
            keys, order = (ordered.head_keys, ordered.head_order) if starts else (ordered.tail_keys, ordered.tail_order)
            low, high = _run_key(folded)
            ks = order[np.searchsorted(keys, np.uint64(low), "left"):np.searchsorted(keys, np.uint64(high), "right")]
            every_one_fits = not case and len(folded) <= KEY_BYTES  # the key is the whole folded run
            if limit is not None and len(ks) > limit:
                return _TOO_MANY if every_one_fits else None  # else too many to verify: the scan decides
            if every_one_fits:
                return [self._ids[k] for k in np.sort(ks).tolist()], self._offset(ordered.n)
            fits = bytearray.startswith if starts else bytearray.endswith
        blob, target = (self._blob, run) if case else (self._folded, run.lower())
        out = [self._ids[k] for k in sorted(ks.tolist()) if fits(blob[self._starts[k]:self._offset(k + 1)], target)]
        return out, self._offset(ordered.n)

    def prepare(self) -> None:
        """Sort the words now (as the first look-up of a large vocabulary would)."""
        self._sorted_up_to_date()

    def _sorted_up_to_date(self) -> _Sorted:
        """The words sorted again once more than ``TAIL_SCAN_BYTES`` of them went unsorted: by hash
        (whole words) and by their first and last ``KEY_BYTES`` folded bytes. On the monorepo's
        400k words: 0.3 s more than the hashes alone, once; 14 MB kept (8 bytes of key, 4 of position)."""
        if len(self._blob) - self._offset(self._sorted.n) <= TAIL_SCAN_BYTES:
            return self._sorted
        n = len(self._starts)
        hashes = np.empty(n, np.int64)
        for lo in range(0, n, _HASH_SLICE):  # a slice of words at a time: ~1 MB of bytes objects, not 20
            hi = min(n, lo + _HASH_SLICE)
            hashes[lo:hi] = np.fromiter(map(hash, bytes(self._folded[self._starts[lo]:self._offset(hi)]).split(b"\n")),
                                        np.int64, hi - lo)
        folded = np.frombuffer(bytes(self._folded), np.uint8)  # a copy: the blob grows under a view
        starts = np.asarray(self._starts[:n], np.int32)  # a blob is far under 2 GB
        ends = np.append(starts[1:] - 1, self._offset(n))
        self._sorted = _Sorted(n, *_ordered(hashes), *_ordered(_end_keys(folded, starts, ends, head=True)),
                               *_ordered(_end_keys(folded, starts, ends, head=False)))
        return self._sorted

    def _offset(self, k: int) -> int:
        """Blob offset of the newline that ends word ``k - 1`` (the blob's end after the last word)."""
        return self._starts[k] - 1 if k < len(self._starts) else len(self._blob) - 1


def _end_keys(blob: np.ndarray, starts: np.ndarray, ends: np.ndarray, *, head: bool) -> np.ndarray:
    """Each word's first (``head``) or last ``KEY_BYTES`` bytes, the last ones reversed, as a
    big-endian number padded with zero bytes: numbers that sort as the byte strings do."""
    keys = np.zeros(len(starts), np.uint64)
    for i in range(KEY_BYTES):
        at = starts + i if head else ends - 1 - i
        inside = at < ends if head else at >= starts
        keys <<= np.uint64(8)
        keys |= np.where(inside, blob[np.clip(at, 0, len(blob) - 1)], np.uint8(0))
    return keys


def _run_key(run: bytes) -> tuple[int, int]:
    """The lowest and highest key (``_end_keys``) of a word that begins with ``run``'s first
    ``KEY_BYTES`` bytes."""
    head = run[:KEY_BYTES]
    pad = KEY_BYTES - len(head)
    low = int.from_bytes(head + b"\0" * pad, "big")
    return low, low | ((1 << (8 * pad)) - 1)


def _ordered(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``keys`` sorted, and their positions in that order (4 bytes each)."""
    order = np.argsort(keys, kind="stable").astype(np.int32)
    return keys[order], order


@dataclass(frozen=True, slots=True)
class _Sorted:
    """The first ``n`` words of a vocabulary in three orders (word positions, 4 bytes each): by the
    hash of their folded form, by their first ``KEY_BYTES`` folded bytes, by their last ones
    reversed; each order's sorted keys beside it."""

    n: int = 0
    hashes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    hash_order: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    head_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    head_order: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    tail_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    tail_order: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))


class TermIndex:
    """One workspace's vocabulary and a bounded cache of texts read to verify candidates."""

    def __init__(self) -> None:
        self.vocabulary = Vocabulary()
        self._texts: OrderedDict[tuple[str, str], tuple[object, int]] = OrderedDict()
        self._bytes = 0
        self._unposted: tuple[tuple, list[FileMeta]] | None = None
        self.total = 0  # indexed files (the exact-match lists weigh a match by its rarity among them)
        self.lock = threading.RLock()

    def refresh(self, ws: Workspace, store: GraphStore) -> None:
        self.vocabulary.refresh(store)
        key = (ws.manifest.generation, ws.lexical_version, store.changes)  # not moved by the dense fill
        if self._unposted is None or self._unposted[0] != key:
            self._unposted = (key, store.unposted_files())
            self.total = ws.manifest.counts()["files"]

    def candidates(self, store: GraphStore, needle: bytes, *, case: bool, bounded: bool) -> list[FileMeta]:
        """Files that may hold ``needle`` (a superset of those that do), by path. ``bounded``: the
        needle is matched between word boundaries (an identifier), else anywhere (a literal)."""
        groups = []
        for m in WORD.finditer(needle):
            # a byte of the needle that is no word byte ends the word before it and starts the next
            found = self.vocabulary.words(m.group(), case=case, starts=bounded or m.start() > 0,
                                          ends=bounded or m.end() < len(needle), limit=MAX_RUN_WORDS)
            if found is not None:
                if not found:  # no posted file holds this run
                    return self.unposted()
                groups.append(found)
        # the most selective runs, within SQLite's bound on host parameters (fewer runs: a superset)
        kept, used = [], 0
        for group in sorted(groups, key=len):
            if used + len(group) > MAX_PARAMETERS:
                break
            kept.append(group)
            used += len(group)
        # no selective run (none at all, or each fits thousands of words): every file is a candidate
        return sorted(store.posted_files(kept) + self.unposted())

    def holders(self, store: GraphStore, name: bytes) -> list[FileMeta]:
        """Exactly the posted files whose text holds ``name`` (made of word bytes only) anywhere, case
        kept: every occurrence lies inside one word. Unposted files are the caller's to test."""
        found = self.vocabulary.words(name, case=True, starts=False, ends=False, limit=None)
        return store.posted_files([found]) if found else []  # one list of files, however many words

    def unposted(self) -> list[FileMeta]:
        return list(self._unposted[1]) if self._unposted else []

    def text(self, ws: Workspace, path: str, file_hash: str, wrap: Callable[[bytes], T]) -> T | None:
        """``wrap`` of the indexed version of ``path`` as UTF-8 bytes, kept for later queries (the
        wrapper keeps what matching builds: folded text, line offsets); None when the file on disk
        is another version now (edited, not indexed yet) or cannot be read."""
        from ..indexing.indexer import indexed_text

        key = (path, file_hash)
        held = self._texts.get(key)
        if held is not None:
            self._texts.move_to_end(key)
            return held[0]
        try:
            text = indexed_text(ws, path)
        except (OSError, ProbeError):  # gone since it was indexed: nothing to match
            return None
        if short_hash(text) != file_hash:  # edited since: its lines are not the chunks'
            return None
        data = text.encode("utf-8", "surrogatepass")
        cost = 2 * len(data) + 64  # the text, its folded copy once built, line offsets
        self._texts[key] = (wrap(data), cost)
        self._bytes += cost
        while self._bytes > TEXT_CACHE_BYTES and len(self._texts) > 1:
            _, (_, old) = self._texts.popitem(last=False)
            self._bytes -= old
        return self._texts[key][0]


_indexes: PerWorkspace[TermIndex] = PerWorkspace(lambda _ws: TermIndex())


def term_index(ws: Workspace) -> TermIndex:
    """The workspace's vocabulary and text cache (one per open workspace, dropped with it)."""
    return _indexes.get(ws)
