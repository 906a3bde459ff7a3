"""The exact-match lists from the word postings are the lists the full-text scan made.

A real repository (the installed ``click`` package, plus a file of awkward text) is indexed; for
hundreds of needles taken from its own text (identifiers, quoted strings, fragments that start or
end inside a word, other cases, non-ASCII) the postings-driven ``exact_lists`` must return exactly
what main's scan (``literals_scan_reference.py``, frozen) returns, under several filters, and
again after files are edited and deleted (the postings are kept up to date file by file).
"""
from __future__ import annotations

import importlib.util
import random
import re
import shutil
import sys
from pathlib import Path

import click
import pytest

from probe_core import Workspace, index_workspace
from probe_core.intel.build import graph_store
from probe_core.retrieval import literals
from probe_core.retrieval.query_intent import QueryIntent, parse_query
from probe_core.retrieval.term_index import term_index

_spec = importlib.util.spec_from_file_location("literals_scan_reference",
                                               Path(__file__).with_name("literals_scan_reference.py"))
reference = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = reference  # dataclasses look their module up
_spec.loader.exec_module(reference)

AWKWARD = ('# -*- coding: utf-8 -*-\r\nMSG_BAD_KEY = "key must be a string"\r\n'
           'def naïve_café(x):\n    raise KeyError(MSG_BAD_KEY)  # Straße\n'
           '$dollar_name = "price: $5 (approx.)"\nclass HTTPServerError(Exception): pass\n'
           'def use():\n    return HTTPServerError("Invalid header: %s" % naïve_café(1))\n')

FILTERS = {
    "all": lambda path, language, kind: True,
    "code": lambda path, language, kind: kind == "code",
    "no_core": lambda path, language, kind: not path.endswith("core.py"),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("click_repo")
    shutil.copytree(Path(click.__file__).parent, root / "click", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "awkward.py").write_text(AWKWARD, encoding="utf-8", newline="")
    (root / "docs.md").write_text("# Usage\n\nRun `click.echo` with \"key must be a string\".\n")
    return root


def _needles(root: Path, rng: random.Random) -> list[str]:
    """Queries built from the repository's own text: identifiers, literals and fragments of both."""
    text = "\n".join(p.read_text("utf-8") for p in sorted(root.rglob("*.py")))
    names = sorted(set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*(?:_[A-Za-z0-9]+|[a-z][A-Z][A-Za-z0-9]*)\b", text)))
    strings = sorted(set(s for s in re.findall(r'"([^"\n\\]{3,40})"', text) if any(c.isalnum() for c in s)))
    out = [f"where is {n} used" for n in rng.sample(names, 60)]
    out += [f"{a}.{b}" for a, b in zip(rng.sample(names, 10), rng.sample(names, 10))]
    out += [f'"{s}"' for s in rng.sample(strings, 50)]
    for s in rng.sample(strings, 40):  # fragments: a word cut at either end, another case
        i, j = sorted(rng.sample(range(len(s) + 1), 2))
        if j - i >= 3 and any(c.isalnum() for c in s[i:j]):
            out.append(f'"{s[i:j]}"')
        out.append(f'"{s.upper()}"')
    out += ['"key must be a string"', '"KEY MUST"', '"ust be a str"', "naïve_café", '"Straße"', '"raße"',
            '"price: $5"', "$dollar_name", "HTTPServerError", '"Invalid header"', '"nvalid"', "MSG_BAD_KEY",
            '"(approx.)"', '"%s"', "click.echo", "no_such_identifier_anywhere", '"zzqx nothing"']
    return out


def _both(ws: Workspace, intent: QueryIntent, allowed) -> tuple:
    prior = lambda path, kind: 0.5 if kind == "test" else 1.0  # noqa: E731
    new = literals.exact_lists(ws, intent, allowed, prior)
    old = reference.exact_lists(ws, intent, allowed, prior)
    return (new.literal, new.identifier), (old.literal, old.identifier)


def _compare(ws: Workspace, needles: list[str]) -> int:
    nonempty = 0
    for query in needles:
        intent = parse_query(query)
        for name, allowed in FILTERS.items():
            new, old = _both(ws, intent, allowed)
            assert new == old, (query, name)
            nonempty += bool(new[0] or new[1])
    return nonempty


def test_postings_give_the_scans_lists(repo, tmp_path):
    root = tmp_path / "r"
    shutil.copytree(repo, root)
    ws = Workspace.open(root)
    try:
        index_workspace(ws, dense=False)
        needles = _needles(root, random.Random(18))
        assert _compare(ws, needles) > 100  # most needles find something: the comparison has teeth

        # edits, a new file, a deletion: the postings follow file by file
        (root / "awkward.py").write_text(AWKWARD.replace("key must be a string", "key must be text"), encoding="utf-8")
        (root / "new_module.py").write_text("def brand_new_helper():\n    return 'fresh literal here'\n")
        (root / "click" / "termui.py").unlink()
        index_workspace(ws, dense=False)
        after = needles + ["brand_new_helper", '"fresh literal"', '"key must be text"', "getchar"]
        assert _compare(ws, after) > 100
        found = literals.exact_lists(ws, parse_query("brand_new_helper"), FILTERS["all"])
        assert found.identifier
    finally:
        ws.close()


def test_search_reads_only_the_files_a_needle_can_be_in(repo, tmp_path):
    root = tmp_path / "r"
    shutil.copytree(repo, root)
    ws = Workspace.open(root)
    try:
        index_workspace(ws, dense=False)
        index = term_index(ws)
        lists = literals.exact_lists(ws, parse_query("where is naïve_café"), FILTERS["all"])
        assert lists.identifier
        # one file holds the name: that one was read, not the repository
        assert {path for path, _ in index._texts} == {"awkward.py"}
        # a word no file holds reads nothing
        index._texts.clear()
        assert literals.exact_lists(ws, parse_query('"qqzzx vvkkw"'), FILTERS["all"]).literal == []
        assert not index._texts
    finally:
        ws.close()


def test_postings_follow_an_edit(repo, tmp_path):
    root = tmp_path / "r"
    shutil.copytree(repo, root)
    ws = Workspace.open(root)
    try:
        index_workspace(ws, dense=False)
        store = graph_store(ws)
        index = term_index(ws)
        index.refresh(ws, store)
        assert [p for p, *_ in index.holders(store, "naïve_café".encode())] == ["awkward.py"]
        (root / "awkward.py").write_text("qqplainqq = 1\n")
        index_workspace(ws, dense=False)
        index.refresh(ws, store)
        assert index.holders(store, "naïve_café".encode()) == []
        assert [p for p, *_ in index.holders(store, b"plainq")] == ["awkward.py"]
    finally:
        ws.close()
