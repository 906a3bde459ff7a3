"""Go, TypeScript, Rust and Java fixture projects with known answers."""
from __future__ import annotations

from probe_core.intel import find_callees, find_callers, find_implementations, find_references

from .conftest import line_of, locations


def test_go_interface_satisfied_by_method_sets_and_embedding(project):
    ws = project("goproj")
    res = find_implementations(ws, "Shape")
    assert locations(res) == {
        ("shapes.go", line_of(ws, "shapes.go", "type Circle struct")),
        ("shapes.go", line_of(ws, "shapes.go", "type Square struct")),
    }  # Name() is promoted from the embedded base; NotAShape lacks it
    named = find_implementations(ws, "Named")
    assert ("shapes.go", line_of(ws, "shapes.go", "type base struct")) in locations(named)


def test_go_callers_recursion_and_tests(project):
    ws = project("goproj")
    fib = line_of(ws, "shapes.go", "func fib")
    callers = locations(find_callers(ws, "fib"))
    assert callers == {("shapes.go", fib + 4), ("shapes.go", line_of(ws, "shapes.go", "float64(fib(3))"))}
    total = find_callers(ws, "Total")
    assert locations(total) == {("shapes_test.go", line_of(ws, "shapes_test.go", "if Total("))}
    callees = find_callees(ws, "Total")
    assert ("shapes.go", fib) in locations(callees)
    # s.Area() on a value of unknown type: a candidate caller of every Area, with low confidence;
    # too uncertain to be listed as a callee
    area_call = ("shapes.go", line_of(ws, "shapes.go", "s.Area()"))
    circle = {(i.path, i.line): i for i in find_callers(ws, "Circle.Area").items}
    assert 0 < circle[area_call].confidence < 0.5
    assert area_call not in locations(callees)


def test_typescript_interface_with_two_implementations(project):
    ws = project("tsproj")
    res = find_implementations(ws, "IListener")
    assert locations(res) == {
        ("src/console.ts", line_of(ws, "src/console.ts", "class ConsoleListener")),
        ("src/memory.ts", line_of(ws, "src/memory.ts", "class MemoryListener")),
        ("src/memory.ts", line_of(ws, "src/memory.ts", "class LoudMemoryListener")),
    }
    refs = locations(find_references(ws, "IListener"))
    assert ("src/console.ts", 1) in refs and ("src/memory.ts", 1) in refs  # the imports
    assert ("src/listener.ts", line_of(ws, "src/listener.ts", "listeners: IListener[]")) in refs


def test_typescript_this_calls_and_overrides(project):
    ws = project("tsproj")
    write = find_callers(ws, "ConsoleListener.write")
    assert locations(write) == {("src/console.ts", line_of(ws, "src/console.ts", "this.write"))}
    broadcast = find_callers(ws, "broadcast")
    assert locations(broadcast) == {("src/main.ts", line_of(ws, "src/main.ts", "broadcast(["))}
    callees = {i.symbol for i in find_callees(ws, "run").items}
    assert {"broadcast", "ConsoleListener", "MemoryListener"} <= callees
    sup = find_callees(ws, "LoudMemoryListener.notify")
    assert ("src/memory.ts", line_of(ws, "src/memory.ts", "notify(event: string)")) in locations(sup)


def test_rust_impl_trait_for_and_self_methods(project):
    ws = project("rustproj")
    res = find_implementations(ws, "Visitor")
    assert locations(res) == {
        ("src/lib.rs", line_of(ws, "src/lib.rs", "impl Visitor for Counter")),
        ("src/nodes.rs", line_of(ws, "src/nodes.rs", "impl Visitor for Printer")),
    }  # `impl Read for Bytes` is std's Read, not ours
    bump = find_callers(ws, "Counter.bump")
    assert locations(bump) == {("src/lib.rs", line_of(ws, "src/lib.rs", "self.bump(depth)"))}
    walk = line_of(ws, "src/lib.rs", "pub fn walk")
    callees = find_callees(ws, "walk")
    got = {(i.symbol, i.path) for i in callees.items}
    assert ("walk", "src/lib.rs") in got  # recursion
    assert ("Leaf.new", "src/nodes.rs") in got and ("Leaf.size", "src/nodes.rs") in got
    assert ("src/lib.rs", walk) in locations(callees)


def test_java_interface_and_bare_method_calls(project):
    ws = project("javaproj")
    base = "src/main/java/shapes/"
    res = find_implementations(ws, "Shape")
    assert locations(res) == {
        (base + "Circle.java", line_of(ws, base + "Circle.java", "class Circle")),
        (base + "Rect.java", line_of(ws, base + "Rect.java", "class Rect")),
    }
    scale = find_callers(ws, "Rect.scale")
    assert locations(scale) == {(base + "Rect.java", line_of(ws, base + "Rect.java", "return scale("))}
