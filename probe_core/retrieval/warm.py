"""What a workspace's first search would build, built ahead of it.

Every search reuses what the first one builds: the embedding model's session (~0.5 s to load), the
query vocabulary that bridges a question's words to the code's (``expansion.py``: every symbol name
and prose word) and the term index's words with their sorted orders (``term_index.py``: what the
exact-match lists look needles up in). On the monorepo (400k words) the vocabularies took 0.25,
0.47 and 0.15 s, so the first search after the owner started paid ~0.9 s more than the next. The
owner builds all of it once, after its first scan (``engine/service.py``); a search still builds
whatever is missing, as before.
"""
from __future__ import annotations

import logging

from ..workspace import Workspace
from .expansion import vocabulary
from .term_index import term_index

log = logging.getLogger("probe.search")


def prepare_for_queries(ws: Workspace) -> None:
    """Load the embedding model, then build the query vocabulary and the term index for the index
    generation now. A step that fails is logged and left to the first search, which says why."""
    from ..intel.build import graph_store

    try:
        ws.embedder.embed_query("warm up")
    except Exception as exc:  # noqa: BLE001 - an unreachable embedder shows up where it matters (fill, search)
        log.info("embedder warm-up failed: %s", exc)
    try:
        store = graph_store(ws)
        vocabulary(ws).current(ws)
        index = term_index(ws)
        with index.lock:
            index.refresh(ws, store)
            index.vocabulary.prepare()
    except Exception as exc:  # noqa: BLE001 - a damaged graph is the search's to report
        log.info("query vocabulary warm-up failed: %s", exc)
