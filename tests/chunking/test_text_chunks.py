"""Markdown/reST sections, YAML/TOML/JSON blocks and the plain line windows."""
from __future__ import annotations

from textwrap import dedent

from probe_core.chunking import chunk_file
from probe_core.chunking.config_blocks import COALESCE_LINES

from .chunk_checks import check_invariants, span


def chunks_of(path: str, source: str):
    text = dedent(source).lstrip("\n")
    chunks = chunk_file(path, text)
    check_invariants(text, chunks)
    return chunks


def summary(chunks):
    return [(c.symbol, c.symbol_kind, c.parent_symbol, span(c)) for c in chunks]


MARKDOWN = """
---
title: Guide
---
Intro paragraph.

# Probe

Some text.

## Install
### Linux

    apt-get install probe

```bash
# not a heading
make
```

Setext Heading
--------------

body

## Usage ##
run it
"""


def test_markdown_sections_by_heading() -> None:
    chunks = chunks_of("docs/guide.md", MARKDOWN)
    assert summary(chunks) == [
        (None, "section", None, (1, 4)),  # front matter and intro
        ("Probe", "section", None, (6, 8)),
        ("Install", "section", "Probe", (10, 18)),  # an empty section joins the next one
        ("Setext Heading", "section", "Probe", (20, 23)),
        ("Usage", "section", "Probe", (25, 26)),
    ]
    assert all(c.chunk_kind == "doc" and c.language == "markdown" for c in chunks)


def test_long_markdown_section_is_windowed() -> None:
    body = "\n".join(f"line {i} of the section" for i in range(400))
    text = f"# Big\n{body}\n# Next\nend\n"
    chunks = chunk_file("big.md", text)
    check_invariants(text, chunks)
    big = [c for c in chunks if c.symbol == "Big"]
    assert len(big) >= 3 and all(c.is_fragment for c in big)
    assert all(20 <= a.end_line - b.start_line + 1 <= 40 for a, b in zip(big, big[1:]))
    assert [span(c) for c in chunks if c.symbol == "Next"] == [(402, 403)]


def test_rst_sections() -> None:
    chunks = chunks_of("docs/index.rst", """
        =====
        Title
        =====

        Intro.

        Section
        -------

        Text.

        Sub
        ~~~
        more
        """)
    assert summary(chunks) == [
        ("Title", "section", None, (1, 5)),
        ("Section", "section", "Title", (7, 10)),
        ("Sub", "section", "Section", (12, 14)),
    ]


def test_yaml_top_level_keys_coalesced() -> None:
    chunks = chunks_of("ci.yml", """
        # CI config
        name: ci
        on: [push]
        jobs:
          test:
            runs-on: ubuntu
        """)
    assert summary(chunks) == [("name, on, jobs", "block", None, (1, 6))]
    assert chunks[0].chunk_kind == "config"


def test_yaml_big_blocks_stand_alone_and_documents_split() -> None:
    steps = "\n".join(f"  - run: step {i}" for i in range(COALESCE_LINES + 10))
    text = f"name: x\n# the steps\nsteps:\n{steps}\nafter: 1\n---\n- name: play\n  hosts: all\n- name: two\n"
    chunks = chunk_file("workflow.yaml", text)
    check_invariants(text, chunks)
    assert [c.symbol for c in chunks] == ["name", "steps", "after", "play, two"]
    steps_chunk = chunks[1]
    assert steps_chunk.start_line == 2  # the comment above the key goes with it
    assert chunks[3].start_line == chunks[2].end_line + 1 and chunks[3].text.startswith("---")


def test_toml_tables() -> None:
    deps = "\n".join(f'dep{i} = "1.0"' for i in range(COALESCE_LINES))
    text = (
        'title = "x"\n\n[project]\nname = "probe"\n\n# tools\n[[tool.items]]\na = 1\n\n'
        f"[dependencies]\n{deps}\n"
    )
    chunks = chunk_file("pyproject.toml", text)
    check_invariants(text, chunks)
    assert summary(chunks) == [
        ("[project], [[tool.items]]", "block", None, (1, 8)),
        ("[dependencies]", "block", None, (10, 10 + COALESCE_LINES)),
    ]


def test_json_top_level_keys() -> None:
    scripts = ",\n".join(f'    "s{i}": "run {i}"' for i in range(COALESCE_LINES))
    text = '{\n  "name": "probe",\n  "version": "1.0",\n  "scripts": {\n' + scripts + "\n  }\n}\n"
    chunks = chunk_file("package.json", text)
    check_invariants(text, chunks)
    assert [c.symbol for c in chunks] == ["name, version", "scripts"]
    assert chunks[0].start_line == 1 and chunks[-1].end_line == len(text.splitlines())


def test_json_array_falls_back_to_lines() -> None:
    text = "[\n" + ",\n".join(f"  {i}" for i in range(10)) + "\n]\n"
    chunks = chunk_file("data.json", text)
    check_invariants(text, chunks)
    assert [(c.symbol_kind, c.chunk_kind) for c in chunks] == [("lines", "config")]


def test_broken_toml_falls_back_to_lines() -> None:
    text = "[project\nname = \n"
    chunks = chunk_file("bad.toml", text)
    check_invariants(text, chunks)
    assert [c.symbol_kind for c in chunks] == ["lines"]


def test_plain_text_windows_150_30() -> None:
    text = "\n".join(f"row {i}" for i in range(1, 401)) + "\n"
    chunks = chunk_file("notes.txt", text)
    check_invariants(text, chunks)
    assert all(c.symbol_kind == "lines" and c.symbol is None and c.chunk_kind == "doc" for c in chunks)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 400
    for a, b in zip(chunks, chunks[1:]):
        assert a.end_line - a.start_line + 1 <= 150
        assert a.end_line - b.start_line + 1 == 30


def test_short_text_file_is_one_chunk() -> None:
    chunks = chunks_of("Makefile", "all:\n\tmake build\n")
    assert summary(chunks) == [(None, "lines", None, (1, 2))]
    assert chunks[0].chunk_kind == "code" and chunks[0].language == "text"


def test_unknown_extension_is_chunked_as_text() -> None:
    chunks = chunks_of("data/thing.xyz", "a\nb\n")
    assert [(c.language, c.symbol_kind) for c in chunks] == [("text", "lines")]


def test_shebang_script_without_extension_uses_its_language() -> None:
    chunks = chunks_of("bin/tool", "#!/usr/bin/env python3\nimport sys\n\ndef main():\n    pass\n")
    assert {c.language for c in chunks} == {"python"}
    assert [c.symbol for c in chunks] == [None, "main"]
