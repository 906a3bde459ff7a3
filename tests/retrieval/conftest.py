"""Fixtures shared by the retrieval tests."""
from __future__ import annotations

import pytest

from probe_core.retrieval.term_index import TermIndex


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """Every file whose text the exact-match lists read (``TermIndex.text``), in order."""
    seen: list[str] = []
    real = TermIndex.text

    def spy(self, ws, path, *args):
        seen.append(path)
        return real(self, ws, path, *args)
    monkeypatch.setattr(TermIndex, "text", spy)
    return seen
