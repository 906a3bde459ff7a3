"""The exact-match scan's text: lines counted as the chunker counts them, names and literals found
in UTF-8 bytes as they are in text."""
from __future__ import annotations

import random

import pytest

from probe_core.retrieval.literals import IndexedText, _identifier_pattern, _literal_pattern, _utf8, offsets


def _text(text: str) -> IndexedText:
    return IndexedText("h", "python", "code", _utf8(text))


@pytest.mark.parametrize("text", [
    "", "a", "a\n", "a\nb", "\n\n", "a\r\nb\rc\n", "x\fy\x0bz\x1cw\x1dv\x1eu", "é\x85ü\u2028ß\u2029end\n",
    "naïve ☃ 𝄞\r\n\r\nlast",
])
def test_lines_are_counted_like_splitlines(text):
    f = _text(text)
    assert f.line_of(0) == (1 if text else 0)
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines, 1):
        offset = len(_utf8("".join(lines[:number - 1])))
        assert f.line_of(offset) == number
        assert f.line_of(offset + len(_utf8(line)) - 1) == number
        assert f.line(number) == line
    assert len(f.line_starts) == len(lines)


def test_random_texts_count_lines_like_splitlines():
    rng = random.Random(7)
    alphabet = ["a", "b", " ", "\n", "\r", "\r\n", "\f", "\x85", "\u2028", "é", "☃", "𝄞", "\x1e"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        f = _text(text)
        f.line_of(0)
        assert [f.line(n) for n in range(1, len(f.line_starts) + 1)] == text.splitlines(keepends=True)


def test_names_and_literals_match_in_bytes_as_in_text():
    f = _text('café = caf + cafe\nMSG = "Größe ist zu GROSS"\n')
    ident = _identifier_pattern("caf")
    assert [f.line_of(m.start()) for m in ident.finditer(f.data)] == [1]  # not inside "café"
    assert [m.start() for m in ident.finditer(f.data)] == [len(_utf8("café = "))]
    assert f.holds(_utf8("zu gross"), case=False) and not f.holds(_utf8("zu gross"), case=True)
    assert [f.line_of(m.start()) for m in _literal_pattern("ist ZU").finditer(f.data)] == [2]



@pytest.mark.parametrize("needle", ["a", "aa", "a.a", "a_a", "Ab", "é", "$x", "x$", "caf", "a a", "GROSS"])
def test_offsets_are_the_patterns_matches(needle):
    """``offsets`` (bytes.find) gives what ``finditer`` of the identifier and literal patterns gives:
    leftmost first, never overlapping, word boundaries and ASCII case folding included."""
    rng = random.Random(hash(needle) & 0xFFFF)
    alphabet = ["a", "A", "b", ".", "_", "$", "x", " ", "\n", "é", "caf", "aa", "a.a", "GROSS", "gross", "9"]
    for _ in range(400):
        f = _text("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))))
        raw = _utf8(needle)
        assert list(offsets(f, raw, case=True, bounded=True)) == [m.start() for m in _identifier_pattern(needle).finditer(f.data)]
        assert list(offsets(f, raw, case=False, bounded=False)) == [m.start() for m in _literal_pattern(needle).finditer(f.data)]


OWNERS = {
    "handlers.go": ("package web\n\nfunc serve(w ResponseWriter, r *Request) {\n"
                    "\trctx := routeContextOf(r)\n\tlogRequest(rctx, requestLogger)\n}\n"),
    "logging.go": ("package web\n\nfunc audit(r *Request) {\n\tlogRequest(r, requestLogger)\n}\n\n"
                   "func routeContextOf(r *Request) *Context {\n\treturn r.ctx\n}\n"),
    "messages.py": 'def reject():\n    raise_with(rare_one, rare_two, rare_three, common_four, "input was rejected")\n',
    "uses.py": "def use_rare():\n    return rare_one, rare_two, rare_three, common_four\n",
    **{f"common{k}.py": f"def common_{k}():\n    return common_four * {k}\n" for k in range(4)},
}


@pytest.fixture(scope="module")
def owners_ws(tmp_path_factory):
    from probe_core import Workspace, index_workspace

    root = tmp_path_factory.mktemp("owners")
    for rel, text in OWNERS.items():
        (root / rel).write_text(text)
    ws = Workspace.open(root)
    index_workspace(ws, dense=False)
    yield ws
    ws.close()


def _literal_paths(ws, query: str) -> set[str]:
    from probe_core.retrieval.literals import exact_lists
    from probe_core.retrieval.query_intent import parse_query

    ids = exact_lists(ws, parse_query(query), lambda *_: True).literal
    return {p["file_path"] for p in ws.manifest.chunk_payloads(ids).values()}


def test_a_literal_used_as_code_names_no_owners(owners_ws):
    # `rctx` is a variable here, not a message: the names beside it are not where it is defined
    assert _literal_paths(owners_ws, '"rctx"') == {"handlers.go"}


def test_a_message_brings_only_the_rarest_names_it_is_defined_under(owners_ws):
    # the message sits in a string: the names on its line count, the three rarest of them
    # (rare_* are in 2 files, common_four in 6: its other files are not the message's)
    assert _literal_paths(owners_ws, '"input was rejected"') == {"messages.py", "uses.py"}
