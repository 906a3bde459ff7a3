"""The gold answer of a commit: the definitions it changed, located in today's tree.

The index holds the working tree, not the tree of each commit, so the gold must be found in the
working tree too. A commit's changed lines are mapped to the innermost definitions that enclose
them *in the commit's own version of the file* (Probe's tree-sitter extractor on ``git show
sha:path``), and each definition is then looked up by path and qualified name in the index's
symbol graph, which gives its lines today. A function edited again later is still the function
the message talks about; one that was renamed, moved or deleted since is lost (and a commit whose
gold is all lost is skipped). Lines outside any definition (imports, module constants) are left
out: no query can point at them reliably.

Only code counts: changes to tests, documentation and configuration are not gold (the query is
about the behaviour the commit changed), and a commit that touched nothing else is skipped.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..intel.extract import extract_file
from ..intel.model import Symbol
from .commits import Commit, file_at

MAX_CODE_FILES = 8  # a commit touching more is a sweep (rename, reformat) its message cannot describe
MAX_GOLD_SPANS = 6
MAX_GOLD_LINES = 200  # a whole large class as the answer would be hit by almost anything


@dataclass(frozen=True, slots=True)
class GoldSpan:
    path: str
    start_line: int
    end_line: int
    symbol: str

    def to_dict(self) -> dict:
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line, "symbol": self.symbol}


def _innermost(symbols: list[Symbol], line: int) -> Symbol | None:
    inside = [s for s in symbols if s.line <= line <= s.end_line]
    return min(inside, key=lambda s: s.end_line - s.line) if inside else None


def commit_gold(root: Path, commit: Commit, graph, kinds: dict[str, str | None]) -> tuple[list[GoldSpan], str | None]:
    """The commit's gold spans in today's tree, or ``([], reason)`` when it has none worth scoring.

    ``graph``: the index's symbol graph (``intel.build.graph_store``); ``kinds``: path → chunk kind
    of every indexed file."""
    code = {p: hunks for p, hunks in commit.files.items() if kinds.get(p) == "code"}
    if not code:
        return [], "no indexed code changed (docs, tests or config only, or files gone since)"
    if len(code) > MAX_CODE_FILES:
        return [], f"more than {MAX_CODE_FILES} code files changed"
    spans: dict[tuple[str, int, int], GoldSpan] = {}
    for path, hunks in sorted(code.items()):
        text = file_at(root, commit.sha, path)
        if text is None:
            continue
        then = extract_file(path, text).symbols
        changed: set[str] = set()
        for hunk in hunks:
            for line in range(hunk.start, hunk.end + 1):
                sym = _innermost(then, line)
                if sym is not None:
                    changed.add(sym.qualname)
        for sym in graph.symbols_in(path):
            if sym.qualname in changed and sym.end_line - sym.line + 1 <= MAX_GOLD_LINES:
                spans[(path, sym.line, sym.end_line)] = GoldSpan(path, sym.line, sym.end_line, sym.qualname)
    if not spans:
        return [], "the changed definitions are not in today's tree (or only top-level lines changed)"
    if len(spans) > MAX_GOLD_SPANS:
        return [], f"more than {MAX_GOLD_SPANS} definitions changed"
    return sorted(spans.values(), key=lambda g: (g.path, g.start_line)), None
