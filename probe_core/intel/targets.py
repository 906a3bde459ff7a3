"""From what the caller said (`symbol`, or `file` + `line`) to the definitions a query is about."""
from __future__ import annotations

import re
from pathlib import Path

from probe_core.chunking.languages import is_test_path
from probe_core.workspace import Workspace

from .errors import BadQuery, SymbolNotFound
from .model import Symbol
from .resolve import Resolver

_KIND_RANK = {"class": 0, "interface": 0, "trait": 0, "struct": 0, "function": 1, "method": 1,
              "enum": 2, "type": 2}


def relative_path(ws: Workspace, file: str) -> str:
    """`file` as the index spells it: relative to the root, forward slashes."""
    p = Path(file)
    if p.is_absolute():
        try:
            p = p.resolve().relative_to(ws.root)
        except ValueError as exc:
            raise BadQuery(f"{file} is outside the workspace root {ws.root}") from exc
    rel = p.as_posix()
    while rel.startswith("./"):
        rel = rel[2:]
    return rel


def split_symbol(symbol: str) -> tuple[str | None, str]:
    """`Mux.Route` / `de::Read` / `Foo#bar` -> (owner, name)."""
    parts = [p for p in re.split(r"::|\.|#", symbol.strip()) if p]
    if not parts:
        raise BadQuery("the symbol name is empty")
    return (parts[-2] if len(parts) > 1 else None), parts[-1]


MAX_TALLIED_CALLS = 2000  # call sites read to rank same-named definitions (a name called everywhere)


def _rank(s: Symbol, calls: dict[tuple[str, int], float] | None = None) -> tuple:
    """Best first: not a test, a type before a function, the definition the repository's calls
    resolve to most (``sympify`` itself, not a same-named wrapper in a backend module), the one
    with a body (not an ``@overload`` stub), then by place."""
    called = (calls or {}).get((s.path, s.line), 0.0)
    return (is_test_path(s.path), _KIND_RANK.get(s.kind, 3), -called, s.line >= s.end_line, s.path, s.line)


def _call_tally(res: Resolver, name: str, cands: list[Symbol]) -> dict[tuple[str, int], float]:
    """How strongly the calls of ``name`` resolve to each candidate (confidences summed)."""
    tally = dict.fromkeys(((s.path, s.line) for s in cands), 0.0)
    for ref in res.store.refs_named(name, ("call",), limit=MAX_TALLIED_CALLS):
        for sym, conf in res.resolve(ref):
            if (sym.path, sym.line) in tally:
                tally[(sym.path, sym.line)] += conf
    return tally


def find_targets(ws: Workspace, res: Resolver, symbol: str | None, file: str | None,
                 line: int | None) -> list[Symbol]:
    """The definitions meant, best first; raises `SymbolNotFound` when there is none."""
    if line is not None and not file:
        raise BadQuery("a line needs the file it is in (file + line)")
    if not symbol and not (file and line is not None):
        raise BadQuery("give a symbol name, or a file and a line number")
    owner, name = split_symbol(symbol) if symbol else (None, None)
    if file:
        rel = relative_path(ws, file)
        if rel not in res.languages:
            raise SymbolNotFound(f"{rel} is not indexed (is the path relative to the root?)")
        if line is not None:  # a line outside the file is a mistake to report, never to ignore
            total = res.store.line_count(rel) or 0
            if isinstance(line, bool) or not isinstance(line, int) or not 1 <= line <= max(total, 1):
                raise BadQuery(f"line {line!r} is not in {rel} (lines 1-{total})")
        syms = [s for s in res.store.symbols_in(rel) if s.kind != "impl" or name is None]
        if line:
            if name:
                named = [s for s in syms if s.name == name]
                near = sorted(named, key=lambda s: (abs(s.line - line), s.line))
                if near and (abs(near[0].line - line) <= 3 or near[0].line <= line <= near[0].end_line):
                    return [near[0]]
            covering = [s for s in syms if s.line - 3 <= line <= s.end_line]
            if covering:
                # the innermost definition around the line (or the one declared right there)
                return [min(covering, key=lambda s: (abs(s.line - line) > 3, s.end_line - s.line))]
        elif name:
            named = [s for s in syms if s.name == name and (owner is None or s.owner == owner)]
            if named:
                return named
        if not name:
            raise SymbolNotFound(f"no definition at {rel}:{line}")
    matches = [s for s in res.defs(name) if owner is None or s.owner == owner or s.qualname.endswith(symbol)]
    if not matches and owner:
        matches = [s for s in res.defs(name) if s.parent]
    if not matches:
        raise SymbolNotFound(f"no definition of {symbol!r} in the index")
    calls = _call_tally(res, name, matches) if len(matches) > 1 else None
    return sorted(matches, key=lambda s: _rank(s, calls))
