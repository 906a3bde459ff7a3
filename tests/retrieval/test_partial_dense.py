"""While dense vectors fill, the dense list counts only for what it can see (real Qdrant Edge, real
ONNX embedder): chunks embedded first must not outrank the lexical winner for being embedded."""
from __future__ import annotations

import dataclasses

from probe_core import Workspace, index_workspace, search
from probe_core.indexing.indexer import fill_dense
from probe_core.retrieval.rank_fusion import dense_term, fuse
from probe_core.retrieval.ranking import DEFAULT_RANKING
from probe_core.storage.protocol import StoreHit

from ..conftest import write_tree

FILES = {
    "src/http/cookies.py": (
        "def parse_cookie_header(header):\n"
        '    """Parse a Cookie request header into a dict of names to values."""\n'
        "    out = {}\n"
        "    for part in header.split(';'):\n"
        "        name, _, value = part.strip().partition('=')\n"
        "        out[name] = value\n"
        "    return out\n"),
    "src/http/status.py": "def reason(code):\n    return {200: 'OK', 404: 'Not Found'}.get(code, '')\n",
    "src/store/cache.py": "class Cache:\n    def get(self, key):\n        return self.data.get(key)\n",
    ".github/workflows/ci.yaml": (
        "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: pip install -e .\n"
        "      - run: pytest -k 'cookie or header'\n"),
    "docs/changelog.md": "# Changelog\n\n## 1.2\n\n- Faster start-up.\n- A new header in the release notes.\n",
}


def _half_embedded(tmp_path) -> Workspace:
    """Only the CI workflow and the changelog have vectors: what a fill that started with the wrong
    files leaves behind."""
    ws = Workspace.open(write_tree(tmp_path / "web", FILES))
    index_workspace(ws, dense=False)
    with ws.manifest.transaction() as db:
        db.execute("UPDATE pending_dense SET fill_order = CASE WHEN point_id IN (SELECT point_id FROM chunks c"
                   " JOIN paths p ON p.id = c.file WHERE p.path IN ('.github/workflows/ci.yaml', 'docs/changelog.md'))"
                   " THEN 0 ELSE 1 END")
    wrong = sum(1 for _, p, _ in ws.manifest.pending_dense(1000) if not p.startswith("src/"))
    fill_dense(ws, batch=wrong, should_stop=lambda: ws.manifest.counts()["chunks_dense"] >= wrong)
    embedded = {r[0] for r in ws.manifest._db.execute("SELECT p.path FROM chunks c JOIN paths p ON p.id = c.file WHERE c.has_dense=1")}
    assert embedded == {".github/workflows/ci.yaml", "docs/changelog.md"}
    return ws


def test_embedded_but_irrelevant_chunks_do_not_outrank_the_bm25_winner(tmp_path):
    ws = _half_embedded(tmp_path)
    resp = search(ws, "parse cookie header", top_k=5)
    assert 0 < resp.dense_coverage < 1 and resp.status == "uncertain"
    assert resp.results[0].path == "src/http/cookies.py", [r.path for r in resp.results]
    top = resp.results[0].signals
    assert top["dense_rank"] is None and top["bm25_rank"] == 1  # unembedded, and not penalised for it
    ws.close()


def _hit(pid, dense=None, bm25=None):
    return StoreHit(id=pid, score=0.0, payload={}, dense_rank=dense, bm25_rank=bm25)


def test_a_candidate_without_a_vector_takes_its_best_lexical_rank_as_its_dense_rank():
    k = DEFAULT_RANKING.rrf_k
    assert dense_term(_hit("a", dense=3, bm25=1), True, DEFAULT_RANKING) == 1 / (k + 2)
    assert dense_term(_hit("a", dense=None, bm25=1), False, DEFAULT_RANKING) == 1 / k
    assert dense_term(_hit("a", dense=None, bm25=None), False, DEFAULT_RANKING) == 0.0
    named = _hit("a", dense=None, bm25=69)
    named.extra_ranks["identifier"] = 1
    assert dense_term(named, False, DEFAULT_RANKING) == 1 / k


def test_no_lexical_list_counts_twice_for_candidates_without_a_vector():
    """The monorepo's ``sympify`` at 4.9 % coverage, in ranks: its definition (identifier rank 1,
    BM25 rank 69) leads the lexical fusion and must lead when no candidate has a vector (the BM25
    stand-in counted BM25 twice: BM25's first 60 outran it)."""
    hits = [_hit(f"u{i}", bm25=i) for i in range(1, 80) if i != 69] + [_hit("def", bm25=69)]
    extra = {"identifier": (["def"], 1.0), "literal": ([], 1.0)}
    lexical = fuse([dataclasses.replace(h, extra_ranks={}) for h in hits], extra, DEFAULT_RANKING, lambda ids: {})
    partial = fuse(hits, extra, DEFAULT_RANKING, lambda ids: {}, coverage=0.05, without_vector=lambda ids: set(ids))
    assert lexical[0].id == "def" and [h.id for h in partial][:5] == [h.id for h in lexical][:5]


def test_full_coverage_fuses_as_before_and_asks_nothing():
    def never(ids):
        raise AssertionError("coverage 1.0 must not look vectors up")

    hits = [_hit("a", dense=1, bm25=None), _hit("b", dense=None, bm25=1), _hit("c", dense=2, bm25=2)]
    fused = fuse(hits, {}, DEFAULT_RANKING, lambda ids: {}, coverage=1.0, without_vector=never)
    assert [h.id for h in fused] == ["c", "a", "b"]


DOC = "\n".join(f"    Convert the input, step {i}: strings are parsed, numbers kept." for i in range(12))
USES = 64  # BM25 ranks every use above the definition (65th here, 69th in sympy); too many files to list
NAMED = {
    "pkg/core/convert.py": f'def to_expr(a, strict=False):\n    """to_expr:\n{DOC}\n    """\n    return a\n',
    **{f"pkg/physics/mod_{i}.py": f"def use_{i}(x, y, z):\n    x = to_expr(x)\n    y = to_expr(y)\n    z = to_expr(z)\n    return to_expr(x + y + z)\n"
       for i in range(USES)},
    "docs/guide.md": "# Guide\n\nInstall the package, then read the tutorial on plotting.\n",
    "docs/news.md": "# News\n\nVersion 2 draws faster plots.\n",
}


def test_a_definition_found_lexically_keeps_its_place_at_partial_coverage(tmp_path):
    """The monorepo's ``sympify`` at 4.9 % coverage: its definition (identifier rank 1, BM25 rank
    69) led the lexical answer and fell to 3 once a few unrelated chunks had vectors, behind uses
    that only BM25 ranks higher (none of them embedded). The query is more than the name, so the
    definition leads by the fusion alone (a query of the name alone puts it first whatever the
    fusion: ``test_named_definition.py``)."""
    ws = Workspace.open(write_tree(tmp_path / "mono", NAMED))
    index_workspace(ws, dense=False)
    lexical = search(ws, "where is to_expr", top_k=5).results[0]
    assert (lexical.path, lexical.start_line) == ("pkg/core/convert.py", 1)
    with ws.manifest.transaction() as db:  # the fill embedded the docs first: a sample that knows nothing of it
        db.execute("UPDATE pending_dense SET fill_order = CASE WHEN point_id IN (SELECT point_id FROM chunks c"
                   " JOIN paths p ON p.id = c.file WHERE p.path LIKE 'docs/%') THEN 0 ELSE 1 END")
    fill_dense(ws, batch=2, should_stop=lambda: ws.manifest.counts()["chunks_dense"] >= 2)
    resp = search(ws, "where is to_expr", top_k=5)
    assert 0 < resp.dense_coverage < 0.05
    top = resp.results[0]
    assert (top.path, top.start_line) == ("pkg/core/convert.py", 1), [(r.path, r.signals) for r in resp.results]
    assert top.signals["dense_rank"] is None and top.signals["identifier_rank"] == 1
    assert all(r.signals["bm25_rank"] for r in resp.results[1:])  # BM25 ranks the uses, not the definition
    ws.close()
