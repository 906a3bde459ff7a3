"""A name used in more files than ``MAX_IDENTIFIER_FILES`` counts as common: when it is one whole
word, the word postings already say so (each posted file holds it), and no file is read to count
it; the answer is the one reading them gave (real index, real postings)."""
from __future__ import annotations

import pytest

from probe_core import Workspace, index_workspace
from probe_core.retrieval import literals
from probe_core.retrieval.query_intent import parse_query

USERS = literals.MAX_IDENTIFIER_FILES + 5


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("names")
    (root / "core.py").write_text("def common_name(x):\n    return x\n\n\ndef rare_name(y):\n    return y\n")
    for i in range(USERS):
        rare = i < 3  # three files use ``rare_name``
        (root / f"use_{i:02d}.py").write_text(
            f"from core import common_name{', rare_name' if rare else ''}\n\n\n"
            f"def f_{i}():\n" + ("    rare_name(1)\n" if rare else "") + f"    return common_name({i})\n")
    w = Workspace.open(root)
    index_workspace(w, dense=False)
    yield w
    w.close()



def _identifier_list(ws, name: str) -> list[str]:
    return literals.exact_lists(ws, parse_query(name + "()"), lambda *_: True).identifier


def _paths(ws, ids: list[str]) -> list[str]:
    return [p["file_path"] for p in (ws.manifest.chunk_payloads(ids)[i] for i in ids)]


def test_a_word_in_more_files_than_the_bound_is_common_without_reading_them(ws, reads, monkeypatch):
    assert _paths(ws, _identifier_list(ws, "common_name")) == ["core.py"]  # its definition only: a common name
    assert reads == ["core.py"]  # the definition's file; none of the 45 users
    reads.clear()
    monkeypatch.setattr(literals._Files, "holding", _holding_without_shortcut)
    assert _paths(ws, _identifier_list(ws, "common_name")) == ["core.py"]  # the same answer, reading them
    assert len(reads) > literals.MAX_IDENTIFIER_FILES


def test_a_word_under_the_bound_is_read_for_its_lines(ws, reads):
    paths = _paths(ws, _identifier_list(ws, "rare_name"))
    assert paths[0] == "core.py" and sorted(set(paths[1:])) == ["use_00.py", "use_01.py", "use_02.py"]


_real_holding = literals._Files.holding


def _holding_without_shortcut(self, needle, *, case, bounded, max_files=None):
    return _real_holding(self, needle, case=case, bounded=bounded)
