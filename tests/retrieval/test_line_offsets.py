"""The line offsets of a file's text (exact-match lists map a match's byte offset to its line): the
fast path for text whose only line break is "\\n" gives the offsets the full line-break rule gives."""
from __future__ import annotations

import random
from array import array

from probe_core.retrieval.literals import _LINE_BREAK, IndexedText


def _reference(data: bytes) -> array:
    starts = array("I", [0])
    starts.extend(m.end() for m in _LINE_BREAK.finditer(data))
    if starts[-1] == len(data):
        starts.pop()
    return starts


def test_offsets_match_the_line_break_rule():
    rng = random.Random(0)
    texts = [b"", b"a", b"\n", b"a\nb", b"a\nb\n", b"\n\n\n", b"x\r\ny\n", "caf\u00e9\u2028z\n".encode(),
             b"a\x0cb\n", "\u0085x\ny".encode()]
    texts += [bytes(rng.choice(b"ab\n\n\xc3") for _ in range(rng.randint(0, 60))) for _ in range(300)]
    for data in texts:
        text = IndexedText("h", None, None, data)
        lines = [text.line_of(off) for off in range(len(data) + 1)]
        assert text.line_starts == _reference(data), data
        assert lines == [len([s for s in _reference(data) if s <= off]) for off in range(len(data) + 1)]
