"""The language-server path with the real jedi-language-server on the pyproj fixture, and its fallbacks."""
from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from probe_core.intel import find_callers, find_implementations, find_references
from probe_core.intel.lsp.servers import find_command

from .conftest import line_of, locations



def test_the_dev_environment_has_a_real_language_server():
    """jedi-language-server is a dev dependency: without it the LSP tests below prove nothing."""
    assert find_command("jedi-language-server"), "run `uv sync` (jedi-language-server is in the dev group)"


@pytest.fixture
def ws(project, monkeypatch):
    monkeypatch.setenv("PROBE_LSP", "1")
    monkeypatch.delenv("PROBE_LSP_SERVER_PYTHON", raising=False)
    monkeypatch.setenv("PROBE_LSP_TIMEOUT_S", "30")  # a cold start imports jedi
    return project("pyproj")


def _session(ws):
    from probe_core.intel.lsp import session

    return next(s for (root, _), s in session._sessions.items() if root == ws.root)


def test_callers_across_modules_from_the_server(ws):
    res = find_callers(ws, file="shapes/mathutil.py", line=line_of(ws, "shapes/mathutil.py", "def normalize"))
    assert res.source == "lsp" and res.message is None
    assert locations(res) == {
        ("shapes/report.py", line_of(ws, "shapes/report.py", "weights = normalize")),
        ("tests/test_report.py", line_of(ws, "tests/test_report.py", "assert normalize")),
    }  # stats.normalize is another function
    by_loc = {(i.path, i.line): i for i in res.items}
    item = by_loc[("shapes/report.py", line_of(ws, "shapes/report.py", "weights = normalize"))]
    assert (item.symbol, item.kind, item.confidence) == ("report", "call", 1.0)
    assert res.target["symbol"] == "normalize" and res.target["path"] == "shapes/mathutil.py"


def test_references_include_imports_and_the_declaration_on_request(ws):
    line = line_of(ws, "shapes/mathutil.py", "def factorial")
    res = find_references(ws, "factorial")
    assert res.source == "lsp"
    assert locations(res) == {
        ("shapes/mathutil.py", line + 4),  # the recursive call
        ("shapes/report.py", line_of(ws, "shapes/report.py", "from .mathutil import")),
        ("shapes/report.py", line_of(ws, "shapes/report.py", "factorial(4)")),
    }
    kinds = {(i.path, i.line): i.kind for i in res.items}
    assert kinds[("shapes/report.py", 2)] == "reference" and kinds[("shapes/mathutil.py", line + 4)] == "call"
    with_decl = find_references(ws, "factorial", include_declaration=True)
    assert ("shapes/mathutil.py", line) in locations(with_decl)


def test_subclasses_transitively_from_the_server(ws):
    res = find_implementations(ws, "Shape")
    assert res.source == "lsp"
    assert locations(res) == {
        ("shapes/base.py", line_of(ws, "shapes/base.py", "class Circle(Shape)")),
        ("shapes/base.py", line_of(ws, "shapes/base.py", "class Square(Shape)")),
        ("shapes/base.py", line_of(ws, "shapes/base.py", "class UnitSquare(Square)")),
    }
    assert {i.symbol for i in res.items} == {"Circle", "Square", "UnitSquare"}
    assert {i.kind for i in res.items} == {"implementation"}


def test_missing_server_falls_back_to_the_graph_and_says_so(ws, monkeypatch):
    monkeypatch.setenv("PROBE_LSP_SERVER_PYTHON", "no-such-language-server-xyz")
    res = find_callers(ws, "factorial")
    assert res.source == "treesitter" and res.items
    assert res.message == ("no language server for python (install no-such-language-server-xyz, or fix "
                           "PROBE_LSP_SERVER_PYTHON); answered from the tree-sitter graph")
    monkeypatch.delenv("PROBE_LSP_SERVER_PYTHON")
    monkeypatch.setenv("PATH", os.defpath)
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    res = find_callers(ws, "factorial")
    assert res.source == "treesitter"
    assert res.message == ("no language server for python (install jedi-language-server); "
                           "answered from the tree-sitter graph")
    monkeypatch.setenv("PROBE_LSP", "0")
    res = find_callers(ws, "factorial")
    assert res.source == "treesitter" and res.message is None


def test_a_hung_server_times_out_into_the_graph(ws, monkeypatch):
    monkeypatch.setenv("PROBE_LSP_SERVER_PYTHON", f"{sys.executable} -c 'import time; time.sleep(60)'")
    monkeypatch.setenv("PROBE_LSP_TIMEOUT_S", "1")
    res = find_references(ws, "factorial")
    assert res.source == "treesitter" and res.items
    assert "timed out after 1s" in res.message and res.message.endswith("answered from the tree-sitter graph")
    assert _session(ws).pid is None  # the hung process was stopped


def test_a_crashed_server_is_restarted_and_the_workspace_close_stops_it(ws):
    assert find_callers(ws, "factorial").source == "lsp"
    sess = _session(ws)
    first = sess.pid
    os.kill(first, 9)
    res = find_callers(ws, "factorial")
    assert res.source == "lsp" and res.items
    assert sess.pid not in (None, first)
    proc = sess.client._server
    ws.close()
    assert sess.client is None and proc.returncode is not None


def test_an_idle_server_stops(ws, monkeypatch):
    monkeypatch.setenv("PROBE_LSP_IDLE_S", "0.5")
    assert find_references(ws, "factorial").source == "lsp"
    sess = _session(ws)
    proc = sess.client._server
    deadline = time.monotonic() + 10
    while proc.returncode is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sess.client is None and proc.returncode is not None
    assert find_references(ws, "factorial").source == "lsp"  # and starts again on the next question


def test_find_command_looks_next_to_the_interpreter(monkeypatch):
    beside = Path(sys.executable).parent / "jedi-language-server"
    assert beside.is_file(), "the dev venv installs jedi-language-server beside the interpreter"
    assert not shutil.which("jedi-language-server", path=os.defpath)
    monkeypatch.setenv("PATH", os.defpath)
    assert find_command("jedi-language-server") == str(beside)
