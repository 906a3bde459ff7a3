"""Source selection and Reciprocal Rank Fusion across the project and libraries."""
from __future__ import annotations

import pytest

from probe_core.errors import ConfigError
from probe_core.libraries import rrf_fuse, select_sources


def _r(name: str) -> dict:
    return {"path": name, "start_line": 1, "end_line": 1, "snippet": name, "score": 0.5, "signals": {}}


def test_rrf_interleaves_sources_by_rank_and_cuts_to_top_k():
    project = [_r("p1"), _r("p2"), _r("p3")]
    lib_a = [_r("a1"), _r("a2")]
    lib_b = [_r("b1")]
    fused = rrf_fuse([project, lib_a, lib_b], top_k=5)
    assert [r["path"] for r in fused] == ["p1", "a1", "b1", "p2", "a2"]
    assert fused[0]["score"] == round(1 / 61, 6) and fused[3]["score"] == round(1 / 62, 6)
    assert fused[1]["signals"] == {"source_rank": 1, "source_score": 0.5}
    assert project[0]["score"] == 0.5  # inputs are not modified


@pytest.mark.parametrize("filters, include, expected", [
    (None, False, (True, None, False, None)),
    (None, True, (True, None, True, None)),
    ({"collections": ["libraries"]}, False, (False, None, True, None)),
    ({"collections": ["project"]}, True, (True, None, True, None)),
    ({"libraries": ["a"], "languages": ["markdown"]}, False, (True, ["a"], True, {"languages": ["markdown"]})),
    ({"collections": ["project", "libraries"], "libraries": ["a", "b"]}, False, (True, ["a", "b"], True, None)),
])
def test_select_sources(filters, include, expected):
    assert select_sources(filters, include) == expected


@pytest.mark.parametrize("filters, needle", [
    ({"collections": []}, "non-empty list"),
    ({"collections": ["docs"]}, "unknown collection"),
    ({"collections": "libraries"}, "non-empty list"),
    ({"collections": ["project"], "libraries": ["a"]}, 'needs "libraries"'),
    ({"libraries": "a"}, "list of library names"),
])
def test_bad_selection_is_a_clear_error(filters, needle):
    with pytest.raises(ConfigError, match=needle):
        select_sources(filters, False)
