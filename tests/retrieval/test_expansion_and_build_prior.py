"""The build/CI prior and query expansion from the repository's vocabulary, on a real index (real
embedder, Qdrant Edge, tree-sitter graph). Each test also runs the query with the signal off."""
from __future__ import annotations

import pytest

from probe_core import Workspace, index_workspace, search
from probe_core.retrieval.expansion import bridged_words, stem
from probe_core.retrieval.priors import is_build_path
from probe_core.retrieval.query_intent import parse_query
from probe_core.retrieval.ranking import DEFAULT_RANKING

ROUTER = {
    "src/routing/params.py": '''"""Keys taken from the matched URL."""


class RouteParams:
    """The keys and values a matched pattern yields, in order."""

    def __init__(self):
        self.keys, self.values = [], []

    def add(self, key, value):
        self.keys.append(key)
        self.values.append(value)


def url_param(request, key):
    """The value of ``key`` in the request's matched route, or an empty string."""
    rp = request.route_params
    return rp.values[rp.keys.index(key)] if key in rp.keys else ""
''',
    "src/routing/tree.py": '''"""The radix tree of route patterns."""
from .params import RouteParams


class Node:
    """One edge of the radix tree: a static prefix, or a {name} placeholder."""

    def __init__(self, prefix):
        self.prefix, self.children = prefix, []

    def find(self, path, rp: RouteParams):
        for child in self.children:
            if child.prefix.startswith("{"):
                value, _, rest = path.partition("/")
                rp.add(child.prefix.strip("{}"), value)
                return child.find(rest, rp)
            if path.startswith(child.prefix):
                return child.find(path[len(child.prefix):], rp)
        return self
''',
    ".github/workflows/ci.yml": '''name: routing parameters captured from the request path
on: [push, pull_request]
jobs:
  routing-parameters:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: check how routing parameters are captured from the request path
        run: python -m pytest -k "routing and parameters and captured"
''',
    "Makefile": '''# check how the routing parameters are captured from the request path
test-routing-parameters:
\tpython -m pytest -k "routing parameters captured"
''',
}

QUESTION = "how are routing parameters captured from the request path"


@pytest.fixture(scope="module")
def router(tmp_path_factory):
    root = tmp_path_factory.mktemp("router")
    for rel, text in ROUTER.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    ws = Workspace.open(root)
    index_workspace(ws)
    yield ws
    ws.close()


def _paths(ws, query, **ranking):
    return [r.path for r in search(ws, query, top_k=5, ranking=DEFAULT_RANKING.replace(**ranking)).results]


@pytest.mark.parametrize("path, build", [
    (".github/workflows/ci.yml", True), ("Makefile", True), ("requirements/dev.in", True), ("tox.ini", True),
    ("docker/Dockerfile.dev", True), ("noxfile.py", True), ("src/routing/tree.py", False),
    ("src/build/compile.py", False), ("pkg/make.go", False),
])
def test_build_paths(path, build):
    assert is_build_path(path) is build


@pytest.mark.parametrize("query, asks", [
    (QUESTION, False), ("how are ETags generated and compared for conditional requests", False),
    ("Could not build url for endpoint", False), ("release the lock when the request ends", False),
    ("which CI workflow runs the routing tests", True), ("how do I install it", True),
    ("what are the cargo features", True), ("lint configuration", True),
])
def test_what_asks_for_build_files(query, asks):
    assert parse_query(query).asks_build is asks


def test_ci_workflows_and_makefiles_rank_below_the_code_they_test(router):
    plain = _paths(router, QUESTION, build_penalty=1.0, vocab_weight=0)
    assert plain[0] in (".github/workflows/ci.yml", "Makefile")  # they say the question's words
    top = _paths(router, QUESTION)
    assert top[0].startswith("src/routing/")
    assert {".github/workflows/ci.yml", "Makefile"} <= set(top)  # demoted, not dropped


def test_a_question_about_ci_keeps_the_workflow_first(router):
    assert _paths(router, "which CI workflow checks the routing parameters")[0] == ".github/workflows/ci.yml"


def test_stems_meet_across_word_forms():
    assert stem("captured") == stem("captures") == stem("capture")
    assert stem("routing") == stem("route") == stem("routes")
    assert stem("parameters") == stem("parameter") != stem("param")


def test_query_words_meet_the_names_that_abbreviate_or_inflect_them(router):
    words = bridged_words(router, "how are parameters captured while routing a path")
    assert "param" in words and "params" in words  # url_param, RouteParams: an abbreviation
    assert "route" in words  # RouteParams: another form of "routing"
    assert "path" not in words and "routing" not in words  # the query's own words are not added again


def test_bridged_words_lift_the_code_that_spells_them_differently(router, monkeypatch):
    from probe_core.retrieval import expansion

    monkeypatch.setattr(expansion, "PROSE_FALLBACK", False)  # the names' forms alone (prose: the last test)
    query = "where are parameters of a routing match kept"
    chunk_rank = {}
    for weight in (0.0, 1.0):
        res = search(router, query, top_k=10, ranking=DEFAULT_RANKING.replace(vocab_weight=weight)).results
        chunk_rank[weight] = next((r.signals["bm25_rank"] for r in res if r.path == "src/routing/params.py"), None)
    assert chunk_rank[1.0] == 1
    assert chunk_rank[0.0] is None or chunk_rank[0.0] > 1


def test_the_embedder_reads_the_bridged_words_after_the_query(router):
    seen: list[str] = []
    real = router.embedder

    class Recording:
        model_id, dimensions = real.model_id, real.dimensions

        def embed_query(self, text, instruction=None):
            seen.append(text)
            return real.embed_query(text, instruction)

    query = "which parameters does routing record"
    router.set_embedder(Recording())
    try:
        search(router, query, top_k=3)
        search(router, query, top_k=3, ranking=DEFAULT_RANKING.replace(vocab_dense=0))
        search(router, query, top_k=3, ranking=DEFAULT_RANKING.replace(vocab_weight=0))
    finally:
        router.set_embedder(real)
    assert seen == [" ".join([query, *bridged_words(router, query)]), query, query]
    assert "param" in seen[0].split()


UPLOADS = '''def secure_filename(name):
    """Return a version of the name that can safely be stored on a regular disk."""
    return "".join(ch for ch in name if ch.isalnum() or ch in "._-")


def filenames_of(files):
    """The uploaded files' names."""
    return [f.name for f in files]
'''


def test_a_word_no_name_spells_meets_the_texts_own_forms_of_it(tmp_path):
    (tmp_path / "uploads.py").write_text(UPLOADS)
    ws = Workspace.open(tmp_path)
    index_workspace(ws)
    try:
        # "safe", "store": no name holds them; the docstring does, as "safely" and "stored"
        assert {"safely", "stored"} <= set(bridged_words(ws, "make the name of an upload safe to store"))
        # a query that names code is left to the identifier lists: no prose forms
        assert "safely" not in bridged_words(ws, "make secure_filename safe to store")
        # a word a name already bridges takes the name's form only ("filenames" -> filename)
        words = bridged_words(ws, "list the filenames")
        assert "filename" in words and "files" not in words
        hit = search(ws, "make the name of an upload safe to store", top_k=1).results[0]
        assert hit.symbol == "secure_filename"
    finally:
        ws.close()
