"""The query vocabulary after an edit: rebuilt off the search path, never cached stale (real index,
real tree-sitter graph; lexical only, which is all these checks need)."""
from __future__ import annotations

from probe_core import Workspace, index_workspace, search
from probe_core.retrieval.expansion import query_expansion, vocabulary

QUERY = "allocating"
NEW_FILE = "src/pages.py"


def _tree(root):
    (root / "src").mkdir()
    (root / "src/router.py").write_text('def route_params(request):\n    """The matched route\'s keys."""\n'
                                        '    return request.keys\n')


def _bm25_rank(ws, path):
    res = search(ws, QUERY, top_k=10).results
    return next((r.signals["bm25_rank"] for r in res if r.path == path), None)


def test_an_edit_is_answered_with_the_previous_vocabulary_while_the_new_one_is_read(tmp_path):
    _tree(tmp_path)
    ws = Workspace.open(tmp_path)
    try:
        index_workspace(ws, dense=False)
        words, fresh = query_expansion(ws, QUERY)
        assert fresh and "alloc" not in words
        (tmp_path / NEW_FILE).write_text("def alloc_pages(count):\n    return [bytearray(4096) for _ in range(count)]\n")
        index_workspace(ws, dense=False)  # the index generation moves
        words, fresh = query_expansion(ws, QUERY)  # does not read the graph's names on the search path
        assert not fresh and "alloc" not in words
        vocabulary(ws).wait()
        words, fresh = query_expansion(ws, QUERY)
        assert fresh and "alloc" in words
    finally:
        ws.close()


def test_an_answer_from_the_previous_vocabulary_is_not_cached(tmp_path):
    _tree(tmp_path)
    ws = Workspace.open(tmp_path)
    try:
        index_workspace(ws, dense=False)
        search(ws, "route", top_k=3)  # the vocabulary is built
        (tmp_path / NEW_FILE).write_text("def alloc_pages(count):\n    return [bytearray(4096) for _ in range(count)]\n")
        index_workspace(ws, dense=False)
        assert _bm25_rank(ws, NEW_FILE) is None  # "alloc" is not a bridged word yet
        vocabulary(ws).wait()
        assert _bm25_rank(ws, NEW_FILE) == 1  # the same query again: the new vocabulary, not the cached answer
    finally:
        ws.close()


def test_prose_words_are_the_texts_plain_lowercase_words(tmp_path):
    """SQLite picks the prose words (3 to 24 ASCII lowercase letters): the same list as testing every
    posted word in Python, with the edges of the rule in the text."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src/notes.py").write_text(
        '"""Values, safely stored: the café keeps naïve values, ab, abc, CamelCase, UPPER, snake_case, x86, '
        f'{"a" * 24} {"b" * 25} ünïcode lowercase_words ascii."""\nVALUE = 1\n')
    ws = Workspace.open(tmp_path)
    try:
        index_workspace(ws, dense=False)
        from probe_core.intel.build import graph_store

        posted = [t for (t,) in graph_store(ws)._rows("SELECT term FROM graph_terms")]
        expected = sorted(t.decode() for t in posted if 3 <= len(t) <= 24 and t.isalpha() and t.islower())
        words, _ = vocabulary(ws).current(ws)
        assert words.prose == expected
        assert {"safely", "stored", "abc", "ascii", "a" * 24} <= set(words.prose)
        assert not {"ab", "b" * 25, "upper", "x86", "café"} & set(words.prose)
    finally:
        ws.close()
