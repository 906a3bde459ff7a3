"""Query expansion from the repository's own vocabulary.

A question about behaviour often does not spell the words the code is written in. BM25 matches
whole tokens, unstemmed, so "parameters" misses ``URLParam`` and ``RouteParams``, "automatically"
misses ``makeAutoObservable``, "allocating" misses ``alloc``; and the embedded MiniLM, which was
not trained on code, does not bridge them either. The names the symbol graph holds are the
repository's vocabulary: their sub-words that share a stem with a query word, or whose stem a
query word starts with (an abbreviation), are "bridged words". They join the BM25 query (at
``RankingSettings.vocab_weight``) and are appended to the text the embedder reads
(``vocab_dense``), so both lists look for the code in its own words.

A query word no name bridges ("safe", "store", "sanitize") may still be written in another form in
the repository's prose: docstrings and comments say "safely stored". For a query in words only (no
identifier, no quoted literal: those are the exact lists' job), such a word bridges to the plain
lowercase words of the text with its stem, from the word postings kept with the graph.

The vocabulary is read from the graph once, at the first query; when the index generation moves
(every edit the watcher indexes) it is read again in a background thread while queries go on with
the previous one (reading every name costs ~90 ms on Django's 26k names, a large repository more),
and such an answer is not cached. A query costs a dictionary look-up per word. Measured, with
the variants that did not help (pseudo-relevance feedback, names from docstrings, the names of
uses), in ``docs/benchmarks.md``.
"""
from __future__ import annotations

import bisect
import logging
import re
import threading
from dataclasses import dataclass, field

from .. import sparse
from ..per_workspace import PerWorkspace
from ..workspace import Workspace
from .query_intent import parse_query

log = logging.getLogger("probe.search")

# -- the repository's vocabulary ------------------------------------------------------------------

_QUERY_WORD = re.compile(r"[A-Za-z]{3,}")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ied", "ies", "ed", "es", "s", "ally", "ly",
             "ment", "ity", "ion", "ive", "able", "ible", "al")
MIN_ABBREVIATION = 3
MAX_PER_WORD = 2  # bridged words a query word brings, shortest first: a common word's many forms drown the rest
_STOP = frozenset("the and for with that this from into what which when where does how are was were its their "
                  "there then than them they can could should would will each every other some any all not "
                  "but have has had being been only also just more most less very way ways use used using "
                  "back like get gets make makes".split())


def stem(word: str) -> str:
    """A light suffix stripper: "captured", "captures", "capture" → "captur"; "routing" → "rout"."""
    w = word.lower()
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[:-len(suffix)]
            break
    return w.rstrip("e") if len(w) > 4 else w


@dataclass(frozen=True, slots=True)
class Words:
    """A repository's vocabulary: the sub-words of its names by stem, and the plain lowercase words
    of its text (docstrings, comments, docs; from the word postings kept with the graph), sorted."""

    by_stem: dict[str, set[str]] = field(default_factory=dict)
    prose: list[str] = field(default_factory=list)

    def prose_forms(self, word_stem: str) -> set[str]:
        """The text's words with this stem (a stem is a prefix of every word it is the stem of)."""
        out: set[str] = set()
        for i in range(bisect.bisect_left(self.prose, word_stem), len(self.prose)):
            w = self.prose[i]
            if not w.startswith(word_stem):
                break
            if stem(w) == word_stem:
                out.add(w)
        return out


PROSE_FALLBACK = True  # benchmarks switch it off (--hack) to measure it
_PROSE_MAX = 24  # longer lowercase runs are hashes and encoded blobs, not words


class Vocabulary:
    """The repository's words (``Words``): built at the first query, then rebuilt off the search
    path when the index generation moves."""

    def __init__(self) -> None:
        self._state: tuple[int, Words] = (-1, Words())  # (generation, words), swapped whole
        self._lock = threading.Lock()
        self._rebuilding: threading.Thread | None = None

    def current(self, ws: Workspace) -> tuple[Words, bool]:
        """The words, and whether they are of the index generation now (else the previous
        generation's, while a background thread reads the new one)."""
        from ..intel.build import graph_store

        generation = ws.manifest.generation
        with self._lock:
            built, by_stem = self._state
            if built == -1:  # nothing to answer with yet: built here
                by_stem = self._build(graph_store(ws), generation)
            elif built != generation and (self._rebuilding is None or not self._rebuilding.is_alive()):
                self._rebuilding = threading.Thread(target=self._rebuild, args=(graph_store(ws), generation),
                                                    name="probe-vocabulary", daemon=True)
                self._rebuilding.start()
        return by_stem, built in (-1, generation)

    def wait(self) -> None:
        """Until a rebuild under way has finished (tests)."""
        thread = self._rebuilding
        if thread is not None:
            thread.join()

    def _rebuild(self, store, generation: int) -> None:
        try:
            self._build(store, generation)
        except Exception:  # noqa: BLE001 - the workspace closed, or its graph is damaged: the next query retries
            log.debug("rebuilding the query vocabulary failed", exc_info=True)

    def _build(self, store, generation: int) -> Words:
        names = store._rows("SELECT DISTINCT name FROM graph_symbols")
        words = {p.lower() for (name,) in names for p in _PARTS.findall(name) if len(p) >= MIN_ABBREVIATION}
        by_stem: dict[str, set[str]] = {}
        for w in words:
            by_stem.setdefault(stem(w), set()).add(w)
        # plain lowercase ASCII words, chosen by SQLite (a monorepo's 391k terms: 84 ms against 173 read
        # and tested here)
        prose = sorted(term for (term,) in store._rows(
            "SELECT CAST(term AS TEXT) FROM graph_terms WHERE length(term) BETWEEN ? AND ?"
            " AND CAST(term AS TEXT) NOT GLOB '*[^a-z]*'", (MIN_ABBREVIATION, _PROSE_MAX)))
        built = Words(by_stem, prose)
        self._state = (generation, built)
        return built


_vocabularies: PerWorkspace[Vocabulary] = PerWorkspace(lambda _ws: Vocabulary())


def vocabulary(ws: Workspace) -> Vocabulary:
    """The workspace's vocabulary (one per open workspace, dropped with it)."""
    return _vocabularies.get(ws)


def query_expansion(ws: Workspace, query: str) -> tuple[list[str], bool]:
    """``bridged_words`` and whether they come from the current index generation's vocabulary (an
    answer built from the previous one is not worth caching)."""
    words, fresh = vocabulary(ws).current(ws)
    by_stem = words.by_stem
    intent = parse_query(query)
    in_words_only = not (intent.identifiers or intent.literals)
    asked = {w.lower() for w in _QUERY_WORD.findall(query)}
    out: list[str] = []
    for w in sorted(asked - _STOP):
        found = set(by_stem.get(stem(w), ()))
        for n in range(MIN_ABBREVIATION + 1, len(w) - 1):  # names whose stem abbreviates the word
            found.update(by_stem.get(w[:n], ()))
        if PROSE_FALLBACK and in_words_only and not found - asked:  # no name says it: the text's own forms of the word
            found = words.prose_forms(stem(w))
        out.extend(sorted(found - asked, key=lambda x: (len(x), x))[:MAX_PER_WORD])
    return list(dict.fromkeys(out)), fresh


def bridged_words(ws: Workspace, query: str) -> list[str]:
    """Words of the repository's names that a query word means but does not spell: the same stem
    ("parameters" → ``param``, ``params``) or an abbreviation it starts with ("allocating" → ``alloc``);
    the shortest ``MAX_PER_WORD`` of them per query word."""
    return query_expansion(ws, query)[0]


def with_bridged_words(vec: sparse.SparseVec, words: list[str], weight: float) -> sparse.SparseVec:
    """The query's BM25 vector with the bridged ``words`` added at ``weight`` (its own tokens keep theirs)."""
    if not words or not weight:
        return vec
    values = dict(zip(vec.indices, vec.values))
    extra = sparse.embed_query(" ".join(words))
    for i, v in zip(extra.indices, extra.values):
        values.setdefault(i, weight * v)
    return sparse.SparseVec(list(values), list(values.values()))
