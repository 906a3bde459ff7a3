"""One file's syntax tree into graph rows: definitions, references, imports, inheritance edges.

Definitions come from the chunker's tables (`chunking.definitions.DefinitionFinder`), so the
graph and the chunks agree on what a function or a class is. What the chunker does not need
(call sites, imports, `extends`/`implements`, Go struct embedding, interface method signatures)
is read here, from the node types below.
"""
from __future__ import annotations

import re

from tree_sitter import Node

from probe_core.chunking.definitions import DefinitionFinder, node_text
from probe_core.chunking.grammars import GrammarSpec, parse, spec_for
from probe_core.chunking.languages import language_for_path

from .model import Edge, FileGraph, Import, Ref, Symbol
from .nodes import (MAX_SIGNATURE as _MAX_SIGNATURE, descendants as _descendants, field_of as _field_of,
                    first_doc_line as _first_doc_line, one_line as _one_line,
                    rust_use as _rust_use, string_body as _string_body, token_tree_use as _token_tree_use)

from .syntax import (CALL_MEMBERS as _CALL_MEMBERS, CALLS as _CALLS, CONTAINER_KINDS as _CONTAINER_KINDS,
                     IDENT as _IDENT, IMPORTS as _IMPORTS, MEMBER as _MEMBER, NOT_A_USE_PARENTS,
                     PASS_THROUGH as _PASS_THROUGH, RUBY_STATEMENT_PARENTS as _RUBY_STATEMENT_PARENTS,
                     SELF_WORDS, SIGNATURES as _SIGNATURES, SKIP_NAMES as _SKIP_NAMES, TYPE_LIKE as _TYPE_LIKE)

_JS_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
# node types `_definition` can act on besides the grammar's definition tables: module-level
# variables (`_variables`), JS bindings and C typedefs (`DefinitionFinder.classify`)
_MAY_DEFINE = frozenset({"expression_statement", "lexical_declaration", "variable_declaration", "var_spec",
                         "const_spec", "const_item", "static_item", "field_definition", "public_field_definition",
                         "type_definition"})

_MAX_QUALIFIER = 80
# the parents under which `_reference` asks which field a name fills (finding it costs a walk of
# the parent's children)
_FIELD_PARENTS = frozenset({"keyword_argument", "pair", "parameter_declaration", "field_declaration",
                            "function_declaration", *_CALL_MEMBERS})


def line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def extract_file(path: str, text: str) -> FileGraph:
    """The graph rows of one file; a language without a grammar gives a file with no rows."""
    language = language_for_path(path)
    graph = FileGraph(path, language, line_count(text))
    spec = spec_for(language, text) if language else None
    if spec is None:
        return graph
    root = parse(spec, text).root_node  # the chunker's tree of this text, when it has just made one
    _Walker(spec, graph).run(root)
    return graph


def _may_define(spec: GrammarSpec) -> frozenset[str]:
    """The node types ``_Walker._definition`` may act on: it does nothing for any other, so most
    nodes skip the call (the walk was a third of a first index's CPU, and half of it these calls)."""
    return frozenset({*spec.wrappers, *spec.containers, *spec.units, *_SIGNATURES, *_MAY_DEFINE})


class _Walker:
    """Walks one tree once, keeping the chain of enclosing definitions."""

    def __init__(self, spec: GrammarSpec, graph: FileGraph) -> None:
        self.spec = spec
        self.g = graph
        self.lang = spec.grammar
        self.finder = DefinitionFinder(spec, lambda n: (n.start_point[0] + 1, n.end_point[0] + 1))
        self.handled: set[int] = set()
        self.decl_names: set[int] = set()  # start bytes of name nodes that declare, not use
        self.seen: set[tuple[int, str, str]] = set()
        self.may_define = _may_define(spec)

    # -- traversal ---------------------------------------------------------------------------

    def run(self, root: Node) -> None:
        # iterative: deeply nested expressions must not hit the recursion limit
        # each node comes with its parent: ``node.parent`` walks down from the root every time
        stack: list[tuple[Node, Node | None, tuple[Symbol, ...], bool, str | None]] = [(root, None, (), False, None)]
        while stack:
            node, parent, scope, in_import, receiver = stack.pop()
            ntype = node.type
            if ntype in _IMPORTS or (ntype == "export_statement" and node.child_by_field_name("source")):
                self._imports(node)
                in_import = True
            new_scope = scope
            if not in_import and ntype in self.may_define and node.id not in self.handled:
                sym = self._definition(node, scope)
                if sym is not None:
                    new_scope = scope + (sym,)
                    receiver = self._go_receiver(node) if ntype == "method_declaration" else receiver
            if ntype in _IDENT and node.start_byte not in self.decl_names:
                self._reference(node, parent, scope, in_import, receiver)
            for child in reversed(node.named_children):
                stack.append((child, node, new_scope, in_import, receiver))

    # -- definitions -------------------------------------------------------------------------

    def _definition(self, node: Node, scope: tuple[Symbol, ...]) -> Symbol | None:
        in_class = bool(scope) and scope[-1].kind in _CONTAINER_KINDS
        if node.type in _SIGNATURES:
            if not in_class:
                return None
            name_node = node.child_by_field_name("name")
            if name_node is None:
                return None
            self.decl_names.add(name_node.start_byte)
            return self._add(node, node, name_node, node_text(name_node), "method", scope, None)
        d = self.finder.classify(node, in_class)
        if d is None:
            if not scope or all(s.kind == "module" for s in scope):
                self._variables(node, scope)
            return None
        self.handled.add(d.inner.id)
        self.handled.add(node.id)
        between = d.inner.parent  # `export const f = () => {}`: the declaration between the export and
        while between is not None and between.id != node.id:  # the function is this same definition
            self.handled.add(between.id)
            between = between.parent
        if not d.name:
            return None
        name_node = self._name_node(node, d.inner)
        if name_node is not None:
            self.decl_names.add(name_node.start_byte)
        kind = d.kind
        if d.inner.type == "trait_item":
            kind = "trait"
        sym = self._add(node, d.inner, name_node, d.name, kind, scope, d.parent)
        self._edges(d.inner, sym)
        return sym

    def _variables(self, node: Node, scope: tuple[Symbol, ...]) -> None:
        """Module-level constants and variables (`X = 1`, `const X = 1`, `var X`, `static X`)."""
        t = node.type
        names: list[Node] = []
        if t == "expression_statement" and self.lang == "python" and node.named_child_count:
            assign = node.named_children[0]
            left = assign.child_by_field_name("left") if assign.type == "assignment" else None
            if left is not None and left.type == "identifier":
                names.append(left)
        elif t in ("lexical_declaration", "variable_declaration"):
            for decl in node.named_children:
                if decl.type == "variable_declarator":
                    n = decl.child_by_field_name("name")
                    if n is not None and n.type == "identifier":
                        names.append(n)
        elif t in ("var_spec", "const_spec"):
            names += [c for c in node.children_by_field_name("name")]
        elif t in ("const_item", "static_item"):
            n = node.child_by_field_name("name")
            if n is not None:
                names.append(n)
        for n in names:
            name = node_text(n)
            if not name or n.start_byte in self.decl_names:
                continue
            self.decl_names.add(n.start_byte)
            kind = "constant" if name.isupper() or t in ("const_spec", "const_item") else "variable"
            sym = Symbol(path=self.g.path, name=name, qualname=name, kind=kind, line=n.start_point[0] + 1,
                         end_line=node.end_point[0] + 1, signature=_one_line(node_text(node), 120),
                         parent=scope[-1].qualname if scope else None, language=self.g.language or "")
            self.g.symbols.append(sym)

    def _add(self, outer: Node, inner: Node, name_node: Node | None, name: str, kind: str,
             scope: tuple[Symbol, ...], parent: str | None) -> Symbol:
        if parent is None and scope:
            parent = scope[-1].qualname
        line = (name_node if name_node is not None and kind != "impl" else inner).start_point[0] + 1
        sym = Symbol(
            path=self.g.path, name=name, qualname=f"{parent}.{name}" if parent else name, kind=kind,
            line=line, end_line=outer.end_point[0] + 1, signature=self._signature(outer, inner, name),
            doc=self._doc(outer, inner), parent=parent, language=self.g.language or "",
        )
        self.g.symbols.append(sym)
        return sym

    def _name_node(self, outer: Node, inner: Node) -> Node | None:
        if inner.type == "impl_item":
            return None
        for candidate in (inner, outer):
            n = candidate.child_by_field_name("name")
            if n is not None:
                return n
        if inner.type == "type_declaration":
            spec = next((c for c in inner.named_children if c.type in ("type_spec", "type_alias")), None)
            return spec.child_by_field_name("name") if spec is not None else None
        # `const f = () => {}`: the declarator's name
        for child in outer.named_children:
            if child.type == "variable_declarator":
                return child.child_by_field_name("name")
            if child.type in ("lexical_declaration", "variable_declaration"):
                return self._name_node(child, inner)
        if outer.type == "expression_statement" and outer.named_child_count:
            left = outer.named_children[0].child_by_field_name("left")
            if left is not None:
                return left.child_by_field_name("property") or left
        return None

    def _signature(self, outer: Node, inner: Node, name: str) -> str:
        start = inner if outer.type in self.spec.wrappers or outer is inner else outer
        if outer.type in self.spec.wrappers:  # `export const f = () =>`: from `const`, as without the export
            start = next((c for c in outer.named_children if c.type in _JS_DECLARATIONS), start)
        body = inner.child_by_field_name("body")
        src = self.g_text(start.start_byte, body.start_byte if body is not None else None, start)
        sig = _one_line(src).rstrip("{:; ").strip()
        if name not in sig:
            sig = f"{name} = {sig}"
        return sig[:_MAX_SIGNATURE]

    def g_text(self, start: int, end: int | None, node: Node) -> str:
        text = node.text or b""
        chunk = text[: end - start] if end is not None and end > start else text.split(b"\n", 1)[0]
        return chunk.decode("utf-8", "replace")

    def _doc(self, outer: Node, inner: Node) -> str:
        if self.lang == "python":
            body = inner.child_by_field_name("body")
            first = body.named_children[0] if body is not None and body.named_child_count else None
            if first is not None and first.type == "expression_statement" and first.named_child_count:
                first = first.named_children[0]
            if first is not None and first.type == "string":
                return _first_doc_line(_string_body(node_text(first)))
            return ""
        prev = outer.prev_named_sibling
        lines: list[str] = []
        expect = outer.start_point[0]
        while prev is not None and prev.type in self.spec.comments and prev.end_point[0] >= expect - 1:
            if "attribute" not in prev.type:
                lines.insert(0, node_text(prev))
            expect = prev.start_point[0]
            prev = prev.prev_named_sibling
        return _first_doc_line("\n".join(lines))

    def _go_receiver(self, node: Node) -> str | None:
        receiver = node.child_by_field_name("receiver")
        if receiver is None:
            return None
        param = next((c for c in receiver.named_children if c.type == "parameter_declaration"), None)
        name = param.child_by_field_name("name") if param is not None else None
        return node_text(name) if name is not None else None

    # -- inheritance -------------------------------------------------------------------------

    def _edges(self, inner: Node, sym: Symbol) -> None:
        t = inner.type
        if t == "class_definition":  # python
            bases = inner.child_by_field_name("superclasses")
            for b in bases.named_children if bases is not None else []:
                if b.type in ("identifier", "attribute"):
                    self._edge(sym, node_text(b), "extends")
        elif t in ("class_declaration", "abstract_class_declaration", "class", "interface_declaration",
                   "record_declaration", "enum_declaration", "class_specifier", "struct_specifier"):
            for child in inner.named_children:
                self._heritage(child, sym, "implements" if child.type == "super_interfaces" else "extends")
        elif t == "impl_item":
            trait = inner.child_by_field_name("trait")
            if trait is not None:
                self._edge(sym, node_text(trait), "implements")
        elif t == "trait_item":
            bounds = inner.child_by_field_name("bounds")
            for b in bounds.named_children if bounds is not None else []:
                self._edge(sym, node_text(b), "extends")
        elif t == "type_declaration":
            spec = next((c for c in inner.named_children if c.type == "type_spec"), None)
            body = spec.child_by_field_name("type") if spec is not None else None
            if body is not None and body.type == "struct_type":
                fields = next((c for c in body.named_children if c.type == "field_declaration_list"), None)
                for f in fields.named_children if fields is not None else []:
                    if f.type == "field_declaration" and f.child_by_field_name("name") is None:
                        ftype = f.child_by_field_name("type")
                        if ftype is not None:
                            self._edge(sym, node_text(ftype), "embeds")
            elif body is not None and body.type == "interface_type":
                for c in body.named_children:
                    if c.type in ("type_elem", "constraint_elem", "interface_type_name"):
                        self._edge(sym, node_text(c), "extends")

    def _heritage(self, node: Node, sym: Symbol, kind: str) -> None:
        """TS/JS/Java `extends`/`implements` clauses: every named type directly listed."""
        t = node.type
        if t in ("implements_clause", "super_interfaces", "class_interface_clause"):
            kind = "implements"
        elif t in ("extends_clause", "extends_type_clause", "superclass", "extends_interfaces", "class_heritage",
                   "base_list", "base_class_clause", "base_clause"):  # c#, c++, php
            kind = "extends"
        elif t != "type_list":
            return
        for child in node.named_children:
            if child.type in ("type_list", "extends_clause", "implements_clause"):
                self._heritage(child, sym, kind)
            elif child.type in _TYPE_LIKE:
                self._edge(sym, node_text(child), kind)

    def _edge(self, sym: Symbol, raw: str, kind: str) -> None:
        raw = raw.strip().lstrip("&*")
        base = re.split(r"[<\[(]", raw, maxsplit=1)[0]
        parts = re.split(r"::|\.", base)
        parent = parts[-1].strip()
        if not parent or not (parent[0].isalpha() or parent[0] == "_"):
            return
        qualifier = ".".join(parts[:-1]) or None
        child = sym.name
        self.g.edges.append(Edge(self.g.path, sym.line, child, parent, kind, qualifier))

    # -- references --------------------------------------------------------------------------

    def _reference(self, node: Node, parent: Node | None, scope: tuple[Symbol, ...], in_import: bool,
                   receiver: str | None) -> None:
        name = node_text(node)
        if not name or name in _SKIP_NAMES:
            return
        ptype = None if parent is None else parent.type
        field = _field_of(node, parent) if ptype in _FIELD_PARENTS else None  # the only parents asked
        if ptype is not None and (
            ptype in NOT_A_USE_PARENTS
            or (ptype == "keyword_argument" and field == "name")
            or (ptype == "pair" and field == "key")
            or ptype in ("parameter_declaration", "field_declaration") and field == "name"
            or (ptype == "function_declaration" and field == "name")
        ):
            return
        qualifier = None
        expr = node
        if ptype in _MEMBER:
            obj_field, member_field = _MEMBER[ptype]
            member = parent.child_by_field_name(member_field)
            if member is not None and member.start_byte == node.start_byte:
                obj = next(filter(None, map(parent.child_by_field_name, obj_field.split("|"))), None)
                if obj is not None:
                    qualifier = _one_line(node_text(obj), _MAX_QUALIFIER)
                    if (receiver and qualifier == receiver) or (qualifier == "static" and self.lang == "php"):
                        qualifier = "self"
                    elif qualifier.startswith("super"):
                        qualifier = "super"
                expr = parent if ptype != "method_invocation" else node
        if ptype == "token_tree":
            qualifier, call = _token_tree_use(node, receiver)
            if call:
                kind = "import" if in_import else "call"
                self._record(node, name, qualifier, kind, scope)
                return
        up = parent if expr is node else expr.parent  # ``.parent`` walks down from the root: once each
        while up is not None and up.type in _PASS_THROUGH:
            expr, up = up, up.parent
        kind = "import" if in_import else "ref"
        if not in_import and ptype is not None and (
                (ptype in _CALL_MEMBERS and _CALL_MEMBERS[ptype] == field)  # ruby `a.b(…)`
                or (self.lang == "ruby" and node.type == "identifier" and ptype in _RUBY_STATEMENT_PARENTS)):
            kind = "call"
        holder = up
        if not in_import and holder is not None and holder.type in _CALLS:
            callee = holder.child_by_field_name(_CALLS[holder.type])
            if callee is not None and callee.start_byte == expr.start_byte and callee.end_byte == expr.end_byte:
                kind = "call"
        self._record(node, name, qualifier, kind, scope)

    def _record(self, node: Node, name: str, qualifier: str | None, kind: str,
                scope: tuple[Symbol, ...]) -> None:
        line = node.start_point[0] + 1
        key = (line, name, kind)
        if key in self.seen and kind != "call":
            return
        self.seen.add(key)
        enclosing = scope[-1] if scope else None
        self.g.refs.append(Ref(self.g.path, line, name, qualifier, kind,
                               enclosing.qualname if enclosing else None,
                               enclosing.line if enclosing else None))

    # -- imports -----------------------------------------------------------------------------

    def _imports(self, node: Node) -> None:
        add = self.g.imports.append
        line = node.start_point[0] + 1
        path = self.g.path
        t = node.type
        if t == "import_statement" and self.lang == "python":
            for child in node.named_children:
                if child.type == "dotted_name":
                    add(Import(path, line, node_text(child)))
                elif child.type == "aliased_import":
                    mod, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
                    add(Import(path, line, node_text(mod), None, node_text(alias) if alias else None))
        elif t == "import_from_statement":
            mod_node = node.child_by_field_name("module_name")
            module = node_text(mod_node) if mod_node is not None else ""
            for child in node.named_children:
                if child is mod_node or child.start_byte == (mod_node.start_byte if mod_node else -1):
                    continue
                if child.type == "dotted_name":
                    add(Import(path, line, module, node_text(child)))
                elif child.type == "aliased_import":
                    n, a = child.child_by_field_name("name"), child.child_by_field_name("alias")
                    add(Import(path, line, module, node_text(n), node_text(a) if a else None))
                elif child.type == "wildcard_import":
                    add(Import(path, line, module, "*"))
        elif t in ("import_statement", "export_statement"):  # js/ts
            source = node.child_by_field_name("source")
            module = node_text(source).strip("'\"`") if source is not None else ""
            for n in _descendants(node, {"import_specifier", "export_specifier", "namespace_import",
                                         "import_clause", "namespace_export"}):
                if n.type in ("import_specifier", "export_specifier"):
                    name, alias = n.child_by_field_name("name"), n.child_by_field_name("alias")
                    add(Import(path, line, module, node_text(name) if name else None,
                               node_text(alias) if alias else None))
                elif n.type in ("namespace_import", "namespace_export"):
                    ident = next((c for c in n.named_children if c.type == "identifier"), None)
                    add(Import(path, line, module, "*", node_text(ident) if ident else None))
                elif n.type == "import_clause":
                    for c in n.named_children:
                        if c.type == "identifier":
                            add(Import(path, line, module, "default", node_text(c)))
            if t == "export_statement" and any(c.type == "*" for c in node.children) and \
                    not any(c.type == "namespace_export" for c in node.named_children):
                add(Import(path, line, module, "*"))
        elif t == "import_declaration" and self.lang == "go":
            for spec in _descendants(node, {"import_spec"}):
                p, n = spec.child_by_field_name("path"), spec.child_by_field_name("name")
                module = node_text(p).strip('"`') if p is not None else ""
                add(Import(path, spec.start_point[0] + 1, module, None, node_text(n) if n is not None else None))
        elif t == "import_declaration":  # java
            target = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
            if target is not None:
                full = node_text(target)
                if any(c.type == "asterisk" for c in node.named_children):
                    add(Import(path, line, full, "*"))
                else:
                    module, _, name = full.rpartition(".")
                    add(Import(path, line, module, name))
        elif t == "use_declaration":
            arg = node.child_by_field_name("argument")
            if arg is not None:
                for module, name, alias in _rust_use(arg, ""):
                    add(Import(path, line, module, name, alias))
