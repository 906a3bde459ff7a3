"""The partial-coverage note says what the coverage means, in proportion (issue 19: at 99% it still
said results "lean on lexical (BM25) matching", and 99.6% showed as "100%")."""
from __future__ import annotations

from probe_core.retrieval.search import DENSE_NEARLY_DONE, coverage_note


def test_the_note_follows_the_coverage():
    assert "lean on lexical" in coverage_note(0.1)
    assert "lean on" not in coverage_note(0.56) and "56%" in coverage_note(0.56)
    nearly = coverage_note(0.996)
    assert "99%" in nearly and "lexical" not in nearly and "last few" in nearly
    assert DENSE_NEARLY_DONE <= 0.99
