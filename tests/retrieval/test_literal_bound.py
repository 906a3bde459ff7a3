"""A quoted literal whose every word is common reads a bounded number of files: when the word
postings name more than ``MAX_CANDIDATE_FILES`` candidates, it counts as a common phrase without
reading any (real index, real postings)."""
from __future__ import annotations

import pytest

from probe_core import Workspace, index_workspace
from probe_core.retrieval import literals
from probe_core.retrieval.query_intent import parse_query

COMMON = 30  # files holding both words, apart


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("phrases")
    for i in range(COMMON):
        (root / f"mod_{i}.py").write_text(f'ALPHA_{i} = "alpha"\n\n\ndef f_{i}():\n    return "beta {i}"\n')
    (root / "errors.py").write_text('def fail():\n    raise ValueError("alpha beta went wrong")\n')
    w = Workspace.open(root)
    index_workspace(w, dense=False)
    yield w
    w.close()



def literal_list(ws) -> list[str]:
    return literals.exact_lists(ws, parse_query('"alpha beta"'), lambda *_: True).literal


def test_a_phrase_of_common_words_reads_no_file_past_the_bound(ws, reads, monkeypatch):
    assert literal_list(ws)  # under the bound: the files are read and the phrase found
    assert len(reads) == COMMON + 1
    reads.clear()
    monkeypatch.setattr(literals, "MAX_CANDIDATE_FILES", 10)
    assert literal_list(ws) == [] and reads == []  # past it: common, nothing read
