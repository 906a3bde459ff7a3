"""A query that is one name of a definition asks for that code (``sympify`` on the monorepo
returned its callers, the definition at rank 10; ``dump_cookie`` on werkzeug a caller, then the
definition): a plain word joins the identifiers, and the definitions of the name lead the answer. A
word that names many definitions, or only variables, is left as it was (real index, real
tree-sitter graph, lexical search)."""
from __future__ import annotations

import pytest

from probe_core import Workspace, index_workspace, search
from probe_core.retrieval.literals import MAX_IDENTIFIER_FILES, MAX_NAMED_DEFINITIONS, with_named_definition
from probe_core.retrieval.query_intent import parse_query

DOC = "\n".join(f"    Convert the input, step {i}: strings are parsed, numbers kept." for i in range(12))
TREE = {
    "pkg/core/convert.py": f'def sympify(a, strict=False):\n    """\n{DOC}\n    """\n    return a\n',
    **{f"pkg/physics/mod_{i}.py": "from pkg.core.convert import sympify\n\n\n"
       f"def use_{i}(x, y, z):\n    x = sympify(x)\n    y = sympify(y)\n    z = sympify(z)\n    return sympify(x + y + z)\n"
       for i in range(MAX_IDENTIFIER_FILES + 2)},  # used everywhere, as in sympy: its definition is the answer
    "pkg/render.py": "".join(f"class R{i}:\n    def render(self):\n        return {i}\n\n\n"
                             for i in range(MAX_NAMED_DEFINITIONS + 1)),
    "pkg/settings.py": "cache = {}\n",
    "pkg/pages.py": "".join(f"class P{i}:\n    def render_page(self):\n        return {i}\n\n\n"
                            for i in range(MAX_NAMED_DEFINITIONS + 1)),
    "pkg/http.py": f'def dump_cookie(key, value="", max_age=None):\n    """\n{DOC}\n    """\n    return key + value\n',
    # its callers name it more often, in fewer words: BM25 ranks them first
    **{f"pkg/response_{i}.py": "from pkg.http import dump_cookie\n\n\n"
       f"def set_cookie_{i}(headers, key, value):\n    headers.add(dump_cookie(key, value))\n"
       "    headers.add(dump_cookie(key + '_sig', value))\n    return dump_cookie\n" for i in range(3)},
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("named")
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    w = Workspace.open(root)
    index_workspace(w, dense=False)
    yield w
    w.close()


def test_a_one_word_query_naming_a_definition_answers_with_it_first(ws):
    top = search(ws, "sympify", top_k=5).results[0]
    assert (top.path, top.start_line) == ("pkg/core/convert.py", 1)


def test_a_snake_case_name_answers_with_its_definition_first(ws):
    resp = search(ws, "dump_cookie", top_k=5)
    top = resp.results[0]
    assert (top.path, top.start_line) == ("pkg/http.py", 1), [(r.path, r.signals) for r in resp.results]
    assert resp.results[1].path.startswith("pkg/response_")  # the ranking decides the rest
    assert with_named_definition(ws, "dump_cookie()", parse_query("dump_cookie()")).names_definition


@pytest.mark.parametrize("query", ["render", "cache", "sympify the input", "undefined_word", "render_page",
                                   "where is dump_cookie"])
def test_other_words_are_left_as_they_were(ws, query):
    intent = parse_query(query)
    assert with_named_definition(ws, query, intent) == intent


def test_the_named_word_becomes_the_identifier(ws):
    assert with_named_definition(ws, " sympify ", parse_query(" sympify ")).identifiers == ("sympify",)
