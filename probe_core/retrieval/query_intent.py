"""What a query's wording says about the answer it wants: quoted literals, identifiers, and whether
it asks for tests, documentation or examples rather than the implementation."""
from __future__ import annotations

import re
from dataclasses import dataclass

# "..." `...` “...” ‘...’ always quote; '...' only when the quote is not inside a word
# ("the browser's cache" holds no literal).
_QUOTED = re.compile(r'"([^"\n]+)"|`([^`\n]+)`|“([^”\n]+)”|‘([^’\n]+)’|(?<![\w])\'([^\'\n]+)\'(?![\w])')
MIN_LITERAL_CHARS = 3
# Code-shaped words: snake_case, camelCase / PascalCase with two humps, dotted or ::-joined
# paths, a call with parentheses. A plain word ("router", "Value") is left to BM25 and the
# embedder: it is prose as often as it is a name.
_WORD = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*(?:\(\))?")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")

_TEST_WORDS = re.compile(r"\b(tests?|testing|tested|spec|specs|fixtures?|pytest|unittest|assert\w*)\b", re.I)
_DOC_WORDS = re.compile(
    r"\b(documentation|documented|docs?|readme|changelog|change ?log|release notes|tutorial|guide|manual|"
    r"faq|howto)\b", re.I)
# Build, CI, packaging and tool configuration: the files the build prior scales down are wanted.
_BUILD_WORDS = re.compile(
    r"\b(ci|continuous integration|workflows?|pipelines?|github actions?|gitlab|travis|jenkins|makefiles?|"
    r"make targets?|dockerfiles?|docker|build (?:system|script|step|matrix|config\w*|files?)|builds|"
    r"compil(?:e|er|ing) (?:flags?|options?)|packaging|package\.json|publish\w*|release (?:notes|process|"
    r"workflow)|deploy\w*|install\w*|dependenc\w+|requirements|minimum (?:supported )?version|msrv|"
    r"toolchain|lint\w*|formatt\w+|coverage|tox|nox|pre-commit|cargo|npm|yarn|pip|setuptools|pyproject|"
    r"toml|yaml|yml|ini|config(?:uration)? files?|feature flags?|cargo features?)\b", re.I)
_EXAMPLE_WORDS = re.compile(r"\b(examples?|demos?|samples?|snippet)\b", re.I)
# "for example" and "for instance" introduce an illustration of the question, not a request for examples
_FOR_EXAMPLE = re.compile(r"\bfor (?:example|instance)\b", re.I)
# A user's how-to question ("how do I deploy it behind nginx", "should I use X") is answered by a
# guide; a question about how the code behaves ("how does the router match") by the code.
# A question about how the code works ("how does the router match...", "what data structure does...")
_QUESTION = re.compile(r"^\W*(how|what|why|which|where|when)\b", re.I)
_HOWTO = re.compile(r"\b(how (do|can|should|would) (i|we|you)|how to|should (i|we)|can (i|we)|do (i|we) need)\b", re.I)


@dataclass(frozen=True, slots=True)
class QueryIntent:
    """The parts of a query that ranking reads."""

    literals: tuple[str, ...]  # quoted strings, as written
    identifiers: tuple[str, ...]  # code-shaped words ("MultiDict.getlist", "to_value", "die")
    asks_tests: bool
    asks_docs: bool  # names documentation (docs, readme, changelog, guide...)
    asks_examples: bool
    asks_howto: bool  # a user's how-to question, which guides answer as often as code
    asks_build: bool = False  # names CI, building, packaging, dependencies or tool configuration
    # a question about how the code works, in words only (no identifier, no literal, not a how-to):
    # answered by a cluster of code more often than by one function (graph_evidence.py)
    asks_mechanism: bool = False
    # the query is the name of 1 to 3 definitions and nothing else (``parse_cookie``, ``sympify``):
    # those definitions lead the answer (``literals.with_named_definition``)
    names_definition: bool = False


def is_identifier(word: str) -> bool:
    """True when ``word`` is shaped like code rather than prose."""
    if word.endswith("()"):
        return True
    if "." in word or "::" in word:  # "MultiDict.getlist", "Map::entry"; not "e.g"
        return all(len(part) > 1 for part in re.split(r"\.|::", word))
    bare = word.strip("$")
    return ("_" in bare.strip("_") and len(bare) > 2) or bool(_CAMEL.search(bare))


def identifiers_in(text: str) -> list[str]:
    """The code-shaped words of ``text``, in order, once each, without call parentheses."""
    out: list[str] = []
    for m in _WORD.finditer(text):
        word = m.group(0)
        if is_identifier(word):
            word = word.removesuffix("()")
            if word not in out:
                out.append(word)
    return out


def parse_query(query: str) -> QueryIntent:
    """Split a query into the signals ranking uses (never raises)."""
    literals: list[str] = []
    for m in _QUOTED.finditer(query):
        text = next(g for g in m.groups() if g is not None).strip()
        if len(text) >= MIN_LITERAL_CHARS and any(ch.isalnum() for ch in text) and text not in literals:
            literals.append(text)
    identifiers = tuple(identifiers_in(query))
    howto = bool(_HOWTO.search(query))
    return QueryIntent(
        literals=tuple(literals), identifiers=identifiers,
        asks_tests=bool(_TEST_WORDS.search(query)), asks_docs=bool(_DOC_WORDS.search(query)),
        asks_examples=bool(_EXAMPLE_WORDS.search(_FOR_EXAMPLE.sub(" ", query))), asks_howto=howto,
        asks_build=bool(_BUILD_WORDS.search(query)),
        asks_mechanism=bool(_QUESTION.search(query)) and not (identifiers or literals or howto),
    )
