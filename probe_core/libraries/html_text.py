"""HTML → readable text with the standard library's ``html.parser``.

Scripts, styles and other non-content elements are dropped; headings become Markdown headings
(``## Title``) so the section chunker cuts the text where the page has sections; block elements
(paragraphs, list items, table rows, ``<br>``) end lines; ``<pre>`` keeps its whitespace; runs of
blank lines collapse to one. Entities are decoded by the parser.
"""
from __future__ import annotations

import re
from html.parser import HTMLParser

SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "title", "iframe", "object"})
HEADINGS = {f"h{i}": i for i in range(1, 7)}
BLOCKS = frozenset({
    "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote", "ul", "ol",
    "dl", "dt", "dd", "table", "thead", "tbody", "tr", "figure", "figcaption", "form", "hr", "address",
    "details", "summary", "body", "html",
})
_SPACE = re.compile(r"[ \t\r\f\v\n]+")


class _Extractor(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.heading: int | None = None
        self.title: list[str] = []
        self.in_title = False

    # -- helpers ---------------------------------------------------------------------------
    def _flush(self) -> None:
        text = "".join(self.current)
        self.current = []
        if self.pre_depth:
            self.lines.extend(text.split("\n"))
            return
        text = _SPACE.sub(" ", text).strip()
        if text:
            self.lines.append(text)

    def _blank(self) -> None:
        self._flush()
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    # -- parser events ---------------------------------------------------------------------
    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self.in_title = True
        if tag in SKIP:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if tag in HEADINGS:
            self._blank()
            self.heading = HEADINGS[tag]
            self.current.append("#" * self.heading + " ")
        elif tag == "pre":
            self._blank()
            self.pre_depth += 1
        elif tag == "li":
            self._flush()
            self.current.append("- ")
        elif tag == "br":
            self._flush()
        elif tag in ("td", "th"):
            self.current.append(" | " if self.current else "")
        elif tag in BLOCKS:
            self._blank()

    def handle_startendtag(self, tag, attrs):
        if tag == "br" and not self.skip_depth:
            self._flush()
        elif tag == "hr" and not self.skip_depth:
            self._blank()

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if tag in SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if tag in HEADINGS:
            self._flush()
            self.heading = None
            self.lines.append("")
        elif tag == "pre":
            self._flush()
            self.pre_depth = max(0, self.pre_depth - 1)
            self.lines.append("")
        elif tag == "li" or tag in BLOCKS:
            self._flush()

    def handle_data(self, data):
        if self.in_title:
            self.title.append(data)
        if self.skip_depth:
            return
        self.current.append(data)

    def result(self) -> str:
        self._flush()
        out: list[str] = []
        for line in self.lines:
            line = line.rstrip()
            if line == "" and (not out or out[-1] == ""):
                continue
            out.append(line)
        while out and out[-1] == "":
            out.pop()
        title = _SPACE.sub(" ", "".join(self.title)).strip()
        if title and not any(ln.startswith("#") for ln in out[:3]):
            out = [f"# {title}", ""] + out
        return "\n".join(out) + ("\n" if out else "")


def html_to_text(html: str) -> str:
    """The readable text of an HTML document (Markdown-style headings, one block per line)."""
    parser = _Extractor()
    parser.feed(html)
    parser.close()
    return parser.result()
