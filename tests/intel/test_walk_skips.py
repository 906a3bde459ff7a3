"""The graph walker calls ``_definition`` only for node types that can define something
(``extract._may_define``): the rows are the same as when it considers every node, on every fixture
language and on Probe's own source."""
from __future__ import annotations

from pathlib import Path

import pytest

import probe_core
from probe_core.intel import extract
from probe_core.scan import read_text, scan_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "intel"


class _Every:
    def __contains__(self, _: object) -> bool:
        return True


def _files() -> list[tuple[str, str]]:
    out = []
    for root in (FIXTURES, Path(probe_core.__file__).parent / "intel"):
        out += [(f.path, read_text(root, f.path)) for f in scan_files(root, max_file_bytes=1_000_000).files]
    return out


def _graphs(files: list[tuple[str, str]]) -> tuple[list, int]:
    calls = 0
    real = extract._Walker._definition

    def counted(self, node, scope):
        nonlocal calls
        calls += 1
        return real(self, node, scope)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(extract._Walker, "_definition", counted)
        graphs = [extract.extract_file(path, text) for path, text in files]
    return graphs, calls


def test_same_rows_as_a_walk_that_considers_every_node(monkeypatch):
    files = _files()
    assert len({extract.language_for_path(p) for p, _ in files}) >= 10
    skipping, calls = _graphs(files)
    monkeypatch.setattr(extract, "_may_define", lambda spec: _Every())
    every, all_calls = _graphs(files)
    assert sum(len(g.refs) for g in every) > 3000 and sum(len(g.symbols) for g in every) > 300
    assert skipping == every
    assert calls * 5 < all_calls  # most nodes skip the call
