"""Source code into semantic segments with tree-sitter: definitions whole, classes split.

One pass over the top level of the syntax tree (and into class bodies, never into function
bodies). Each definition becomes one segment; a class becomes a segment for its header (the
declaration line, docstring and fields up to the first method) plus one per method; everything
else at the top level (imports, constants, `if __name__ == ...`) becomes "header" segments, so
every non-blank line of the file lands in some chunk.
"""
from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from probe_core.chunking.definitions import (
    Definition,
    DefinitionFinder,
    clean_symbol,
    node_text,
)
from probe_core.chunking.grammars import GrammarSpec, parse
from probe_core.chunking.segments import RowMap, Segment, SourceLines

# Above this share of lines inside top-level ERROR nodes the tree is not trusted.
_MAX_ERROR_SHARE = 0.5
# Containers that add methods to a type declared elsewhere (Rust impl, Swift extension): a
# header that is only the declaration line(s) is folded into the first method's chunk.
_RESTATING_KINDS = frozenset({"impl", "extension"})


class CodeChunker:
    """Segments for one parsed file; create one per file."""

    def __init__(self, spec: GrammarSpec, src: SourceLines, text: str) -> None:
        self.spec = spec
        self.src = src
        self.rows = RowMap(text, len(src))
        self.text = text
        self.definitions = DefinitionFinder(spec, self._lines)

    # -- entry point -------------------------------------------------------------------------

    def segments(self) -> list[Segment] | None:
        """The file's segments in line order, or None when the parse is too broken to use."""
        root = parse(self.spec, self.text, share=True).root_node  # the graph's extractor reads it next
        if self._mostly_errors(root):
            return None
        items = list(self._flatten(root.named_children, None))
        segments, _ = self._block(items, 0, len(self.src) - 1, container=None)
        return segments

    def _mostly_errors(self, root: Node) -> bool:
        # The root itself may be an ERROR node whose children are still sound statements:
        # judge by how much of the file sits inside ERROR children.
        if not root.has_error:
            return False
        broken = 0
        for node in root.named_children:
            if node.type == "ERROR":
                start, end = self._lines(node)
                broken += end - start + 1
        return broken > _MAX_ERROR_SHARE * len(self.src)

    # -- structure ---------------------------------------------------------------------------

    def _lines(self, node: Node) -> tuple[int, int]:
        start_row = node.start_point[0]
        end_row, end_col = node.end_point
        if end_col == 0 and end_row > start_row:
            end_row -= 1  # the node ends with its newline: the next row is not part of it
        return self.rows.span(start_row, end_row)

    def _flatten(self, nodes: list[Node], parent: str | None) -> Iterator[tuple[Node, str | None]]:
        """Block items with namespaces (and #ifdefs) opened up; each with its parent name."""
        for node in nodes:
            opened = self._namespace(node)
            if opened is None:
                yield node, parent
                continue
            # its own lines (`namespace x {`, `}`) are left to the gaps between definitions
            name, children = opened
            yield from self._flatten(children, name or parent)

    def _namespace(self, node: Node) -> tuple[str | None, list[Node]] | None:
        spec = self.spec
        if node.type not in spec.namespaces:
            # TypeScript: `namespace X {}` is an expression statement, `declare module` ambient
            if node.type in ("expression_statement", "ambient_declaration", "export_statement"):
                inner = node.named_children[-1] if node.named_child_count else None
                if inner is not None and inner.type in spec.namespaces:
                    return self._namespace(inner)
            return None
        body = node.child_by_field_name("body")
        if body is None:
            if node.type not in spec.anonymous_namespaces:
                return None  # `mod foo;` / `namespace A\B;`: a plain declaration
            children = [c for c in node.named_children if c != node.child_by_field_name("name")]
            return None, children
        name = None
        if node.type not in spec.anonymous_namespaces:
            name_node = node.child_by_field_name("name")
            name = clean_symbol(node_text(name_node).strip("\"'")) if name_node is not None else None
        return name, body.named_children

    def _members(self, node: Node) -> list[Node]:
        """A container's member nodes: named children, with body nodes opened up."""
        members: list[Node] = []
        for child in node.named_children:
            if child.type in self.spec.bodies:
                members.extend(self._members(child))
            else:
                members.append(child)
        return members

    # -- blocks ------------------------------------------------------------------------------

    def _block(
        self, items: list[tuple[Node, str | None]], first: int, last: int, container: Definition | None
    ) -> tuple[list[Segment], list[Definition]]:
        """Segments covering lines first..last: one per definition, the rest as header/gaps."""
        units: list[Definition] = []
        comment_lines: set[int] = set()
        in_class = container is not None
        for node, parent in items:
            if node.type in self.spec.comments:
                if self._starts_line(node):
                    start, end = self._lines(node)
                    comment_lines.update(range(start, end + 1))
                continue
            unit = self.definitions.classify(node, in_class)
            if unit is None:
                continue
            unit.start, unit.end = self._lines(node)
            if unit.parent is None:
                unit.parent = parent
            units.append(unit)

        units.sort(key=lambda u: u.start)
        kept: list[Definition] = []
        for unit in units:
            floor = kept[-1].end + 1 if kept else first
            while unit.start - 1 >= floor and unit.start - 1 in comment_lines:
                unit.start -= 1  # doc comments and attributes right above belong to it
            if kept and unit.start <= kept[-1].end:
                kept[-1].end = max(kept[-1].end, unit.end)  # two definitions on one line
                continue
            kept.append(unit)

        segments: list[Segment] = []
        cursor = first
        for unit in kept:
            if unit.start > cursor:
                self._gap(segments, cursor, unit.start - 1, first, container)
            segments.extend(self._unit_segments(unit))
            cursor = unit.end + 1
        if cursor <= last:
            self._gap(segments, cursor, last, first, container)
        return segments, kept

    def _gap(
        self, out: list[Segment], start: int, end: int, first: int, container: Definition | None
    ) -> None:
        """Lines between definitions: the header of the file, or of the class they sit in."""
        bounds = self.src.trim(start, end)
        if bounds is None:
            return
        start, end = bounds
        if out:
            # closers of the block just left (`}`, `end`) go with it, not with what follows
            closers = start
            while closers <= end and self.src.is_trivial(closers, closers):
                closers += 1
            if closers > start:
                out.append(Segment(start, closers - 1, trivial=True))
                bounds = self.src.trim(closers, end)
                if bounds is None:
                    return
                start, end = bounds
        if container is None:
            out.append(Segment(start, end, symbol_kind="header", trivial=self.src.is_trivial(start, end)))
        elif start == first or not out:
            out.append(Segment(start, end, container.name, container.kind, container.parent))
        else:
            # fields between methods, or a closing brace: a piece of the class's own text
            out.append(
                Segment(start, end, container.name, container.kind, container.parent,
                        is_fragment=True, trivial=self.src.is_trivial(start, end))
            )

    def _unit_segments(self, unit: Definition) -> list[Segment]:
        whole = [Segment(unit.start, unit.end, unit.name, unit.kind, unit.parent)]
        if not unit.container:
            return whole
        items = list(self._flatten(self._members(unit.inner), unit.name))
        segments, members = self._block(items, unit.start, unit.end, container=unit)
        declaration_line = self._lines(unit.inner)[0]
        if not members or members[0].start <= declaration_line:
            return whole  # nothing to split out, or a one-line class
        head = segments[0]
        body = unit.inner.child_by_field_name("body")
        if unit.kind in _RESTATING_KINDS and body is not None and len(segments) > 1 \
                and head.end <= self._lines(body)[0]:
            # `impl Display for Point {` alone says nothing a search needs on its own: it
            # opens the first method's chunk instead (saving a chunk per impl block)
            segments[1].start = head.start
            return segments[1:]
        return segments

    def _starts_line(self, node: Node) -> bool:
        start, _ = self._lines(node)
        line = self.src.lines[start] if start < len(self.src) else ""
        return len(line) - len(line.lstrip()) == node.start_point[1]
