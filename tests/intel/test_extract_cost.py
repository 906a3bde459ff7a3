"""What extracting a file's graph costs, with the same rows: the walker calls ``_definition`` only
for node types that can define something (``extract._may_define``), and a file the chunker has just
parsed is not parsed again (``grammars.parse``): on every fixture language and Probe's own source."""
from __future__ import annotations

from pathlib import Path

import pytest

import probe_core
from probe_core.chunking import chunk_file, grammars
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


def test_the_extractor_takes_the_tree_the_chunker_just_made(monkeypatch):
    files = [(p, t) for p, t in _files() if t.strip() and grammars.spec_for(extract.language_for_path(p) or "", t) is not None]
    assert len(files) > 50
    alone = [extract.extract_file(p, t) for p, t in files]
    parses = []
    real = grammars.parser_for

    class Counting:
        def __init__(self, parser):
            self.parser = parser

        def parse(self, source):
            parses.append(source)
            return self.parser.parse(source)

    monkeypatch.setattr(grammars, "parser_for", lambda spec: Counting(real(spec)))
    shared = []
    for path, text in files:
        before = len(parses)
        chunks = chunk_file(path, text)
        shared.append(extract.extract_file(path, text))
        assert chunks and len(parses) - before == 1, path  # one parse for both
    assert shared == alone
    again = extract.extract_file(files[0][0], files[0][1])  # taken once: the next reader parses anew
    assert again == alone[0] and len(parses) == len(files) + 1
