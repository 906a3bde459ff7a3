"""Names in code intelligence read as written: one entry per definition, qualified names without a
repeated segment, counts in the right number, and "the" definition of an ambiguous name is the one
the repository calls (tests/fixtures/intel/namesproj: real TypeScript and Python, real tree-sitter)."""
from __future__ import annotations

import json
import subprocess
import sys

from probe_core.intel import find_callers, map_code

from .conftest import line_of


def test_an_exported_const_function_is_one_symbol(project):
    """`export const runTest = () => {}` was listed twice (`runTest = …` and `const runTest = …`), and
    what it encloses was named `runTest.runTest`."""
    ws = project("namesproj")
    text = map_code(ws, "src", depth=3).text
    assert text.count("runTest") == 1 and text.count("createNullObject") == 1, text
    assert f"  {line_of(ws, 'src/router/test.ts', 'runTest')}: const runTest = (router: Router" in text
    assert "const createNullObject = function ()" in text
    assert text.count("detectFromCookie") == 1, text


def test_callers_name_their_enclosing_function_once(project):
    ws = project("namesproj")
    split = find_callers(ws, "splitCookie")
    assert [i.symbol for i in split.items] == ["detectFromCookie"]  # was detectFromCookie.detectFromCookie
    verify = find_callers(ws, "verify")
    # the call is in the handler `function jwt` that `const jwt` returns: one level of nesting, not two
    assert [i.symbol for i in verify.items] == ["jwt.jwt"]  # was jwt.jwt.jwt


def test_map_counts_one_line_and_one_file_in_the_singular(project):
    ws = project("namesproj")
    (ws.root / "calc" / "one.py").write_text("X = 1\n")
    (ws.root / "deep" / "er").mkdir(parents=True)
    (ws.root / "deep" / "er" / "only.py").write_text("def f():\n    return 1\n")
    from probe_core import index_workspace

    index_workspace(ws, dense=False)
    text = map_code(ws, ".", depth=1, detail="files").text
    assert "calc/ (7 files" in text and "deep/ (1 file, 2 lines)" in text, text
    assert "(1 lines)" not in map_code(ws, "calc", depth=1).text
    assert "calc/one.py (1 line)" in map_code(ws, "calc", depth=1).text


def test_an_ambiguous_name_means_the_definition_its_callers_use(project):
    """`convert` is defined in calc/core/convert.py (with @overload stubs) and wrapped, under the same
    name, in calc/core/backend.py, which sorts first; every caller imports the former."""
    ws = project("namesproj")
    result = find_callers(ws, "convert")
    body = line_of(ws, "calc/core/convert.py", "def convert(a, strict")
    assert (result.target["path"], result.target["line"]) == ("calc/core/convert.py", body)
    backend = line_of(ws, "calc/core/backend.py", "def convert")
    assert f"calc/core/backend.py:{backend} convert" in result.target["candidates"]
    assert {(i.path, i.symbol) for i in result.items} == {("calc/ops.py", "add"), ("calc/fmt.py", "show")}


def test_the_cli_lists_the_other_definitions(project):
    ws = project("namesproj")
    out = subprocess.run([sys.executable, "-m", "probe_cli", "callers", "convert", "--root", str(ws.root)],
                         capture_output=True, text=True, timeout=120, env={**__import__("os").environ,
                                                                         "PROBE_DAEMON": "0"})
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[:2]
    assert first.startswith("function convert (calc/core/convert.py:")
    assert "also defined at" in second and "calc/core/backend.py:" in second and "--file" in second
    as_json = subprocess.run([sys.executable, "-m", "probe_cli", "callers", "convert", "--json", "--root",
                              str(ws.root)], capture_output=True, text=True, timeout=120)
    assert json.loads(as_json.stdout)["target"]["candidates"]
