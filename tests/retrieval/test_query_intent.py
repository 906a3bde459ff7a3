"""What ranking reads from a query's wording."""
from __future__ import annotations

import pytest

from probe_core.retrieval.query_intent import is_identifier, parse_query


@pytest.mark.parametrize("query, literals", [
    ('where is "conflicts with existing wildcard" raised', ("conflicts with existing wildcard",)),
    ("where is 'Aborted!' printed", ("Aborted!",)),
    ("the `Server capacity exceeded.` reply", ("Server capacity exceeded.",)),
    ("answer 304 when the browser's cached copy is still valid according to its etag", ()),
    ('a quote too short: "ab"', ()),
    ('"a" and "xyz" and "xyz"', ("xyz",)),
])
def test_quoted_literals(query, literals):
    assert parse_query(query).literals == literals


@pytest.mark.parametrize("word, expected", [
    ("to_value", True), ("NewWrapResponseWriter", True), ("MultiDict.getlist", True), ("Map::entry", True),
    ("abort()", True), ("isolateGlobalState", True), ("HTTPServer", True),
    ("router", False), ("Value", False), ("e.g", False), ("_", False), ("__", False),
])
def test_identifier_shapes(word, expected):
    assert is_identifier(word) is expected


def test_identifiers_are_collected_once_without_call_parentheses():
    intent = parse_query("Aborter and abort(): raise the HTTPException; abort() again")
    assert intent.identifiers == ("abort", "HTTPException")


@pytest.mark.parametrize("query, tests, docs, examples, howto", [
    ("how does the router match a path", False, False, False, False),
    ("which test covers the retry loop", True, False, False, False),
    ("readme section on untyped values", False, True, False, False),
    ("changelog: what changed in 3.1.2", False, True, False, False),
    ("an example of a custom converter", False, False, True, False),
    # "for example" illustrates the question; it does not ask for examples
    ("list every registered route, for example to print them", False, False, False, False),
    ("for instance, where is a cookie signed", False, False, False, False),
    ("for example, show an example of a converter", False, False, True, False),
    ("how do I put nginx in front of my app", False, False, False, True),
    ("how do inline middleware groups share the tree", False, False, False, False),
])
def test_what_the_query_asks_for(query, tests, docs, examples, howto):
    intent = parse_query(query)
    asked = (intent.asks_tests, intent.asks_docs, intent.asks_examples, intent.asks_howto)
    assert asked == (tests, docs, examples, howto)


@pytest.mark.parametrize("query, expected", [
    ("how does the router match an incoming path against the registered rules?", True),
    ("what data structure does the router use to store route patterns", True),
    ("why do tests rank below the code", True),
    ("how does MultiDict.getlist handle a missing key", False),  # names code: the identifier lists decide
    ('where is "trailing characters" raised', False),
    ("how do I put nginx in front of my app", False),  # a user's how-to
    ("sanitize the name of an uploaded file", False),  # a task, not a question about the mechanism
])
def test_a_question_about_how_the_code_works_in_words_only(query, expected):
    assert parse_query(query).asks_mechanism is expected
