"""Units too large for one chunk: line windows with overlap, character caps, minified files."""
from __future__ import annotations

import time

from probe_core.chunking import chunk_file
from probe_core.chunking.segments import MAX_CHARS, MAX_LINES, line_windows

from .chunk_checks import check_invariants, span


def test_line_windows_are_balanced_and_overlap() -> None:
    assert line_windows(0, 99) == [(0, 99)]
    windows = line_windows(0, 399)
    assert windows[0][0] == 0 and windows[-1][1] == 399
    for (s1, e1), (s2, e2) in zip(windows, windows[1:]):
        assert 20 <= e1 - s2 + 1 <= 40  # overlap
        assert e1 - s1 + 1 <= MAX_LINES and e2 - s2 + 1 <= MAX_LINES
    lengths = [e - s + 1 for s, e in windows]
    assert max(lengths) - min(lengths) <= 3  # no sliver at the end


def test_400_line_function_becomes_overlapping_fragments() -> None:
    body = "\n".join(f"    total += {i}" for i in range(400))
    text = f"import os\n\n\ndef big():\n    total = 0\n{body}\n    return total\n\n\ndef small():\n    pass\n"
    chunks = chunk_file("calc.py", text)
    check_invariants(text, chunks)
    big = [c for c in chunks if c.symbol == "big"]
    assert len(big) >= 3
    assert all(c.is_fragment and c.symbol_kind == "function" and c.parent_symbol is None for c in big)
    assert big[0].start_line == 4 and big[-1].end_line == 406  # the whole function, split
    for first, second in zip(big, big[1:]):
        overlap = first.end_line - second.start_line + 1
        assert 20 <= overlap <= 40
        assert first.end_line - first.start_line + 1 <= MAX_LINES
    small = [c for c in chunks if c.symbol == "small"]
    assert len(small) == 1 and not small[0].is_fragment


def test_huge_method_keeps_its_parent() -> None:
    body = "\n".join(f"        x = {i}" for i in range(300))
    text = f"class Big:\n    def run(self):\n{body}\n"
    chunks = chunk_file("big.py", text)
    check_invariants(text, chunks)
    run = [c for c in chunks if c.symbol == "run"]
    assert len(run) >= 2
    assert all(c.parent_symbol == "Big" and c.symbol_kind == "method" and c.is_fragment for c in run)


def test_long_header_is_split() -> None:
    text = "\n".join(f"CONST_{i} = {i}" for i in range(400)) + "\n\ndef f():\n    pass\n"
    chunks = chunk_file("consts.py", text)
    check_invariants(text, chunks)
    headers = [c for c in chunks if c.symbol_kind == "header"]
    assert len(headers) >= 3 and all(c.end_line - c.start_line + 1 <= MAX_LINES for c in headers)
    assert span([c for c in chunks if c.symbol == "f"][0]) == (402, 403)


def test_wide_lines_are_capped_by_characters() -> None:
    line = "    value = '" + "x" * 300 + "'"
    text = "def wide():\n" + "\n".join(line for _ in range(100)) + "\n"
    chunks = chunk_file("wide.py", text)
    check_invariants(text, chunks)
    assert len(chunks) >= 4
    assert all(len(c.text) <= MAX_CHARS and c.symbol == "wide" and c.is_fragment for c in chunks)


def test_minified_javascript_5mb_single_line_is_bounded_and_fast() -> None:
    text = "var a=function(b){return b+1};" * (5_000_000 // 30)
    assert len(text) >= 4_900_000 and "\n" not in text
    started = time.perf_counter()
    chunks = chunk_file("dist/app.min.js", text)
    elapsed = time.perf_counter() - started
    assert elapsed < 3.0
    assert len(chunks) == 1
    assert chunks[0].start_line == chunks[0].end_line == 1 and chunks[0].is_fragment
    assert chunks[0].text == text[:MAX_CHARS]


def test_one_long_line_does_not_cost_the_file_its_structure() -> None:
    blob = "DATA = '" + "a" * 9_000 + "'"
    functions = "\n\n".join(f"def f{i}():\n    return DATA + '{i}'" for i in range(300))
    text = f"import os\n{blob}\n\n\n{functions}\n"
    chunks = chunk_file("gen.py", text)
    check_invariants(text, chunks)
    assert len([c for c in chunks if c.symbol_kind == "function"]) == 300
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    blob_chunks = [c for c in chunks if c.start_line == c.end_line == 2]
    assert len(blob_chunks) == 1 and blob_chunks[0].text == blob[:MAX_CHARS]  # truncated


def test_mostly_minified_file_is_chunked_by_lines() -> None:
    text = "import os\nDATA = '" + "a" * 20_000 + "'\n\ndef f():\n    return DATA\n"
    chunks = chunk_file("gen.py", text)
    check_invariants(text, chunks)
    assert {c.symbol_kind for c in chunks} == {"lines"}
