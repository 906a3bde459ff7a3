"""Ruby, C#, PHP, C and C++ fixture projects with known answers, and the one-line answer for languages the
symbol graph has no call graph for (real tree-sitter grammars, real manifest)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from probe_core import Workspace, index_workspace
from probe_core.intel import find_callees, find_callers, find_implementations, find_references
from probe_core.intel.extract import extract_file

from .conftest import line_of, locations


def test_ruby_calls_with_and_without_receivers_and_parentheses(project):
    ws = project("rubyproj")
    user, signup, record = "app/models/user.rb", "app/services/signup.rb", "app/models/record.rb"
    # `Notifications.instrumenter.instrument(...) do ... end` and `... { true }`: calls on a receiver
    instrument = find_callers(ws, "Notifications.Instrumenter.instrument")
    assert instrument.message is None
    assert locations(instrument) == {(user, line_of(ws, user, ".instrument(")),
                                     (signup, line_of(ws, signup, ".instrument("))}
    # a bare `save` statement in a subclass is a call of the inherited method; `user.save` too
    save = find_callers(ws, "Record.save")
    assert locations(save) == {(user, line_of(ws, user, "    save")), (signup, line_of(ws, signup, "user.save"))}
    # `welcome(user)`: a private method of the same class
    assert locations(find_callers(ws, "welcome")) == {(signup, line_of(ws, signup, "welcome(user)"))}
    callees = {i.symbol for i in find_callees(ws, "Record.save").items}
    assert {"Record.run_callbacks", "Record.persist"} <= callees
    assert locations(find_implementations(ws, "Record")) == {(user, line_of(ws, user, "class User < Record"))}
    assert (signup, line_of(ws, signup, "User.new")) in locations(find_references(ws, "User"))


def test_csharp_calls_members_and_base_lists(project):
    ws = project("csharpproj")
    shapes, report = "src/Shapes.cs", "src/Report.cs"
    assert locations(find_callers(ws, "Square")) == {(shapes, line_of(ws, shapes, "return Square(radius)"))}
    assert locations(find_callers(ws, "Total")) == {(report, line_of(ws, report, "return Total("))}
    assert locations(find_callers(ws, "Scale")) == {(report, line_of(ws, report, ".Scale(3)"))}
    assert locations(find_implementations(ws, "IShape")) == {
        (shapes, line_of(ws, shapes, "class Circle")), (shapes, line_of(ws, shapes, "class Rect"))}
    assert {"Report.Total", "Rect.Scale"} <= {i.symbol for i in find_callees(ws, "Run").items}


def test_php_functions_this_self_and_nullsafe_calls(project):
    ws = project("phpproj")
    model, user, signup = "src/Models/Model.php", "src/Models/User.php", "src/Services/Signup.php"
    assert locations(find_callers(ws, "validate")) == {(model, line_of(ws, model, "$this->validate()"))}
    assert locations(find_callers(ws, "store")) == {(user, line_of(ws, user, "self::store("))}
    assert locations(find_callers(ws, "Model.save")) == {(signup, line_of(ws, signup, "$user->save()"))}
    assert locations(find_callers(ws, "notify")) == {(signup, line_of(ws, signup, "$user?->notify("))}
    assert locations(find_callers(ws, "format_message")) == {(user, line_of(ws, user, "format_message("))}
    # the abstract `persist` of the base class runs the subclass's
    assert ("src/Models/User.php", line_of(ws, user, "function persist")) in locations(find_callees(ws, "Model.save"))
    assert locations(find_implementations(ws, "Notifiable")) == {(user, line_of(ws, user, "class User"))}
    # `$message` (a parameter, then a variable) is not a use of anything; `$this->name` uses the property
    graph = extract_file(user, (ws.root / user).read_text())
    assert not [r for r in graph.refs if r.name == "message"]
    assert [r for r in graph.refs if r.name == "name" and r.qualifier == "$this"]


def test_c_functions_and_cpp_methods(project):
    ws = project("cproj")
    vec, main, shape = "src/vec.c", "src/main.c", "src/shape.cpp"
    assert locations(find_callers(ws, "vec_dot")) == {(vec, line_of(ws, vec, "sqrt(vec_dot"))}
    assert (main, line_of(ws, main, "vec_len(v)")) in locations(find_callers(ws, "vec_len"))
    assert locations(find_callers(ws, "twice")) == {(shape, line_of(ws, shape, "s.twice()"))}
    # `area()` in the base class runs the subclass's override
    assert locations(find_callers(ws, "Square.area")) == {(shape, line_of(ws, shape, "return area() * 2"))}
    assert locations(find_implementations(ws, "Shape")) == {(shape, line_of(ws, shape, "class Square"))}


UNSUPPORTED = {
    "src/Calc.swift": "func add(_ a: Int, _ b: Int) -> Int { return a + b }\nfunc twice(_ a: Int) -> Int { return add(a, a) }\n",
    "src/Calc.kt": "fun addUp(a: Int, b: Int): Int = a + b\nfun twiceUp(a: Int): Int { return addUp(a, a) }\n",
    "scripts/tool.lua": "function greet()\n  return 1\nend\nprint(greet())\n",
}


@pytest.fixture
def polyglot(tmp_path):
    root = tmp_path / "poly"
    for rel, text in UNSUPPORTED.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)
    yield ws
    ws.close()


@pytest.mark.parametrize("tool", [find_callers, find_callees, find_references])
def test_a_language_without_a_call_graph_says_so(polyglot, tool):
    swift = tool(polyglot, "add")
    assert swift.items == [] and swift.message == "no call graph for Swift files"
    assert swift.target["path"] == "src/Calc.swift"  # the definition was found: only its calls are unknown
    assert tool(polyglot, "addUp").message == "no call graph for Kotlin files"
    # a file without any definitions the graph knows: asked by file and line
    assert tool(polyglot, file="scripts/tool.lua", line=1).message == "no call graph for Lua files"


def test_the_cli_prints_the_message(polyglot):
    out = subprocess.run([sys.executable, "-m", "probe_cli", "callers", "twice", "--root", str(polyglot.root)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "no call graph for Swift files" in out.stdout
