"""Split a file's text into retrievable `Chunk`s.

Code is cut along its syntax tree (tree-sitter): functions, classes, methods and type
definitions whole, a class's methods each on their own, top-level statements into "header"
chunks. Markdown and reST are cut by section, YAML/TOML/JSON by top-level block, anything
else into overlapping line windows. Whatever the text, `chunk_file` returns chunks whose line
numbers match `text.splitlines()` and never raises.

Modules: `languages` (path -> language, chunk kind), `grammars` (per-language node tables),
`definitions` (which node is a function/class/..., its name and parent), `code` (the
syntax-tree walker), `text` (Markdown, reST, lines), `config_blocks` (YAML/TOML/JSON),
`segments` (line ranges -> size-bounded Chunks).
"""
from __future__ import annotations

import logging
import re

from probe_core.chunking.code import CodeChunker
from probe_core.chunking.config_blocks import (
    json_segments,
    toml_segments,
    yaml_segments,
)
from probe_core.chunking.grammars import spec_for
from probe_core.chunking.languages import (
    chunk_kind_for,
    is_test_path,
    language_for_path,
)
from probe_core.chunking.segments import Segment, SourceLines, fold_trivial, to_chunks
from probe_core.chunking.text import line_segments, markdown_segments, rst_segments
from probe_core.records import Chunk

__all__ = ["chunk_file", "chunk_kind_for", "is_test_path", "language_for_path"]

log = logging.getLogger(__name__)

_SHEBANG = re.compile(r"#!\s*\S*?(?:/env\s+(?:-\S+\s+)*)?/?(\w+?)(?:[\d.]*)(?:\s|$)")
_INTERPRETERS = {
    "python": "python", "sh": "shell", "bash": "shell", "zsh": "shell", "ksh": "shell",
    "dash": "shell", "node": "javascript", "ruby": "ruby", "perl": "perl", "php": "php",
}


def _sniff_shebang(text: str) -> str | None:
    """Language of an extension-less script from its `#!` line."""
    if not text.startswith("#!"):
        return None
    match = _SHEBANG.match(text[: text.find("\n") if "\n" in text else 200])
    return _INTERPRETERS.get(match.group(1)) if match else None


def _segments(language: str, src: SourceLines, text: str) -> list[Segment]:
    if src.long_line_chars() > len(text) // 2:
        # minified or generated: no structure worth finding, and parsing it is slow
        return line_segments(src)
    spec = spec_for(language, text)
    if spec is not None:
        segments = CodeChunker(spec, src, text).segments()
        return segments if segments is not None else line_segments(src)
    if language == "markdown":
        return markdown_segments(src)
    if language == "rst":
        return rst_segments(src)
    if language == "yaml":
        return yaml_segments(src)
    if language in ("toml", "json"):
        blocks = toml_segments(src, text) if language == "toml" else json_segments(src, text)
        return blocks if blocks is not None else line_segments(src)
    return line_segments(src)


def chunk_file(path: str, text: str) -> list[Chunk]:
    """Chunks of one file, in line order; [] for an empty or blank file. Never raises.

    `path` (posix, relative to the workspace root) picks the language and chunk kind and is
    copied into each chunk. Files of unknown language are chunked by lines as "text" (or as
    the language a `#!` line names). Every non-blank line lands in at least one chunk, and
    `chunk.text` is exactly lines start_line..end_line of `text.splitlines()` joined by "\\n"
    (the one exception: a single line over MAX_CHARS characters is a chunk holding only the
    start of that line). No two chunks of a file share the same line range.
    """
    if not text or not text.strip():
        return []
    known = language_for_path(path) or _sniff_shebang(text)
    kind = chunk_kind_for(path, known)
    language = known or "text"
    src = SourceLines(text)
    try:
        segments = fold_trivial(_segments(language, src, text))
        return to_chunks(segments, src, path=path, language=language, chunk_kind=kind)
    except Exception:  # a grammar bug must cost one file its structure, not the whole index
        log.warning("structured chunking failed for %s; chunking by lines", path, exc_info=True)
        return to_chunks(line_segments(src), src, path=path, language=language, chunk_kind=kind)
