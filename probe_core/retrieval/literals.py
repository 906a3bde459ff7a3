"""Exact-match evidence: the chunks that contain a string the query quotes, and the chunks that
define or mention an identifier it names.

Neither BM25 nor the embedder ranks a verbatim error message above a paragraph that paraphrases
it, so both come back here as ranked lists of their own, fused with the dense and BM25 lists. The
files a needle may be in come from the word postings kept with the index (``term_index.py``);
only those are read (from disk, a bounded cache) and matched, so a query costs what its needles
match, not what the repository holds (``bench/bench_scale.py``).
"""
from __future__ import annotations

import bisect
import dataclasses
import math
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ..intel.words import WORD
from ..workspace import Workspace
from .chunk_locator import ChunkLocator
from .term_index import TermIndex, term_index
from .query_intent import QueryIntent, identifiers_in

LIST_LIMIT = 20  # chunks per exact-match list: deeper ranks add almost nothing under RRF
# A literal found in more files than this is a common phrase, not a fingerprint: it is left out
# (the same reason BM25 weighs a word by its rarity).
MAX_LITERAL_FILES = 12
MAX_IDENTIFIER_FILES = 40
# Files read to verify one needle at most: when the word postings name more (every word of the
# needle is common), it counts as common without reading any, so a search reads a bounded number
# of files whatever the repository. Measured: at most 34 candidates for a dev-set needle, 130 for
# the monorepo's (`"invalid literal"`): the bound changes neither's answers.
MAX_CANDIDATE_FILES = 256
DEFINITION_BONUS = 2.0  # the chunk that defines a name outranks the chunks that use it
# A message is often defined once, under a name (`KeyMustBeAString => "key must be a string"`,
# `MSG_X = "..."`), and raised where that name is used: the uses of a code-shaped name on a line
# where the literal sits inside a string count like the literal itself (measured: 0.5 and 0 rank
# them below the tests that assert the message). Only the rarest few: each is a scan of the whole
# repository, and a line with many names is a call, not a definition.
OWNER_SHARE = 1.0
MAX_OWNERS = 3
# A one-word query naming this many definitions at most is an identifier (``with_named_definition``);
# kinds that define code, not variables or constants (a monorepo holds 7 variables named ``cache``).
MAX_NAMED_DEFINITIONS = 3
DEFINITION_KINDS = frozenset({"function", "method", "class", "struct", "interface", "trait", "enum", "type",
                              "impl", "macro", "constructor"})
_NAMED_READ = 32  # symbols read to decide: a name with this many is common whatever their kinds
_ONE_WORD = re.compile(r"[A-Za-z_$][\w$]*")
# A quoted string on one line ("...", '...', `...`; escapes skipped), where a message is written.
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')


# The line breaks of ``str.splitlines`` (which the chunker counts lines with), in UTF-8.
_LINE_BREAK = re.compile(rb"\r\n|[\n\r\x0b\x0c\x1c-\x1e]|\xc2\x85|\xe2\x80[\xa8\xa9]")
# any break but "\n", each looked for by a substring test (a regular expression of alternatives
# scans ~5x slower: 20 ms against 4 for sympy's 1.7 MB of solvers)
_OTHER_BREAKS = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
# A byte of a multi-byte UTF-8 character counts as part of a word, so a name never matches inside
# a longer non-ASCII one ("caf" in "café").
_WORD_BYTE = rb"[\w$\x80-\xff]"
_IS_WORD = re.compile(_WORD_BYTE)


@dataclass(slots=True)
class IndexedText:
    """One indexed file's text and the facts filters read.

    Only what matching needs is kept, compactly: the text as UTF-8 bytes (a Python string takes 2
    or 4 bytes a character for the whole file as soon as one character needs it), the same bytes
    with ASCII letters lowercased (built on the first case-blind test; a substring test on it is
    ~20x faster than a case-blind regular expression, and it keeps the offsets of ``data``), and
    the offsets of the lines as 4-byte integers (built on the first match). Case folding and word
    boundaries are therefore ASCII's."""

    file_hash: str
    language: str | None
    chunk_kind: str | None
    data: bytes
    folded: bytes | None = None
    line_starts: array | None = None  # byte offset of each line's start

    def holds(self, needle: bytes, *, case: bool) -> bool:
        """A fast substring test before any regular expression runs."""
        if case:
            return needle in self.data
        if self.folded is None:
            self.folded = self.data.lower()
        return needle.lower() in self.folded

    def line_of(self, offset: int) -> int:
        """1-based line of a byte offset, counted the way the chunker counts (``splitlines``)."""
        if self.line_starts is None:
            starts = array("I", [0])
            if not any(brk in self.data for brk in _OTHER_BREAKS):  # only "\n": found in C (a large file has ~100k)
                starts.frombytes((np.flatnonzero(np.frombuffer(self.data, np.uint8) == 10) + 1)
                                 .astype(np.uint32).tobytes())
            else:
                starts.extend(m.end() for m in _LINE_BREAK.finditer(self.data))
            if starts[-1] == len(self.data):  # a break at the end starts no line
                starts.pop()
            self.line_starts = starts
        return bisect.bisect_right(self.line_starts, offset)

    def line(self, number: int) -> str:
        """The text of a 1-based line (after ``line_of`` has built the offsets)."""
        starts = self.line_starts if self.line_starts is not None else ()
        if not 1 <= number <= len(starts):
            return ""
        end = starts[number] if number < len(starts) else len(self.data)
        return self.data[starts[number - 1]:end].decode("utf-8", "replace")


@dataclass(slots=True)
class ExactLists:
    """Two ranked lists of point ids: chunks holding a quoted literal, chunks defining or using an
    identifier of the query; and the definitions that lead the answer."""

    literal: list[str] = field(default_factory=list)
    identifier: list[str] = field(default_factory=list)
    # the chunks of the definitions the query names, when it is one such name (``names_definition``)
    definitions: list[str] = field(default_factory=list)


def _idf(files_total: int, files_with: int) -> float:
    return math.log(1.0 + files_total / max(1, files_with))


class _Files:
    """The indexed files a search may match (``allowed``), found through the word postings and
    read (and kept for this query) only when a needle may be in them."""

    def __init__(self, ws: Workspace, store, index: TermIndex,
                 allowed: Callable[[str, str | None, str | None], bool]) -> None:
        self.ws, self.store, self.index, self.allowed = ws, store, index, allowed
        self.texts: dict[str, IndexedText] = {}

    def text(self, path: str, file_hash: str, language: str | None, kind: str | None) -> IndexedText | None:
        f = self.texts.get(path)
        if f is None:
            f = self.index.text(self.ws, path, file_hash, lambda data: IndexedText(file_hash, language, kind, data))
            if f is None:
                return None
            self.texts[path] = f
        return f

    def holding(self, needle: bytes, *, case: bool, bounded: bool,
                max_files: int | None = None) -> Iterator[tuple[str, IndexedText]] | None:
        """(path, text) of the allowed files that may hold ``needle``, by path; None, reading
        nothing, when the postings name more than ``MAX_CANDIDATE_FILES`` of them, or (``max_files``)
        when the needle is one whole word, matched case kept between word boundaries, that more
        than ``max_files`` posted files hold: each of those holds it (the postings are the files'
        words), so reading them would only count what is already known."""
        metas = [m for m in self.index.candidates(self.store, needle, case=case, bounded=bounded)
                 if self.allowed(m[0], m[2], m[3])]
        if len(metas) > MAX_CANDIDATE_FILES:
            return None
        if max_files is not None and case and bounded and WORD.fullmatch(needle) and len(metas) > max_files:
            unposted = {m[0] for m in self.index.unposted()}
            if sum(m[0] not in unposted for m in metas) > max_files:
                return None
        return ((path, f) for path, file_hash, language, kind in metas
                if (f := self.text(path, file_hash, language, kind)) is not None)

    def holders(self, name: str) -> int:
        """How many allowed files hold ``name`` (a word) anywhere, case kept."""
        needle = _utf8(name)
        posted = sum(self.allowed(path, language, kind) for path, _, language, kind in self.index.holders(self.store, needle))
        return posted + sum(f.holds(needle, case=True) for path, h, language, kind in self.index.unposted()
                            if self.allowed(path, language, kind) and (f := self.text(path, h, language, kind)))

    def indexed(self, path: str) -> IndexedText | None:
        """The text of one allowed indexed file (a definition's), None when it is not one."""
        meta = self.ws.manifest.indexed_file(path)
        if meta is None or not self.allowed(path, meta[1], meta[2]):
            return None
        return self.text(path, *meta)


def _occurrences(files: Iterable[tuple[str, IndexedText]] | None, needle: bytes, max_files: int, *, case: bool,
                 bounded: bool) -> dict[str, list[int]] | None:
    """path → lines holding ``needle`` (``offsets``); None when more than ``max_files`` files hold it
    (or ``files`` is None: too many candidates)."""
    if files is None:
        return None
    found: dict[str, list[int]] = {}
    for path, f in files:
        if not f.holds(needle, case=case):  # a substring test rules most files out cheaply
            continue
        lines = [f.line_of(at) for at in offsets(f, needle, case=case, bounded=bounded)]
        if lines:
            found[path] = lines
            if len(found) > max_files:
                return None
    return found


def offsets(f: IndexedText, needle: bytes, *, case: bool, bounded: bool) -> Iterator[int]:
    """Where ``needle`` starts in ``f``, leftmost first and never overlapping: the matches of
    ``_identifier_pattern`` (``bounded``: no word byte just before or after, case kept) or
    ``_literal_pattern`` (ASCII case folded) as ``finditer`` gives them. Found with ``bytes.find``:
    a pattern that starts with a look-behind is tried at every offset of the text (sympy's ODE
    package: 11 ms against 0.8 for the same 463 matches)."""
    if not case and f.folded is None:
        f.folded = f.data.lower()
    data, needle = (f.data, needle) if case else (f.folded, needle.lower())
    at = data.find(needle)
    while at >= 0:
        if bounded and ((at and _IS_WORD.match(data, at - 1)) or _IS_WORD.match(data, at + len(needle))):
            at = data.find(needle, at + 1)
            continue
        yield at
        at = data.find(needle, at + len(needle))


def _utf8(text: str) -> bytes:
    """``text`` as the scan's bytes (a lone surrogate from a JSON query encodes, and matches nothing)."""
    return text.encode("utf-8", "surrogatepass")


def _identifier_pattern(name: str) -> re.Pattern[bytes]:
    """What an identifier matches (``offsets`` finds it faster; tests compare the two)."""
    return re.compile(b"(?<!" + _WORD_BYTE + b")" + re.escape(_utf8(name)) + b"(?!" + _WORD_BYTE + b")")


def _literal_pattern(literal: str) -> re.Pattern[bytes]:
    """What a literal matches (``offsets`` finds it faster; tests compare the two)."""
    return re.compile(re.escape(_utf8(literal)), re.I)


def _split_qualified(name: str) -> tuple[str | None, str]:
    """``MultiDict.getlist`` → ("MultiDict", "getlist"); ``Map::entry`` → ("Map", "entry")."""
    parts = re.split(r"\.|::", name)
    return (parts[-2] if len(parts) > 1 else None), parts[-1]


def with_named_definition(ws: Workspace, query: str, intent: QueryIntent) -> QueryIntent:
    """``intent``, marked ``names_definition`` when the whole query is one name (``sympify``,
    ``parse_cookie``, ``MultiDict.getlist``) that 1 to ``MAX_NAMED_DEFINITIONS`` definitions have:
    asked alone, a definition's name asks for that code, and those definitions lead the answer
    (``ExactLists.definitions``). A plain word also becomes the identifier it names: it is otherwise
    left to BM25 and the embedder (it is prose as often as a name). A name that many definitions
    have (``get``, ``render``: no one of them is meant) is left as it was."""
    word = query.strip()
    if intent.literals or not (_ONE_WORD.fullmatch(word) or intent.identifiers == (word.removesuffix("()"),)):
        return intent
    name = word.removesuffix("()")
    symbols = _named_symbols(ws, name, limit=_NAMED_READ)
    found = [s for s in symbols if s.kind in DEFINITION_KINDS]
    if len(symbols) == _NAMED_READ or not 1 <= len(found) <= MAX_NAMED_DEFINITIONS:
        return intent
    return dataclasses.replace(intent, identifiers=(name,), asks_mechanism=False, names_definition=True)


def _named_symbols(ws: Workspace, name: str, limit: int | None = None) -> list:
    """The symbols ``name`` names exactly: ``Type.method`` (or ``Type::method``) the members of that
    type (of the first ``limit`` symbols with the member's name)."""
    from ..intel.build import graph_store

    qualifier, last = _split_qualified(name)
    found = graph_store(ws).symbols_named(last, limit=limit)
    return [s for s in found if qualifier is None or (s.owner or "").split("::")[-1] == qualifier]


def exact_lists(ws: Workspace, intent: QueryIntent, allowed: Callable[[str, str | None, str | None], bool],
                prior: Callable[[str, str | None], float] = lambda _path, _kind: 1.0) -> ExactLists:
    """The exact-match lists for ``intent`` over the indexed files that ``allowed(path, language,
    chunk_kind)`` accepts. ``prior(path, chunk_kind)`` scales a file's matches, so that the lists
    rank like the fused list does (a test that asserts a message after the code that raises it)."""
    out = ExactLists()
    if not intent.literals and not intent.identifiers:
        return out
    from ..intel.build import graph_store

    store = graph_store(ws)
    index = term_index(ws)
    with index.lock:
        index.refresh(ws, store)
        return _lists(ws, _Files(ws, store, index, allowed), intent, prior)


def _lists(ws: Workspace, files: _Files, intent: QueryIntent, prior: Callable[[str, str | None], float]) -> ExactLists:
    out = ExactLists()
    total = max(1, files.index.total)
    chunks = ChunkLocator(ws, lambda path: prior(path, files.texts[path].chunk_kind))

    scores: dict[str, float] = {}
    spans: dict[str, int] = {}
    owners: dict[str, float] = {}
    for literal in intent.literals:
        needle = _utf8(literal)
        found = _occurrences(files.holding(needle, case=False, bounded=False), needle, MAX_LITERAL_FILES,
                             case=False, bounded=False)
        if not found:
            continue
        weight = _idf(total, len(found))
        _credit(scores, spans, chunks, found, weight)
        for path, lines in found.items():
            if files.texts[path].chunk_kind == "code":
                for name in _owner_names(files.texts[path], lines, literal):
                    owners[name] = max(owners.get(name, 0.0), OWNER_SHARE * weight)
    for name in _rarest(files, owners, MAX_OWNERS):
        found = _identifier_occurrences(files, name)
        if found:
            _credit(scores, spans, chunks, found, owners[name])
    out.literal = _ranked(scores, spans)

    scores, spans = {}, {}
    for name in intent.identifiers:
        found = _identifier_occurrences(files, name)
        definitions = [row for path, line in _definitions(ws, name) if files.indexed(path) is not None
                       and (row := chunks.at(path, line)) is not None]
        if found is None and not definitions:
            continue
        weight = _idf(total, len(found) if found else len({r.path for r in definitions}))
        for row in definitions:
            scores[row.point_id] = scores.get(row.point_id, 0.0) + DEFINITION_BONUS * weight * chunks.prior(row.path)
            spans[row.point_id] = row.end_line - row.start_line
        _credit(scores, spans, chunks, found or {}, weight)
        if intent.names_definition:
            named = {(s.path, s.line) for s in _named_symbols(ws, name) if s.kind in DEFINITION_KINDS}
            out.definitions = list(dict.fromkeys(row.point_id for path, line in named if files.indexed(path) is not None
                                                 and (row := chunks.at(path, line)) is not None))
    out.identifier = _ranked(scores, spans)
    return out


def _identifier_occurrences(files: _Files, name: str) -> dict[str, list[int]] | None:
    needle = _utf8(name)
    return _occurrences(files.holding(needle, case=True, bounded=True, max_files=MAX_IDENTIFIER_FILES), needle,
                        MAX_IDENTIFIER_FILES, case=True, bounded=True)


def _credit(scores: dict[str, float], spans: dict[str, int], chunks: ChunkLocator, found: dict[str, list[int]],
            weight: float) -> None:
    """Add ``weight`` to every chunk holding one of the ``found`` lines (once per chunk)."""
    for path, lines in found.items():
        for row in {chunks.at(path, ln) for ln in lines} - {None}:
            scores[row.point_id] = scores.get(row.point_id, 0.0) + weight * chunks.prior(path)
            spans[row.point_id] = row.end_line - row.start_line


def _definitions(ws: Workspace, name: str) -> list[tuple[str, int]]:
    """(path, line) of the definitions ``name`` means, from the symbol graph: ``Type.method`` the
    method of that type; when the type has no such member (``comparer.structural``: a key of an
    object), the qualifier's own definition, which holds it."""
    from ..intel.build import graph_store

    qualifier, _ = _split_qualified(name)
    found = _named_symbols(ws, name)
    if not found and qualifier is not None:
        found = graph_store(ws).symbols_named(qualifier)
    return [(s.path, s.line) for s in found]


def _owner_names(f: IndexedText, lines: list[int], literal: str) -> set[str]:
    """Code-shaped names, outside strings, on the lines where ``literal`` sits inside a string (where
    a message is written down); a line that uses it as code (``rctx := ...``) defines no message."""
    pattern = re.compile(re.escape(literal), re.I)
    names: set[str] = set()
    for number in set(lines):
        text = f.line(number)
        strings = [m.span() for m in _STRING.finditer(text)]
        if any(start < m.start() and m.end() < end for m in pattern.finditer(text) for start, end in strings):
            names.update(_split_qualified(word)[1] for word in identifiers_in(_STRING.sub(" ", text)))
    return names


def _rarest(files: _Files, names: dict[str, float], limit: int) -> list[str]:
    """The ``limit`` names held by the fewest files (ties by name)."""
    return sorted(names, key=lambda name: (files.holders(name), name))[:limit]


def _ranked(scores: dict[str, float], spans: dict[str, int]) -> list[str]:
    """Best first; among equals the shorter chunk, where the match is a larger share of the text."""
    return sorted(scores, key=lambda pid: (-scores[pid], spans[pid], pid))[:LIST_LIMIT]
