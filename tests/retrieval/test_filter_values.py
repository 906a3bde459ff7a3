"""Filter values that used to match nothing in silence: a language by another name, a broken glob."""
from __future__ import annotations

import pytest

from probe_core import Workspace, index_workspace, search
from probe_core.chunking.languages import LANGUAGES, normalize_language
from probe_core.engine.answers import search_answer
from probe_core.errors import ConfigError
from probe_core.retrieval.filter_values import check_glob, expand_braces


@pytest.mark.parametrize("typed,stored", [("Python", "python"), ("py", "python"), ("PY", "python"),
                                          ("golang", "go"), ("TS", "typescript"), ("C++", "cpp"), ("c#", "csharp"),
                                          ("yml", "yaml"), ("md", "markdown"), ("sh", "shell"), ("pdf", "pdf")])
def test_language_names_by_case_and_alias(typed, stored):
    assert normalize_language(typed) == stored


def test_an_unknown_language_names_the_valid_ones():
    with pytest.raises(ConfigError) as caught:
        normalize_language("pyhton")
    msg = str(caught.value)
    assert "did you mean 'python'" in msg and all(lang in msg for lang in ("go", "rust", "typescript"))
    assert msg.count("\n") == 0 and "pdf" in LANGUAGES


@pytest.mark.parametrize("glob,needle", [("", "empty glob"), ("   ", "empty glob"), ("#notes", "comment"),
                                         ("!vendor/**", "negated include"), ("src/[ab", "without its ']'"),
                                         ("\\", "not a valid gitignore-style pattern")])
def test_globs_that_could_never_match_are_errors(glob, needle):
    with pytest.raises(ConfigError, match=needle):
        check_glob(glob, "include_globs")


def test_globs_that_work():
    assert check_glob("!vendor/**", "exclude_globs") == ["!vendor/**"]
    assert check_glob("src/[ab]*.py") == ["src/[ab]*.py"]
    assert expand_braces("src/**/*.{py,go}") == ["src/**/*.py", "src/**/*.go"]
    assert expand_braces("{a,b}/{c,d}") == ["a/c", "a/d", "b/c", "b/d"]
    assert expand_braces("plain{}") == ["plain{}"]


def test_search_filters_by_alias_and_brace_glob(repo):
    ws = Workspace.open(repo)
    index_workspace(ws, dense=False)
    try:
        canonical = [r.path for r in search(ws, "parse header line", filters={"languages": ["python"]}).results]
        assert canonical
        for typed in (["Python"], ["py"], ["PY", "python"]):
            assert [r.path for r in search(ws, "parse header line", filters={"languages": typed}).results] == canonical
        both = {r.path for r in search(ws, "handler request password", top_k=20,
                                       filters={"include_globs": ["**/*.{py,go}"]}).results}
        assert "router/mux.go" in both and any(p.endswith(".py") for p in both)
        with pytest.raises(ConfigError, match="unknown language 'cobol'"):
            search(ws, "x", filters={"languages": ["cobol"]})
        # valid filters that match no indexed file: the empty answer says which one and why
        out = search_answer(ws, "x", filters={"languages": ["swift"], "include_globs": ["nope/**"]})
        assert out["results"] == []
        assert "no indexed file is in swift (indexed languages: " in out["message"]
        assert "no indexed file matches the globs ['nope/**']" in out["message"]
        out = search_answer(ws, "router handler", filters={"chunk_kinds": ["config"], "include_globs": ["*.go"]})
        assert out["results"] == [] and out["message"].endswith(
            "each filter matches indexed files, but no file passes all of them together")
    finally:
        ws.close()
