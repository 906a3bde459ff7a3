"""Whatever the text, chunk_file returns valid chunks and never raises."""
from __future__ import annotations

import random
from textwrap import dedent

import pytest

import probe_core.chunking.code as code_module
from probe_core.chunking import chunk_file
from probe_core.records import short_hash

from . import test_code_chunks as samples
from .chunk_checks import check_invariants, span

LANGUAGE_SAMPLES = {
    "a.py": samples.PYTHON,
    "a.js": samples.JAVASCRIPT,
    "a.ts": samples.TYPESCRIPT,
    "a.tsx": samples.TSX,
    "a.go": samples.GO,
    "a.rs": samples.RUST,
    "A.java": samples.JAVA,
    "a.c": samples.C_SOURCE,
    "a.hpp": samples.CPP,
    "a.rb": samples.RUBY,
    "a.md": "# T\n\ntext\n\n## U\nmore\n",
    "a.yaml": "a: 1\nb:\n  - c\n",
    "a.toml": "a = 1\n[b]\nc = 2\n",
    "a.json": '{"a": 1,\n "b": [1, 2]}\n',
}


@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n\n", "\r\n\r\n"])
@pytest.mark.parametrize("path", ["a.py", "a.md", "a.json", "a.txt", "a.unknown"])
def test_empty_and_blank_files_give_no_chunks(path: str, text: str) -> None:
    assert chunk_file(path, text) == []


def test_invalid_utf8_decoded_with_replacement_and_surrogateescape() -> None:
    raw = (
        b"import os\n\ndef f():\n    return '\xff\xfe caf\xc3\xa9 \xe9'\n\n\n"
        b"class C:\n    def m(self):\n        pass\n"
    )
    for errors in ("replace", "surrogateescape"):
        text = raw.decode("utf-8", errors)
        chunks = chunk_file("bad.py", text)
        check_invariants(text, chunks)
        assert [c.symbol for c in chunks] == [None, "f", "C", "m"]
        f = chunks[1]
        assert ("\ufffd" if errors == "replace" else "\udcff") in f.text
        assert len(f.chunk_hash) == 16  # hashable even with lone surrogates


def test_lone_surrogates_anywhere() -> None:
    text = "def f():\n    return '\ud800'\n\ud83d\n# \udfff\n"
    for path in ("x.py", "x.md", "x.yaml", "x.json", "x.txt"):
        chunks = chunk_file(path, text)
        check_invariants(text, chunks)
        assert all(short_hash(c.text) for c in chunks)


def test_line_numbers_follow_splitlines_with_unusual_line_breaks() -> None:
    # form feed (common in old Python/C sources), U+2028 inside a string, one stray CRLF
    text = "import os\n\x0c\ndef f():\n    s = 'a\u2028b'\n    return s\r\ndef g():\n    pass\n"
    lines = text.splitlines()
    chunks = chunk_file("odd.py", text)
    check_invariants(text, chunks)
    g = [c for c in chunks if c.symbol == "g"][0]
    assert lines[g.start_line - 1] == "def g():"
    f = [c for c in chunks if c.symbol == "f"][0]
    assert lines[f.start_line - 1] == "def f():" and f.text.endswith("return s")


def test_old_mac_line_endings() -> None:
    text = "import os\r\rdef f():\r    return 1\r\rclass C:\r    def m(self):\r        pass\r"
    chunks = chunk_file("mac.py", text)
    check_invariants(text, chunks)


def test_crlf_and_lf_give_the_same_ranges() -> None:
    text = dedent(samples.PYTHON).lstrip("\n")
    lf = chunk_file("a.py", text)
    crlf = chunk_file("a.py", text.replace("\n", "\r\n"))
    assert [(c.symbol, span(c), c.text) for c in lf] == [(c.symbol, span(c), c.text) for c in crlf]


def test_unparseable_code_falls_back_to_lines() -> None:
    text = "\n".join(")))) ((( ]]] {{{ @@@ :::" for _ in range(200)) + "\n"
    chunks = chunk_file("broken.py", text)
    check_invariants(text, chunks)
    assert {c.symbol_kind for c in chunks} == {"lines"}


def test_internal_failure_degrades_to_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(self):
        raise RuntimeError("grammar bug")

    monkeypatch.setattr(code_module.CodeChunker, "segments", explode)
    text = "def f():\n    pass\n"
    chunks = chunk_file("a.py", text)
    check_invariants(text, chunks)
    assert [c.symbol_kind for c in chunks] == ["lines"]


def test_nul_bytes_and_control_characters() -> None:
    text = "def f():\n    return '\x00\x01\x1b'\n\x00\x00\n"
    chunks = chunk_file("ctl.py", text)
    check_invariants(text, chunks)


_INSERTS = [
    "{", "}", "\n", "(", "class ", "def ", "fn ", "#", "```", '"""', "\r", "\ufffd", "\udc80", "\x0c", "    ",
]


def _mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 25)):
        if not chars:
            break
        i = rng.randrange(len(chars))
        roll = rng.random()
        if roll < 0.35:
            del chars[i : i + rng.randint(1, 40)]
        elif roll < 0.7:
            chars.insert(i, rng.choice(_INSERTS))
        else:
            chars[i] = chr(rng.randrange(0x20, 0x3000))
    return "".join(chars)


@pytest.mark.parametrize("path", sorted(LANGUAGE_SAMPLES))
def test_mutated_sources_keep_the_invariants(path: str) -> None:
    rng = random.Random(path)
    base = dedent(LANGUAGE_SAMPLES[path]).lstrip("\n")
    for _ in range(40):
        text = _mutate(rng, base)
        check_invariants(text, chunk_file(path, text))
