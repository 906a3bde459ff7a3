"""The owner builds what a workspace's first search would, ahead of it (``retrieval/warm.py``).

On the monorepo the first search after the owner started paid ~0.9 s for the query vocabulary and
the term index's sorted words, which every later search reuses. After ``prepare_for_queries`` a
search must find both built for the index generation now, and build neither again; a workspace
whose graph cannot be read must not make the warm-up raise.
"""
from __future__ import annotations

import logging
import shutil
from pathlib import Path

import click
import pytest

from probe_core import Workspace, index_workspace, search
from probe_core.intel.build import graph_store
from probe_core.retrieval import expansion
from probe_core.retrieval import term_index as ti
from probe_core.retrieval.warm import prepare_for_queries


@pytest.fixture()
def ws(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    shutil.copytree(Path(click.__file__).parent, root / "click", ignore=shutil.ignore_patterns("__pycache__"))
    workspace = Workspace.open(root)
    index_workspace(workspace, dense=False)
    monkeypatch.setattr(ti, "TAIL_SCAN_BYTES", 2000)  # click's vocabulary (~36 KB) is large enough to sort
    yield workspace
    workspace.close()


def test_the_first_search_finds_the_vocabularies_built(ws, monkeypatch):
    index = ti.term_index(ws)
    assert index.vocabulary._sorted.n == 0
    prepare_for_queries(ws)
    words = graph_store(ws).terms_after(0)
    assert len(words) > 3000
    assert index.vocabulary._sorted.n == len(words)  # every word sorted
    assert expansion.vocabulary(ws)._state[0] == ws.manifest.generation

    built = index.vocabulary._sorted

    def rebuilt(*_args, **_kwargs):
        raise AssertionError("the first search built a vocabulary again")

    monkeypatch.setattr(expansion.Vocabulary, "_build", rebuilt)
    monkeypatch.setattr(ti, "_ordered", rebuilt)
    for query in ('"Usage: "', "get_current_context", "how are command line options parsed"):
        assert search(ws, query, top_k=5).results
    assert index.vocabulary._sorted is built


def test_an_unreadable_graph_leaves_the_warm_up_to_the_first_search(ws, monkeypatch, caplog):
    def broken(_ws):
        raise OSError("graph unreadable")

    monkeypatch.setattr("probe_core.intel.build.graph_store", broken)
    caplog.set_level(logging.INFO, logger="probe.search")
    prepare_for_queries(ws)  # logs, does not raise
    assert "query vocabulary warm-up failed: graph unreadable" in caplog.text
    assert ti.term_index(ws).vocabulary._sorted.n == 0
