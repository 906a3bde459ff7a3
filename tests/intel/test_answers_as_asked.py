"""What a user sees from map and the symbol queries: whole summaries and docstrings, cuts that say
so, the source that answered, and a line outside the file refused rather than ignored."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from probe_core import Workspace, index_workspace
from probe_core.intel import BadQuery, find_callers, find_references, map_code
from probe_core.intel.lsp import enabled
from probe_mcp.render import render_intel

from .conftest import line_of

SESSIONS = '''"""Sessions."""


def begin():
    """Begin a session."""


def restart():
    """Restart it."""


def update():
    """Update it, thank you"""


def finish():
    """Finish it."""


def raw():
    r"""Raw docstring."""


def calls():
    begin()
    restart()
'''
SESSIONS_LINES = SESSIONS.count("\n")
PROBE = [sys.executable, "-m", "probe_cli"]


@pytest.fixture
def deep(tmp_path):
    root = tmp_path / "deep"
    (root / "src" / "x" / "sub").mkdir(parents=True)
    (root / "src" / "x" / "sessions.py").write_text(SESSIONS)
    (root / "src" / "x" / "sub" / "inner.py").write_text("def inner():\n    return 1\n")
    for k in range(40):
        (root / "src" / f"mod{k:02}.py").write_text(f"def function_number_{k}(argument_one, argument_two):\n"
                                                    "    return argument_one\n")
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)
    yield ws
    ws.close()


def test_map_of_a_file_below_depth_two_is_that_file(deep):
    out = map_code(deep, "src/x/sessions.py")
    assert out.text.splitlines()[0] == f"src/x/sessions.py ({SESSIONS_LINES} lines)"
    assert "/src/x/" not in out.text and not out.dirs and not out.truncated
    assert [i["path"] for i in out.items] == ["src/x/sessions.py"]
    assert render_intel(out.to_dict()) == out.text  # MCP map_code shows the same text


def test_full_detail_keeps_docstrings_whole(deep):
    text = map_code(deep, "src/x", detail="full").text
    for doc in ("Begin a session.", "Restart it.", "Update it, thank you", "Finish it.", "Raw docstring."):
        assert f"— {doc}" in text, text


def test_a_budget_cut_says_what_it_left_out(deep):
    out = map_code(deep, "src", depth=1, max_tokens=256)
    last = out.text.splitlines()[-1]
    assert out.truncated and last.startswith("… cut at max_tokens=256:")
    assert out.omitted["files"] > 0 and f"{out.omitted['files']} more files" in last
    assert out.omitted["dirs"] == 1 and "1 more folder not shown" in last  # src/x was not reached
    whole = map_code(deep, "src", depth=1, max_tokens=100_000)
    assert not whole.truncated and "cut at" not in whole.text and whole.dirs == [
        {"dir": "src/x", "files": 2, "lines": SESSIONS_LINES + 2}]


def test_language_aliases_in_map(deep):
    assert map_code(deep, "src/x", language="Python").items == map_code(deep, "src/x", language="py").items
    with pytest.raises(Exception, match="unknown language 'cobol'.*python"):
        map_code(deep, "src", language="cobol")


def test_the_graph_answers_by_default_even_with_a_language_server_installed(project, monkeypatch):
    ws = project("pyproj")
    monkeypatch.delenv("PROBE_LSP", raising=False)  # as a fresh install (the dev group has jedi)
    assert not enabled(ws)
    line = line_of(ws, "shapes/mathutil.py", "def normalize")
    res = find_callers(ws, file="shapes/mathutil.py", line=line)
    assert res.source == "treesitter" and res.message is None and res.items
    ws.config.lsp = True  # `"lsp": true` in .probe/config.json asks for the server
    assert enabled(ws) and not enabled(ws, requested=False)
    monkeypatch.setenv("PROBE_LSP", "0")
    assert not enabled(ws)


def test_a_line_outside_the_file_is_an_error(project):
    ws = project("pyproj")
    total = len((ws.root / "shapes/base.py").read_text().splitlines())
    for line in (-3, 0, total + 1, 9999):
        with pytest.raises(BadQuery, match=rf"line {line} is not in shapes/base.py \(lines 1-{total}\)"):
            find_callers(ws, "area", file="shapes/base.py", line=line)
    with pytest.raises(BadQuery, match="needs the file"):
        find_references(ws, "area", line=3)


def test_cli_says_which_source_answered_and_validates_like_mcp(project):
    ws = project("pyproj")
    root = str(ws.root)
    out = subprocess.run([*PROBE, "callers", "normalize", "--root", root], capture_output=True, text=True,
                         env={**os.environ, "PROBE_LSP": ""})
    assert out.returncode == 0, out.stderr
    assert "from the tree-sitter symbol graph in" in out.stdout.splitlines()[-1]
    for args in (["--file", "shapes/base.py", "--line", "-3"], ["--file", "shapes/base.py", "--line", "999"],
                 ["--line", "4"]):
        bad = subprocess.run([*PROBE, "callers", "area", "--root", root, *args], capture_output=True, text=True)
        assert bad.returncode == 1 and bad.stderr.startswith("probe: error:") and bad.stderr.count("\n") == 1
    deep = subprocess.run([*PROBE, "callers", "area", "--root", root, "--depth", "9"], capture_output=True,
                          text=True)
    assert deep.returncode == 2 and "argument --depth: must be from 1 to 5" in deep.stderr
