"""Fusing the project with reference libraries, measured on a small labelled set (fusion_set.py)
with the real engines: each query has one right answer, in the code or in a library."""
from __future__ import annotations

import pytest

from probe_core import Workspace, index_workspace
from probe_core.engine.direct import DirectEngine
from probe_core.libraries import LibraryPool, add_library, evidence_fuse, index_library, rrf_fuse, search_sources

from .fusion_set import LIBRARIES, PROJECT, QUERIES


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """(project engine, library pool) over the labelled set; the data dir is this module's own."""
    base = tmp_path_factory.mktemp("fusion-set")
    mp = pytest.MonkeyPatch()
    mp.setenv("PROBE_DATA_DIR", str(base / "data"))
    root = base / "project"
    for rel, text in PROJECT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    ws = Workspace.open(root)
    index_workspace(ws)
    ws.close()
    for name, docs in LIBRARIES.items():
        folder = base / name
        folder.mkdir()
        for rel, text in docs.items():
            (folder / rel).write_text(text)
        add_library(folder, name)
        index_library(name)
    project = DirectEngine(root)
    pool = LibraryPool(background=False)
    yield project, pool, base / "data"
    pool.close()
    project.close()
    mp.undo()


@pytest.fixture
def labelled(sources, monkeypatch):
    """The module's sources, with this test seeing their registry (conftest gives each test its own)."""
    project, pool, data = sources
    monkeypatch.setenv("PROBE_DATA_DIR", str(data))
    return project, pool


def _mrr(rankings: list[list[str]]) -> tuple[float, int]:
    reciprocal, first = 0.0, 0
    for (_, want), paths in zip(QUERIES, rankings):
        if want in paths[:10]:
            rank = paths.index(want) + 1
            reciprocal += 1 / rank
            first += rank == 1
    return reciprocal / len(QUERIES), first


def test_fusing_by_similarity_beats_fusing_by_rank(labelled):
    project, pool = labelled
    by_rank, by_evidence = [], []
    for query, _ in QUERIES:
        lists = [project.search(query, top_k=12)["results"]]
        engines = pool.engines(None)
        assert sorted(engines) == sorted(LIBRARIES)
        lists += [engine.search(query, top_k=12)["results"] for _, engine in sorted(engines.items())]
        by_rank.append([r["path"] for r in rrf_fuse(lists, top_k=12)])
        by_evidence.append([r["path"] for r in evidence_fuse(lists, top_k=12)])
    rank_mrr, rank_first = _mrr(by_rank)
    mrr, first = _mrr(by_evidence)
    print(f"\nfusion on {len(QUERIES)} labelled queries: by rank MRR@10 {rank_mrr:.3f} ({rank_first} first), "
          f"by similarity MRR@10 {mrr:.3f} ({first} first)")
    assert mrr >= 0.9 and first >= len(QUERIES) - 2
    assert mrr > rank_mrr + 0.15  # by rank, each source's #1 outranks the other sources' better answers


def test_search_sources_merges_by_similarity(labelled):
    """The real path (`probe search --include-libraries`, MCP include_libraries) uses it."""
    project, pool = labelled
    answers = [search_sources(project, pool, query, top_k=10, include_libraries=True) for query, _ in QUERIES]
    mrr, first = _mrr([[r["path"] for r in a["results"]] for a in answers])
    assert mrr >= 0.9 and first >= len(QUERIES) - 2
    for a in answers:
        assert "merged by rank" not in (a.get("message") or "")
        scores = [r["score"] for r in a["results"]]
        assert scores == sorted(scores, reverse=True)
        for source in {r["library_name"] for r in a["results"]}:  # each source's own order is kept
            ranks = [r["signals"]["source_rank"] for r in a["results"] if r["library_name"] == source]
            assert ranks == sorted(ranks)


def test_incomparable_sources_fall_back_to_rank_and_say_so():
    class Source:
        def __init__(self, model, results, coverage=1.0):
            self.answer = {"results": results, "status": "healthy", "embedding_model_id": model,
                           "dense_coverage": coverage}

        def search(self, query, **kwargs):
            return {**self.answer, "results": [dict(r) for r in self.answer["results"]]}

    class Pool:
        def __init__(self, engines):
            self._engines = engines

        def engines(self, names=None):
            return self._engines

    def hit(path, sim):
        return {"path": path, "start_line": 1, "end_line": 1, "snippet": path, "score": 0.5,
                "signals": {"dense_score": sim}}

    project = Source("minilm", [hit("p1", 0.2), hit("p2", 0.1)])
    same = search_sources(project, Pool({"docs": Source("minilm", [hit("d1", 0.6)])}), "q", include_libraries=True)
    assert [r["path"] for r in same["results"]] == ["d1", "p1", "p2"] and "message" not in same
    other = search_sources(project, Pool({"docs": Source("qwen", [hit("d1", 0.6)])}), "q", include_libraries=True)
    assert [r["path"] for r in other["results"]] == ["p1", "d1", "p2"]
    assert "merged by rank, not by similarity: the sources are embedded by different models" in other["message"]
    # a result with no similarity (lexical-only) keeps its place in its source
    mixed = evidence_fuse([[hit("p1", 0.5), hit("p2", None), hit("p3", 0.45)], [hit("d1", 0.48)]], top_k=4)
    assert [r["path"] for r in mixed] == ["p1", "p2", "d1", "p3"]
    # a source that answered lexically (its embedder failed): no similarities at all, so by rank
    lexical = Source("minilm", [hit("p1", None), hit("p2", None)])
    fused = search_sources(lexical, Pool({"docs": Source("minilm", [hit("d1", 0.6)])}), "q", include_libraries=True)
    assert [r["path"] for r in fused["results"]] == ["p1", "d1", "p2"]
    assert "a source answered without semantic similarities" in fused["message"]
