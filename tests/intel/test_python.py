"""Python: self-calls, overrides, subclasses, two functions of one name, recursion, imports."""
from __future__ import annotations

import pytest

from probe_core.intel import (
    SymbolNotFound,
    find_callees,
    find_callers,
    find_implementations,
    find_references,
    impact_analysis,
)

from .conftest import line_of, locations


@pytest.fixture
def ws(project):
    return project("pyproj")


def test_callers_of_a_method_called_through_self_and_instances(ws):
    res = find_callers(ws, "Shape.area")
    locs = locations(res)
    assert ("shapes/base.py", line_of(ws, "shapes/base.py", "self.area()")) in locs  # self.area()
    assert ("shapes/report.py", line_of(ws, "shapes/report.py", "s.area() for s in shapes")) in locs
    assert res.source == "treesitter" and res.target["symbol"] == "Shape.area"
    # an instance call of unknown type is a candidate, ranked below certain ones
    by_loc = {(i.path, i.line): i for i in res.items}
    self_call = by_loc[("shapes/base.py", line_of(ws, "shapes/base.py", "self.area()"))]
    assert self_call.confidence == 1.0 and self_call.symbol == "Shape.describe"


def test_overridden_method_and_transitive_subclasses(ws):
    res = find_implementations(ws, "Shape")
    assert locations(res) == {
        ("shapes/base.py", line_of(ws, "shapes/base.py", "class Circle(Shape)")),
        ("shapes/base.py", line_of(ws, "shapes/base.py", "class Square(Shape)")),
        ("shapes/base.py", line_of(ws, "shapes/base.py", "class UnitSquare(Square)")),
    }


def test_recursive_function_is_its_own_caller_and_callee(ws):
    line = line_of(ws, "shapes/mathutil.py", "def factorial")
    callers = find_callers(ws, file="shapes/mathutil.py", line=line)
    assert ("shapes/mathutil.py", line + 4) in locations(callers)
    assert ("shapes/report.py", line_of(ws, "shapes/report.py", "factorial(4)")) in locations(callers)
    deep = find_callers(ws, "factorial", depth=3)  # the cycle must end
    assert deep.items and not deep.truncated
    callees = find_callees(ws, "factorial")
    assert locations(callees) == {("shapes/mathutil.py", line)}


def test_same_name_in_two_modules_resolved_through_imports(ws):
    mine = find_callers(ws, file="shapes/mathutil.py", line=line_of(ws, "shapes/mathutil.py", "def normalize"))
    other = find_callers(ws, file="shapes/stats.py", line=line_of(ws, "shapes/stats.py", "def normalize"))
    report_plain = ("shapes/report.py", line_of(ws, "shapes/report.py", "weights = normalize"))
    report_stats = ("shapes/report.py", line_of(ws, "shapes/report.py", "stats.normalize"))
    test_call = ("tests/test_report.py", line_of(ws, "tests/test_report.py", "assert normalize"))
    assert locations(mine) == {report_plain, test_call}
    assert locations(other) == {report_stats}
    # by name alone both are candidates
    both = find_callers(ws, "normalize")
    assert {report_plain, report_stats, test_call} <= locations(both)
    assert len(both.target["candidates"]) == 1


def test_references_include_imports_and_tests_but_not_comments(ws):
    res = find_references(ws, file="shapes/mathutil.py", line=line_of(ws, "shapes/mathutil.py", "def normalize"))
    locs = locations(res)
    assert ("tests/test_report.py", 1) in locs  # the import
    assert ("shapes/report.py", 2) in locs
    assert ("tests/test_report.py", line_of(ws, "tests/test_report.py", "# normalize")) not in locs
    with_decl = find_references(ws, "factorial", include_declaration=True)
    assert ("shapes/mathutil.py", 1) in locations(with_decl)


def test_callees_resolve_through_imports_and_skip_builtins(ws):
    res = find_callees(ws, "report")
    names = {i.symbol for i in res.items}
    assert {"Circle", "Square", "normalize", "total_area", "factorial"} <= names
    assert ("shapes/stats.py", 1) in locations(res)  # stats.normalize
    assert not any(i.symbol in ("sum", "max") for i in res.items)


def test_impact_analysis_groups_and_rates(ws):
    res = impact_analysis(ws, "normalize", file="shapes/mathutil.py",
                          line=line_of(ws, "shapes/mathutil.py", "def normalize")).to_dict()
    cats = {i["category"] for i in res["items"]}
    assert "test" in cats and "caller" in cats
    assert res["summary"]["tests_covering"] >= 1
    assert res["summary"]["risk"] in ("low", "medium", "high")


def test_unknown_symbol_is_a_clear_error(ws):
    with pytest.raises(SymbolNotFound):
        find_callers(ws, "no_such_function")
