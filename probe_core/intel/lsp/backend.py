"""Questions to a language server at a target's definition, answers as `Item`s.

Locations become root-relative paths with 1-based lines (locations outside the root, e.g. in
site-packages, are dropped), `confidence=1.0`, kind call | reference | declaration | implementation.
Servers without call hierarchy (jedi-language-server) answer callers as the references that are
call sites; servers without `textDocument/implementation` answer a class's implementations as the
classes whose declaration header references it, followed transitively.
"""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp

from ..model import Item, Symbol
from ..resolve import TYPE_KINDS
from .servers import LANGUAGE_IDS
from .session import LspSession

MAX_SUBCLASS_DEPTH = 5


class Asker:
    """One query's questions to one session, about definitions in `ctx` (a `QueryContext`)."""

    def __init__(self, session: LspSession, ctx, timeout: float) -> None:
        self.session, self.ctx, self.timeout = session, ctx, timeout
        self.root = Path(ctx.ws.root).resolve()

    # -- the three questions (None: this server cannot answer it) -----------------------------------
    def references(self, t: Symbol, include_declaration: bool = False) -> list[Item] | None:
        items = []
        for path, line, col in self._references(t):
            if (path, line) == (t.path, t.line):
                if include_declaration:
                    items.append(Item(path, line, t.qualname, "declaration", t.signature))
                continue
            kind = "call" if self._is_call(path, line, col, t.name) else "reference"
            items.append(Item(path, line, self._enclosing(path, line), kind, self.ctx.line_text(path, line)))
        return items

    def callers(self, t: Symbol) -> list[Item] | None:
        caps = self.session.capabilities
        if caps is not None and caps.call_hierarchy_provider:
            return self._incoming_calls(t)
        return [i for i in self.references(t) or [] if i.kind == "call"]

    def implementations(self, t: Symbol) -> list[Item] | None:
        caps = self.session.capabilities
        if caps is not None and caps.implementation_provider:
            return self._implementations(t)
        if t.kind not in TYPE_KINDS:
            return None
        items, seen, todo = [], {(t.path, t.line)}, [(t, 1)]
        while todo:
            base, depth = todo.pop(0)
            for path, line, col in self._references(base):
                sub = self._subclass_at(path, line, col)
                if sub is None or (sub.path, sub.line) in seen:
                    continue
                seen.add((sub.path, sub.line))
                items.append(Item(sub.path, sub.line, sub.qualname, "implementation", self.ctx.line_text(sub.path, sub.line)))
                if depth < MAX_SUBCLASS_DEPTH:
                    todo.append((sub, depth + 1))
        return items

    # -- protocol --------------------------------------------------------------------------------
    def _ask(self, t: Symbol, question):
        """`await question(client, doc, position)` with the target's file open in the server."""
        pos = self.position(t)
        if pos is None:
            return None
        uri = (self.root / t.path).as_uri()
        text = (self.root / t.path).read_text("utf-8", errors="replace")
        lang = self.ctx.res.languages.get(t.path) or t.language
        doc = lsp.TextDocumentIdentifier(uri=uri)

        async def run(client):
            client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
                uri=uri, language_id=LANGUAGE_IDS.get(lang, lang), version=1, text=text)))
            try:
                return await question(client, doc, pos)
            finally:
                client.text_document_did_close(lsp.DidCloseTextDocumentParams(doc))

        return self.session.request(run, self.timeout)

    def _references(self, t: Symbol) -> list[tuple[str, int, int]]:
        """(path, 1-based line, 0-based column) of every reference, declaration included."""
        locs = self._ask(t, lambda c, doc, pos: c.text_document_references_async(lsp.ReferenceParams(
            text_document=doc, position=pos, context=lsp.ReferenceContext(include_declaration=True))))
        return [(p, r.start.line + 1, r.start.character) for p, r in self._locations(locs)]

    def _incoming_calls(self, t: Symbol) -> list[Item]:
        async def question(c, doc, pos):
            prepared = await c.text_document_prepare_call_hierarchy_async(
                lsp.CallHierarchyPrepareParams(text_document=doc, position=pos))
            calls = []
            for item in prepared or []:
                calls += await c.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(item=item)) or []
            return calls

        items = []
        for call in self._ask(t, question) or []:
            path = self._rel(call.from_.uri)
            for r in call.from_ranges if path else []:
                line = r.start.line + 1
                items.append(Item(path, line, self._enclosing(path, line) or call.from_.name, "call",
                                  self.ctx.line_text(path, line)))
        return items

    def _implementations(self, t: Symbol) -> list[Item]:
        locs = self._ask(t, lambda c, doc, pos: c.text_document_implementation_async(
            lsp.ImplementationParams(text_document=doc, position=pos)))
        items = []
        for path, r in self._locations(locs):
            line = r.start.line + 1
            if (path, line) != (t.path, t.line):
                defined = next((s for s in self.ctx.store.symbols_in(path) if s.line == line), None)
                items.append(Item(path, line, defined.qualname if defined else self._enclosing(path, line),
                                  "implementation", self.ctx.line_text(path, line)))
        return items

    # -- positions and paths ---------------------------------------------------------------------
    def position(self, t: Symbol) -> lsp.Position | None:
        """Where the target's name is on its declaration line (LSP columns count UTF-16 units)."""
        text = self.ctx.source_line(t.path, t.line)
        m = re.search(rf"(?<![\w$]){re.escape(t.name)}(?![\w$])", text)
        if m is None:
            return None
        return lsp.Position(line=t.line - 1, character=len(text[:m.start()].encode("utf-16-le")) // 2)

    def _locations(self, found) -> list[tuple[str, lsp.Range]]:
        """Location | [Location] | [LocationLink] -> (root-relative path, range), outside-root dropped."""
        if found is None:
            return []
        out = []
        for loc in found if isinstance(found, (list, tuple)) else [found]:
            uri = getattr(loc, "uri", None) or getattr(loc, "target_uri", None)
            rng = getattr(loc, "target_selection_range", None) or loc.range
            path = self._rel(uri)
            if path is not None:
                out.append((path, rng))
        return out

    def _rel(self, uri: str | None) -> str | None:
        if not uri or not uri.startswith("file:"):
            return None
        try:
            return Path(unquote(urlparse(uri).path)).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    def _is_call(self, path: str, line: int, col: int, name: str) -> bool:
        """The name at (line, col) is followed by an argument list."""
        text = self.ctx.source_line(path, line)
        return text[col + len(name):].lstrip().startswith("(")  # col is UTF-16: exact for ASCII lines

    def _enclosing(self, path: str, line: int) -> str | None:
        around = [s for s in self.ctx.store.symbols_in(path) if s.kind != "impl" and s.line <= line <= s.end_line]
        return min(around, key=lambda s: s.end_line - s.line).qualname if around else None

    def _subclass_at(self, path: str, line: int, col: int) -> Symbol | None:
        """The type whose declaration header (`class X(Base,\\n Other):`) holds the reference."""
        for s in self.ctx.store.symbols_in(path):
            if s.kind not in TYPE_KINDS or not s.line <= line <= s.end_line:
                continue
            if line == s.line:
                own = self.position(s)
                if own is not None and col > own.character:
                    return s
            elif not any(self.ctx.source_line(path, n).rstrip().endswith((":", "{")) for n in range(s.line, line)):
                return s
        return None
