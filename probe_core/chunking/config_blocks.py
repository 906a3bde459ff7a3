"""Configuration files into segments by top-level block: YAML keys, TOML tables, JSON keys.

Small neighbouring blocks are coalesced (a chunk per `name = "x"` line helps nobody); a block
too long for one chunk is windowed later by segments.to_chunks like any other.
"""
from __future__ import annotations

import re

from tree_sitter import Node

from probe_core.chunking.grammars import GrammarSpec, parser_for
from probe_core.chunking.segments import RowMap, Segment, SourceLines

# Consecutive blocks are merged while the merged chunk stays within this many lines.
COALESCE_LINES = 60
_MAX_NAMES = 4  # names listed in the symbol of a coalesced chunk

_YAML_KEY = re.compile(r"""(?!---|\.\.\.)("[^"]*"|'[^']*'|[^\s#:\-?&*!|>%@`'"][^:#]*?)\s*:(?:\s|$)""")
_YAML_SEQ_ITEM = re.compile(r"-(?:\s+(?:name\s*:\s*(.*\S))?.*)?")
_TOML = GrammarSpec(grammar="toml")
_JSON = GrammarSpec(grammar="json")

Block = tuple[int, str | None]  # (first line, name): a block runs until the next one starts


def _attach_comments(starts: list[Block], lines: list[str], prefixes: tuple[str, ...]) -> list[Block]:
    """Move each block start up over the comment lines right above it (no blank line between)."""
    moved: list[Block] = []
    floor = 0
    for start, name in starts:
        while start - 1 >= floor and lines[start - 1].lstrip().startswith(prefixes):
            start -= 1
        moved.append((start, name))
        floor = start + 1
    return moved


def _coalesce(starts: list[Block], src: SourceLines, breaks: frozenset[int] = frozenset()) -> list[Segment]:
    """Blocks (each up to the next start) merged into groups of at most COALESCE_LINES lines.

    Lines before the first block form a block of their own. A group never spans a line in
    `breaks` (YAML document separators).
    """
    last = len(src) - 1
    if not starts or starts[0][0] > 0:
        starts = [(0, None), *starts]
    ranges = []
    for k, (start, name) in enumerate(starts):
        end = starts[k + 1][0] - 1 if k + 1 < len(starts) else last
        if end >= start and src.trim(start, end) is not None:
            ranges.append((start, end, name))
    segments: list[Segment] = []
    group: list[tuple[int, int, str | None]] = []

    def flush() -> None:
        if group:
            names = [n for _, _, n in group if n]
            symbol = ", ".join(names[:_MAX_NAMES]) + (", ..." if len(names) > _MAX_NAMES else "")
            segments.append(Segment(group[0][0], group[-1][1], symbol or None, "block"))
            group.clear()

    for block in ranges:
        start, end, _ = block
        if group and (end - group[0][0] + 1 > COALESCE_LINES or start in breaks):
            flush()
        group.append(block)
    flush()
    return segments


def yaml_segments(src: SourceLines) -> list[Segment]:
    """Top-level mapping keys (or top-level sequence items) of each YAML document."""
    starts: list[Block] = []
    breaks: set[int] = set()
    in_mapping = False
    for i, line in enumerate(src.lines):
        if not line or line[0] in " \t#":
            continue
        if line.startswith(("---", "...")):
            starts.append((i, None))
            breaks.add(i)
            in_mapping = False
            continue
        if (key := _YAML_KEY.match(line)) is not None:
            starts.append((i, key.group(1).strip("\"'")))
            in_mapping = True
        elif not in_mapping and (item := _YAML_SEQ_ITEM.fullmatch(line)) is not None:
            starts.append((i, (item.group(1) or "").strip("\"'") or None))
    starts = _attach_comments(starts, src.lines, ("#",))
    return _coalesce(starts, src, frozenset(breaks))


def _block_name(node: Node, grammar: str) -> str | None:
    if grammar == "json":
        key = node.child_by_field_name("key")
        return key.text.decode("utf-8", "replace").strip("\"") if key is not None else None
    if not node.named_child_count:
        return None
    name = node.named_children[0].text.decode("utf-8", "replace")
    return f"[[{name}]]" if node.type == "table_array_element" else f"[{name}]"


def _tree_starts(spec: GrammarSpec, text: str, src: SourceLines) -> list[Block] | None:
    """Block starts from the syntax tree: JSON top-level pairs, TOML tables."""
    root = parser_for(spec).parse(text.encode("utf-8", "surrogatepass")).root_node
    if root.has_error:
        return None
    if spec.grammar == "json":
        top = root.named_children[0] if root.named_child_count else None
        if top is None or top.type != "object":
            return None
        nodes = [c for c in top.named_children if c.type == "pair"]
    else:
        nodes = [c for c in root.named_children if c.type in ("table", "table_array_element")]
    rows = RowMap(text, len(src))
    starts: list[Block] = []
    for node in nodes:
        line = rows.span(node.start_point[0], node.start_point[0])[0]
        if starts and starts[-1][0] >= line:
            continue  # several keys on one line: the first names the block
        starts.append((line, _block_name(node, spec.grammar)))
    return starts


def toml_segments(src: SourceLines, text: str) -> list[Segment] | None:
    """Root keys, then one block per `[table]` / `[[array]]`; None when TOML does not parse."""
    starts = _tree_starts(_TOML, text, src)
    if starts is None:
        return None
    return _coalesce(_attach_comments(starts, src.lines, ("#",)), src)


def json_segments(src: SourceLines, text: str) -> list[Segment] | None:
    """One block per key of the top-level object; None for arrays, scalars and broken JSON."""
    starts = _tree_starts(_JSON, text, src)
    if starts is None:
        return None
    return _coalesce(_attach_comments(starts, src.lines, ("//", "/*", "*")), src)
