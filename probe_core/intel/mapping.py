"""map_code: a repository's structure (directories, files, signatures) within a token budget."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from probe_core.chunking.languages import normalize_language
from probe_core.limits import MAP_DEPTH, MAX_TOKENS
from probe_core.workspace import Workspace

from .build import ensure_graph, graph_store
from .errors import BadQuery
from .model import SOURCE_TREESITTER, Symbol
from .targets import relative_path

DETAILS = ("files", "signatures", "full")
_SHOWN_KINDS = frozenset({"function", "method", "class", "struct", "interface", "trait", "enum", "type",
                          "impl", "module", "macro", "extension", "constant"})
_CHARS_PER_TOKEN = 4


@dataclass(slots=True)
class MapResult:
    """`{target, items: [{path, language, lines, symbols?}], dirs, text, truncated, omitted?, source}`."""

    target: dict
    items: list[dict] = field(default_factory=list)
    dirs: list[dict] = field(default_factory=list)  # folders below `depth`, summarized
    text: str = ""
    truncated: bool = False
    omitted: dict | None = None  # when truncated: {files, dirs} left out
    source: str = SOURCE_TREESITTER

    def to_dict(self) -> dict:
        out = {"target": self.target, "items": self.items, "dirs": self.dirs, "text": self.text,
               "truncated": self.truncated, "source": self.source}
        if self.omitted is not None:
            out["omitted"] = self.omitted
        return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _symbol_entry(s: Symbol, detail: str) -> dict:
    entry = {"name": s.qualname, "kind": s.kind, "line": s.line, "signature": s.signature}
    if detail == "full" and s.doc:
        entry["doc"] = s.doc
    return entry


def _outline(symbols: list[Symbol]) -> list[tuple[int, Symbol]]:
    """Top-level definitions and the members of top-level types, with their nesting level."""
    top = {s.qualname for s in symbols if s.parent is None}
    out = []
    for s in symbols:
        if s.kind not in _SHOWN_KINDS:
            continue
        if s.parent is None:
            out.append((0, s))
        elif s.parent in top and s.kind in ("method", "function", "constant"):
            out.append((1, s))
        elif s.kind == "method" and "." not in s.parent:  # Go methods, JS prototype methods
            out.append((1, s))
    return out


def map_code(ws: Workspace, path: str = ".", depth: int = 2, detail: str = "signatures",
             language: str | None = None, max_tokens: int = 4000) -> MapResult:
    """Files under `path` down to `depth` folder levels, with their definitions' signatures.

    `detail`: "files" (paths and line counts), "signatures" (+ functions, classes, methods with
    their signature lines), "full" (+ the first line of each docstring/doc comment). Deeper
    folders are listed with file and line totals. Stops cleanly at about `max_tokens`.
    """
    if detail not in DETAILS:
        raise BadQuery(f"detail must be one of {', '.join(DETAILS)}, not {detail!r}")
    MAP_DEPTH.check(depth, BadQuery)
    MAX_TOKENS.check(max_tokens, BadQuery)
    if language is not None:
        language = normalize_language(language)
    ensure_graph(ws)
    store = graph_store(ws)
    base = relative_path(ws, path).strip("/")
    base = "" if base in (".", "") else base
    result = MapResult(target={"path": base or ".", "depth": depth, "detail": detail, "language": language})
    budget = max_tokens * _CHARS_PER_TOKEN
    lines_out: list[str] = []
    used = 0
    deeper: dict[str, list[int]] = {}
    files = [(p, lang, n) for p, lang, n in store.files()
             if (not base or p == base or p.startswith(base + "/")) and (language is None or lang == language)]
    if not files:
        raise BadQuery(f"nothing indexed under {path!r}" + (f" in {language}" if language else ""))
    shallow = []
    for p, lang, n in files:
        # levels count from `path`: a file asked for by name is level 1, whatever its depth
        rel = posixpath.basename(p) if p == base else (p[len(base) + 1:] if base else p)
        if rel.count("/") < depth:
            shallow.append((p, lang, n))
            continue
        folder = posixpath.join(base, *rel.split("/")[:depth]) if base else "/".join(rel.split("/")[:depth])
        totals = deeper.setdefault(folder, [0, 0])
        totals[0] += 1
        totals[1] += n
    name_only = None  # the last file listed, when it had to be listed without its symbols
    for p, lang, n in shallow:
        entry: dict = {"path": p, "language": lang, "lines": n}
        block = [f"{p} ({_count(n, 'line')})"]
        if detail != "files":
            outline = _outline(store.symbols_in(p))
            entry["symbols"] = [_symbol_entry(s, detail) for _, s in outline]
            for indent, s in outline:
                row = f"{'  ' * (indent + 1)}{s.line}: {s.signature or s.qualname}"
                if detail == "full" and s.doc:
                    row += f"  — {s.doc}"
                block.append(row)
        size = sum(len(b) + 1 for b in block)
        if used + size > budget:
            # a file that does not fit whole is shown by name only, then we stop
            if used + len(block[0]) + 1 <= budget:
                result.items.append({"path": p, "language": lang, "lines": n})
                lines_out.append(block[0])
                name_only = p if len(block) > 1 else None
            result.truncated = True
            break
        used += size
        result.items.append(entry)
        lines_out.extend(block)
    if not result.truncated:
        for folder, (count, total) in sorted(deeper.items()):
            row = f"{folder}/ ({_count(count, 'file')}, {_count(total, 'line')})"
            if used + len(row) + 1 > budget:
                result.truncated = True
                break
            used += len(row) + 1
            result.dirs.append({"dir": folder, "files": count, "lines": total})
            lines_out.append(row)
    if result.truncated:  # never cut silently: say what is left out and how to see it
        result.omitted = {"files": len(shallow) - len(result.items), "dirs": len(deeper) - len(result.dirs)}
        left = [_count(result.omitted["files"], "more file"), _count(result.omitted["dirs"], "more folder")]
        if name_only:
            left.insert(0, f"the symbols of {name_only}")
        lines_out.append(f"… cut at max_tokens={max_tokens}: {', '.join(left)} not shown; raise max_tokens, "
                         "lower depth or detail, or map a subfolder")
    result.text = "\n".join(lines_out)
    return result
