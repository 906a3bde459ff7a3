"""Prose into segments: Markdown and reStructuredText by section, anything else by lines.

Line scanners, not parsers: headings are all a chunker needs, and a scanner never chokes on
the half-broken Markdown real repositories hold.
"""
from __future__ import annotations

import re

from probe_core.chunking.segments import Segment, SourceLines

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_SETEXT_UNDERLINE = re.compile(r" {0,3}(?:={2,}|-{2,})[ \t]*")
# a line that cannot be a setext heading's text: list item, quote, table row, HTML
_NOT_SETEXT_TEXT = re.compile(r"\s*(?:[-*+>|<]|\d+[.)])")
_RST_ADORNMENT = re.compile(r"([=\-`:'\"~^_*+#<>.])\1{2,}\s*")


def line_segments(src: SourceLines) -> list[Segment]:
    """The whole file as one "lines" segment: to_chunks cuts it into overlapping windows."""
    bounds = src.trim(0, len(src) - 1)
    return [Segment(*bounds, symbol_kind="lines")] if bounds is not None else []


def _front_matter_end(lines: list[str]) -> int:
    """Index of the line closing a leading `---` YAML front matter block, or -1."""
    if not lines or lines[0].strip() != "---":
        return -1
    for i in range(1, min(len(lines), 200)):
        if lines[i].strip() in ("---", "..."):
            return i
    return -1


def _markdown_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line, level, text) of each heading, skipping fenced code and front matter."""
    headings: list[tuple[int, int, str]] = []
    fence: str | None = None
    i = _front_matter_end(lines) + 1
    while i < len(lines):
        line = lines[i]
        fence_match = _FENCE.match(line)
        if fence is not None:
            closing = fence_match.group(1) if fence_match else ""
            if closing[:1] == fence[0] and len(closing) >= len(fence) and line.strip() == closing:
                fence = None
        elif fence_match:
            fence = fence_match.group(1)
        elif (atx := _ATX.fullmatch(line)) is not None:
            headings.append((i, len(atx.group(1)), (atx.group(2) or "").strip()))
        elif (
            i + 1 < len(lines)
            and line.strip()
            and _SETEXT_UNDERLINE.fullmatch(lines[i + 1])
            and not _NOT_SETEXT_TEXT.match(line)
            and (i == 0 or not lines[i - 1].strip() or (headings and headings[-1][0] == i - 1))
        ):
            level = 1 if lines[i + 1].lstrip().startswith("=") else 2
            headings.append((i, level, line.strip()))
            i += 1  # the underline is part of the heading
        i += 1
    return headings


def _rst_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line, level, text) of reST section titles; levels follow first use of each adornment."""
    styles: list[tuple[str, bool]] = []
    headings: list[tuple[int, int, str]] = []
    i = 0
    while i + 1 < len(lines):
        title, under = lines[i], lines[i + 1]
        if title.strip() and not title[0].isspace() and not _RST_ADORNMENT.fullmatch(title) \
                and _RST_ADORNMENT.fullmatch(under) and len(under.rstrip()) >= len(title.rstrip()):
            overline = i > 0 and lines[i - 1].rstrip() == under.rstrip()
            style = (under[0], overline)
            if style not in styles:
                styles.append(style)
            headings.append((i - 1 if overline else i, styles.index(style) + 1, title.strip()))
            i += 2
            continue
        i += 1
    return headings


def _section_segments(src: SourceLines, headings: list[tuple[int, int, str]]) -> list[Segment]:
    """One segment per section; a heading with no text of its own joins the section after it."""
    if not headings:
        return line_segments(src)
    segments: list[Segment] = []
    if headings[0][0] > 0:
        segments.append(Segment(0, headings[0][0] - 1, symbol_kind="section"))
    stack: list[tuple[int, str]] = []  # enclosing headings: (level, text)
    pending: Segment | None = None  # an empty section waiting for the next one
    for k, (line, level, title) in enumerate(headings):
        end = headings[k + 1][0] - 1 if k + 1 < len(headings) else len(src) - 1
        while stack and stack[-1][0] >= level:
            stack.pop()
        parent = stack[-1][1] if stack else None
        stack.append((level, title))
        body = src.trim(line + 1, end)
        # a setext heading's underline is not a body
        has_body = body is not None and not (
            body[0] == body[1] == line + 1 and _is_underline(src.lines[line + 1])
        )
        if pending is not None:
            pending.end = end
        else:
            pending = Segment(line, end, title or None, "section", parent)
        if has_body or k + 1 == len(headings):
            segments.append(pending)
            pending = None
    return segments


def _is_underline(line: str) -> bool:
    return bool(_SETEXT_UNDERLINE.fullmatch(line) or _RST_ADORNMENT.fullmatch(line))


def markdown_segments(src: SourceLines) -> list[Segment]:
    """Sections split at ATX (`## x`) and setext headings; symbol = heading text."""
    return _section_segments(src, _markdown_headings(src.lines))


def rst_segments(src: SourceLines) -> list[Segment]:
    """Sections split at reST titles (text over a `====` / `----` underline)."""
    return _section_segments(src, _rst_headings(src.lines))
