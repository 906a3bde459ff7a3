"""Fixture projects (tests/fixtures/intel/<name>) copied to a tmp dir and indexed lexically."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from probe_core import Workspace, index_workspace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "intel"


def line_of(ws: Workspace, path: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line containing `needle` (so tests do not hard-code numbers)."""
    seen = 0
    for i, text in enumerate((ws.root / path).read_text().split("\n"), 1):
        if needle in text:
            seen += 1
            if seen == nth:
                return i
    raise AssertionError(f"{needle!r} not in {path}")


def locations(result) -> set[tuple[str, int]]:
    return {(i.path, i.line) for i in result.items}


@pytest.fixture(autouse=True)
def graph_only(monkeypatch):
    """These tests pin the tree-sitter graph's answers; test_lsp.py turns the language server on."""
    monkeypatch.setenv("PROBE_LSP", "0")


@pytest.fixture
def project(tmp_path):
    opened: list[Workspace] = []

    def make(name: str) -> Workspace:
        root = tmp_path / name
        shutil.copytree(FIXTURES / name, root)
        ws = Workspace.open(root)
        index_workspace(ws, dense=False)
        opened.append(ws)
        return ws

    yield make
    for ws in opened:
        ws.close()
