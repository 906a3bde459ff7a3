"""What the state of an index does to a search answer, decided in one place for every search (a
project's ``search`` and a library's ``library_search``):

* the embedder is down (or failing): the answer is lexical only, ``degraded``, and says so;
* the index is empty, or its dense vectors are still filling: the answer is ``uncertain`` and its
  first note says how far along it is.

Only the words differ by collection (``Wording``): a project's notes are plain, a library's name
the library (its answers are fused with others'), and a library stays ``uncertain`` until every
chunk has its vector.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import BackendUnavailable, EmbeddingError

if TYPE_CHECKING:
    from ..workspace import Workspace

DENSE_NEARLY_DONE = 0.99  # from here the few chunks left to embed change no answer worth a warning
EMPTY_INDEX = "the index is empty"
EMPTY_INDEX_ADVICE = "run `probe index` (or wait for the first scan)"


def coverage_note(coverage: float) -> str:
    """What a partly embedded index means for an answer, in proportion to how partly (the percentage
    rounded down: 99.6% is not "100%")."""
    shown = f"dense vectors cover {math.floor(coverage * 100)}% of chunks"
    if coverage < 0.5:
        return f"{shown}; results lean on lexical (BM25) matching until embedding finishes"
    if coverage < DENSE_NEARLY_DONE:
        return f"{shown}; the others are found by lexical (BM25) matching until embedding finishes"
    return f"{shown}; the last few are being embedded"


@dataclass(frozen=True, slots=True)
class Wording:
    """How one collection's answers word their notes (the default: a project's)."""

    prefix: str = ""  # before the embedder and coverage notes
    lexical_only: str = "lexical (BM25) results only"
    empty: str = f"{EMPTY_INDEX}: {EMPTY_INDEX_ADVICE}"
    partial: Callable[[float], str] = coverage_note
    uncertain_below: float = DENSE_NEARLY_DONE  # coverage under which a healthy answer is uncertain


PROJECT = Wording()


def query_vector(ws: "Workspace", counts: dict, text: str, instruction: str | None,
                 words: Wording = PROJECT) -> tuple[list[float] | None, str | None]:
    """The query's dense vector, None when no chunk has one yet. An embedder that fails gives None
    and the note to answer with: lexical results only, the answer ``degraded``, retried next time."""
    if not counts["chunks_dense"]:
        return None, None
    try:
        return ws.embedder.embed_query(text, instruction), None
    except (BackendUnavailable, EmbeddingError) as exc:
        return None, f"{words.prefix}embedder unavailable ({exc}); {words.lexical_only}"


def index_health(counts: dict, coverage: float, status: str, words: Wording = PROJECT) -> tuple[str, str | None]:
    """The answer's status given its index's state, and the note that goes first (None: none)."""
    if counts["chunks"] == 0:
        return "uncertain", words.empty
    if coverage < 1.0 and status == "healthy":
        return ("uncertain" if coverage < words.uncertain_below else status), words.prefix + words.partial(coverage)
    return status, None
