"""find_callers / find_callees / find_references / find_implementations over the symbol graph.

Each takes `symbol` or `file` + `line` and returns an `IntelResult`
(`{target, items: [{path, line, symbol, kind, context, confidence}], truncated, source}`),
bounded by `max_results` and `max_tokens`. Items are use sites (callers, references) or
definition lines (callees, implementations); the most certain come first.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import lru_cache

from probe_core.limits import INTEL_DEPTH, MAX_RESULTS, MAX_TOKENS
from probe_core.scan import read_text
from probe_core.workspace import Workspace

from .build import ensure_graph, graph_store
from .errors import BadQuery
from .model import SOURCE_LSP, Edge, Item, IntelResult, Ref, Symbol
from .resolve import TYPE_KINDS, Resolver, family
from .support import graph_targets
from .targets import find_targets

CALLEE_MIN_CONFIDENCE = 0.3
# what a call can land on (macros are expanded, not called; a class call runs its constructor)
CALLABLE_KINDS = frozenset({"function", "method", "class", "struct"})


class QueryContext:
    """One query's view of the graph: the resolver and a cache of source lines for context."""

    def __init__(self, ws: Workspace) -> None:
        ensure_graph(ws)
        self.ws = ws
        self.store = graph_store(ws)
        self.res = Resolver(self.store, ws.root)
        self._lines: dict[str, list[str]] = {}
        self._symbols: dict[str, dict[int, Symbol]] = {}

    def source_line(self, path: str, line: int) -> str:
        lines = self._lines.get(path)
        if lines is None:
            try:
                lines = read_text(self.ws.root, path).split("\n")
            except Exception:  # noqa: BLE001 - context is decoration; a vanished file gives none
                lines = []
            self._lines[path] = lines
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def line_text(self, path: str, line: int) -> str:
        return self.source_line(path, line).strip()[:160]

    def targets(self, symbol: str | None, file: str | None, line: int | None) -> list[Symbol]:
        return find_targets(self.ws, self.res, symbol, file, line)

    def symbol_at(self, path: str, line: int | None) -> Symbol | None:
        if line is None:
            return None
        syms = self._symbols.get(path)
        if syms is None:  # many call sites share a file: read its definitions once
            syms = self._symbols[path] = {s.line: s for s in reversed(self.store.symbols_in(path)) if s.kind != "impl"}
        return syms.get(line)


def target_dict(targets: list[Symbol]) -> dict:
    best = targets[0]
    out = {"symbol": best.qualname, "kind": best.kind, "path": best.path, "line": best.line,
           "signature": best.signature}
    if len(targets) > 1:
        # plain strings, not locations: only the first target is "the" target
        out["candidates"] = [f"{t.path}:{t.line} {t.qualname}" for t in targets[1:20]]
    return out


def _key(s: Symbol) -> tuple[str, int]:
    return (s.path, s.line)


def _matches(res: Resolver, ref: Ref, wanted: set[tuple[str, int]]) -> float:
    """The confidence that `ref` means one of the wanted definitions (0: it does not)."""
    best = 0.0
    for sym, conf in res.resolve(ref):
        if _key(sym) in wanted:
            best = max(best, conf)
    return best


def finish(targets: list[Symbol], items: list[Item], max_results: int, max_tokens: int | None,
           *, min_confidence: float = 0.0, extra: dict | None = None,
           context: Callable[[str, int], str] | None = None) -> IntelResult:
    """Rank, cut to `max_results` and a token budget (about 4 characters a token). Items made
    without their source line (`context` None: a use among thousands) get it from `context` here,
    once they are among the kept, so a common name does not read every file that uses it."""
    items = [i for i in items if i.confidence >= min_confidence]
    items.sort(key=lambda i: (i.depth or 1, -i.confidence, i.path, i.line))
    truncated = len(items) > max_results
    items = items[:max_results]
    for item in items:
        if item.context is None:
            item.context = context(item.path, item.line) if context is not None else ""
    if max_tokens:
        budget, used, kept = max_tokens * 4, 200, []
        for item in items:
            used += len(json.dumps(item.to_dict())) + 2
            if used > budget:
                truncated = True
                break
            kept.append(item)
        items = kept
    return IntelResult(target=target_dict(targets) if targets else None, items=items, truncated=truncated,
                       extra=dict(extra or {}))


def no_answer(targets: list[Symbol], message: str) -> IntelResult:
    """What a question the graph cannot answer gets (``support.py``): the target, no items, why."""
    return IntelResult(target=target_dict(targets) if targets else None, items=[], message=message)


def answer(ctx: QueryContext, targets: list[Symbol], question: str, graph: Callable[[], list[Item]],
           max_results: int, max_tokens: int | None, *, lsp: bool | None = None, **kwargs) -> IntelResult:
    """The graph's answer (`graph()`), or, when a language server was asked for (`lsp`, see
    `lsp.enabled`) and answers, the server's (`source: "lsp"`); `message` says why one that was
    asked for did not answer."""
    from .lsp import ask

    lsp = ask(ctx, targets, question, use=lsp, **kwargs)
    res = finish(targets, graph() if lsp.items is None else _dedupe(lsp.items), max_results, max_tokens,
                 context=ctx.line_text)
    res.source = SOURCE_LSP if lsp.items is not None else res.source
    res.message = lsp.message
    return res


def _check(max_results: int, depth: int, max_tokens: int | None = None) -> int:
    """The bounds every face shares (``probe_core.limits``): out of range is an error, never clamped."""
    MAX_RESULTS.check(max_results, BadQuery)
    if max_tokens is not None:
        MAX_TOKENS.check(max_tokens, BadQuery)
    return INTEL_DEPTH.check(depth, BadQuery)


# -- callers -----------------------------------------------------------------------------------

def caller_items(ctx: QueryContext, targets: list[Symbol], depth: int, enough: int | None = None) -> list[Item]:
    """Call sites of the targets, then of their callers, up to `depth` levels (cycles cut).

    With `enough` (the answer's `max_results`), a level whose sites already outnumber it ends the
    walk: the answer ranks shallower sites first, so deeper ones could only be cut (`truncated`),
    and a name called 8,000 times (`Errorf`) no longer reads the callers of all its callers."""
    items: list[Item] = []
    seen_defs = {_key(t) for t in targets}
    level = list(targets)
    share = 1.0 / len(targets) if len(targets) > 1 else 1.0
    for d in range(1, depth + 1):
        wanted = {_key(t) for t in level}
        found: list[Ref] = []
        known: dict[tuple, float] = {}  # uses that resolve alike are resolved once (a file's repeats)
        for name in sorted({t.name for t in level}):
            for ref in ctx.store.refs_named(name, ("call",)):
                key = ctx.res.use_key(ref)
                conf = known.get(key)
                if conf is None:
                    conf = known[key] = _matches(ctx.res, ref, wanted)
                if conf > 0:
                    found.append(ref)
                    items.append(Item(ref.path, ref.line, ref.enclosing, "call", None,  # context: see finish
                                      conf * share, depth=d if depth > 1 else None))
        items = _dedupe(items)
        if d == depth or (enough is not None and len(items) > enough):
            break  # the last level (or enough): its callers are not followed
        level = []
        for ref in found:
            caller = ctx.symbol_at(ref.path, ref.enclosing_line)
            if caller is not None and _key(caller) not in seen_defs:
                seen_defs.add(_key(caller))
                level.append(caller)
        if not level:
            break
    return items


def find_callers(ws: Workspace, symbol: str | None = None, file: str | None = None, line: int | None = None,
                 *, depth: int = 1, max_results: int = 50, max_tokens: int | None = 4000,
                 lsp: bool | None = None) -> IntelResult:
    """Every call of the function/method (and, with `depth` > 1, calls of its callers)."""
    depth = _check(max_results, depth, max_tokens)
    ctx = QueryContext(ws)
    targets, gap = graph_targets(ctx, symbol, file, line)
    if gap:
        return no_answer(targets, gap)
    if depth > 1:  # the language server answers one level
        return finish(targets, caller_items(ctx, targets, depth, max_results), max_results, max_tokens,
                      context=ctx.line_text)
    return answer(ctx, targets, "callers", lambda: caller_items(ctx, targets, 1), max_results, max_tokens, lsp=lsp)


# -- callees -----------------------------------------------------------------------------------

def callee_items(ctx: QueryContext, targets: list[Symbol], depth: int) -> list[Item]:
    items: list[Item] = []
    seen_defs = {_key(t) for t in targets}
    level = list(targets)
    for d in range(1, depth + 1):
        nxt: list[Symbol] = []
        for t in level:
            for ref in ctx.store.refs_in(t.path, t.line, t.end_line, ("call",)):
                for sym, conf in ctx.res.resolve(ref):
                    if conf < CALLEE_MIN_CONFIDENCE or sym.kind not in CALLABLE_KINDS:
                        continue
                    items.append(Item(sym.path, sym.line, sym.qualname, sym.kind, sym.signature, conf,
                                      depth=d if depth > 1 else None))
                    if _key(sym) not in seen_defs:
                        seen_defs.add(_key(sym))
                        nxt.append(sym)
        level = nxt
        if not level:
            break
    return _dedupe(items)


def find_callees(ws: Workspace, symbol: str | None = None, file: str | None = None, line: int | None = None,
                 *, depth: int = 1, max_results: int = 50, max_tokens: int | None = 4000) -> IntelResult:
    """The definitions (in this repository) that the function calls; library calls are left out."""
    depth = _check(max_results, depth, max_tokens)
    ctx = QueryContext(ws)
    targets, gap = graph_targets(ctx, symbol, file, line)
    if gap:
        return no_answer(targets, gap)
    return finish(targets, callee_items(ctx, targets[:1] if file else targets, depth), max_results, max_tokens)


# -- references --------------------------------------------------------------------------------

def reference_items(ctx: QueryContext, targets: list[Symbol], include_declaration: bool = False) -> list[Item]:
    wanted = {_key(t) for t in targets}
    share = 1.0 / len(targets) if len(targets) > 1 else 1.0
    items: list[Item] = []
    for name in sorted({t.name for t in targets}):
        for ref in ctx.store.refs_named(name):
            conf = _matches(ctx.res, ref, wanted)
            if conf > 0:
                items.append(Item(ref.path, ref.line, ref.enclosing, ref.kind, None, conf * share))  # context: finish
    if include_declaration:
        items += [Item(t.path, t.line, t.qualname, "declaration", t.signature, 1.0) for t in targets]
    return _dedupe(items)


def find_references(ws: Workspace, symbol: str | None = None, file: str | None = None, line: int | None = None,
                    *, include_declaration: bool = False, max_results: int = 50,
                    max_tokens: int | None = 4000, lsp: bool | None = None) -> IntelResult:
    """Every use in code (calls, type annotations, imports, tests); comments and docs are not code."""
    _check(max_results, 1, max_tokens)
    ctx = QueryContext(ws)
    targets, gap = graph_targets(ctx, symbol, file, line)
    if gap:
        return no_answer(targets, gap)
    return answer(ctx, targets, "references", lambda: reference_items(ctx, targets, include_declaration),
                  max_results, max_tokens, lsp=lsp, include_declaration=include_declaration)


# -- implementations ---------------------------------------------------------------------------

def implementation_items(ctx: QueryContext, targets: list[Symbol]) -> list[Item]:
    """Subtypes of each target, breadth first. A common name (`Model`: 210 definitions in Django,
    2,139 `class X(models.Model)` lines) gives many targets one edge list: each base as written is
    resolved once and the direct subtypes are looked up by the definition they mean
    (`_DirectSubtypes`); each name's edges are read once, not once per target."""
    items: list[Item] = []
    direct = _DirectSubtypes(ctx)
    edges_to = lru_cache(maxsize=None)(ctx.store.edges_to)
    for t in targets:
        if t.kind not in TYPE_KINDS:
            continue
        go_iface = family(t.language) == "go" and t.kind == "interface"
        seen = {t.name}
        todo = [(t.name, 1)]
        while todo:
            name, d = todo.pop(0)
            for e in direct.of(t) if d == 1 else edges_to(name):
                if e.kind == "embeds" and not go_iface:
                    continue
                if family(ctx.res.languages.get(e.path)) != family(t.language):
                    continue
                items.append(Item(e.path, e.line, e.child, e.kind, None,  # context: see finish
                                  1.0 if d == 1 else 0.9))
                if e.child not in seen:
                    seen.add(e.child)
                    todo.append((e.child, d + 1))
        if go_iface:
            items += _go_satisfiers(ctx, t)
    return _dedupe(items)


class _DirectSubtypes:
    """The edges (`class X(Base)`, `impl io::Read for X`) that name one definition, not a namesake
    elsewhere: a name's edges are read and resolved once, then filed by the definition they mean;
    an edge that resolves to nothing and is not imported from outside (a dynamic base, a
    same-package type) counts for every definition of the name."""

    def __init__(self, ctx: QueryContext) -> None:
        self.ctx = ctx
        self._filed: dict[str, tuple[dict[tuple[str, int], list[Edge]], list[Edge]]] = {}

    def of(self, target: Symbol) -> list[Edge]:
        filed = self._filed.get(target.name)
        if filed is None:
            filed = self._filed[target.name] = self._file(target.name)
        by_def, unresolved = filed
        return by_def.get(_key(target), []) + unresolved

    def _file(self, name: str) -> tuple[dict[tuple[str, int], list[Edge]], list[Edge]]:
        by_def: dict[tuple[str, int], list[Edge]] = {}
        unresolved: list[Edge] = []
        meant: dict[tuple[str, str, str | None], tuple[set[tuple[str, int]], bool]] = {}
        for e in self.ctx.store.edges_to(name):
            key = (e.path, e.parent, e.parent_qualifier)  # the same base written in the same file
            if key not in meant:
                meant[key] = self._resolve(e)
            found, keep = meant[key]
            for k in found:
                by_def.setdefault(k, []).append(e)
            if keep:
                unresolved.append(e)
        return by_def, unresolved

    def _resolve(self, e: Edge) -> tuple[set[tuple[str, int]], bool]:
        res = self.ctx.res
        found = {_key(s) for s, _ in res.resolve(Ref(e.path, e.line, e.parent, e.parent_qualifier, "ref", None, None))}
        if found:
            return found, False
        head = (e.parent_qualifier or e.parent).replace("::", ".").split(".")[0]
        bound = [imp for imp in res.imports(e.path) if imp.bound == head]
        return found, not bound or any(res.module_files(imp.module, e.path) for imp in bound)


def _go_satisfiers(ctx: QueryContext, iface: Symbol) -> list[Item]:
    """Go types whose method set (own methods + promoted through embedding) covers the interface."""
    store = ctx.store
    edges_from = lru_cache(maxsize=None)(store.edges_from)  # types embedded by many: read once

    @lru_cache(maxsize=None)
    def own_methods(name: str) -> frozenset[str]:
        return frozenset(s.name for s in store.symbols_with_parent([name]) if s.language == "go" and s.kind == "method")

    def iface_methods(name: str, seen: set[str]) -> set[str]:
        seen.add(name)
        found = set(own_methods(name))
        for e in edges_from(name):
            if e.kind == "extends" and e.parent not in seen:
                found |= iface_methods(e.parent, seen)
        return found

    def method_set(sym: Symbol, seen: set[str]) -> set[str]:
        seen.add(sym.name)
        found = set(own_methods(sym.name))
        for e in edges_from(sym.name):
            if e.kind != "embeds" or e.parent in seen:
                continue
            for inner in ctx.res.defs(e.parent):
                if inner.language == "go":
                    found |= iface_methods(inner.name, set()) if inner.kind == "interface" else method_set(inner, seen)
        return found

    required = iface_methods(iface.name, set())
    if not required:
        return []
    out = []
    for sym in _may_have(ctx, required):
        if required <= method_set(sym, set()):
            out.append(Item(sym.path, sym.line, sym.qualname, "satisfies", sym.signature, 0.9))
    return out


def _may_have(ctx: QueryContext, required: set[str]) -> list[Symbol]:
    """The Go types that can have all of `required`: those with a method named the rarest of them,
    own or promoted (the owners, then whatever embeds or extends them, transitively). Looked up by
    name instead of testing every Go type of the repository (a monorepo's `Model` interface: 5,600)."""
    rarest = min(sorted(required), key=lambda m: len(ctx.res.defs(m)))
    names = {s.parent for s in ctx.res.defs(rarest) if s.language == "go" and s.kind == "method" and s.parent}
    todo = list(names)
    while todo:
        for e in ctx.store.edges_to(todo.pop()):
            if e.kind in ("embeds", "extends") and e.child not in names:
                names.add(e.child)
                todo.append(e.child)
    return [s for name in sorted(names) for s in ctx.res.defs(name)
            if s.language == "go" and s.kind in ("struct", "type")]


def find_implementations(ws: Workspace, symbol: str | None = None, file: str | None = None,
                         line: int | None = None, *, max_results: int = 50,
                         max_tokens: int | None = 4000, lsp: bool | None = None) -> IntelResult:
    """Subclasses (transitively), `implements`, Rust `impl Trait for`, Go types satisfying an interface."""
    _check(max_results, 1, max_tokens)
    ctx = QueryContext(ws)
    targets = ctx.targets(symbol, file, line)
    typed = [t for t in targets if t.kind in TYPE_KINDS] or targets
    return answer(ctx, typed, "implementations", lambda: implementation_items(ctx, typed), max_results, max_tokens,
                  lsp=lsp)


def _dedupe(items: Iterable[Item]) -> list[Item]:
    """One item per location, keeping the most confident (and shallowest)."""
    best: dict[tuple[str, int], Item] = {}
    for item in items:
        key = (item.path, item.line)
        have = best.get(key)
        if have is None or (item.depth or 1, -item.confidence) < (have.depth or 1, -have.confidence):
            best[key] = item
    return list(best.values())
