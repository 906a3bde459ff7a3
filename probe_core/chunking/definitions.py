"""Which syntax-tree nodes are definitions, and their kind, name and parent symbol.

The generic rules read the tables of grammars.py; the few things tables cannot say (a Go
method's receiver, a C++ `Foo::bar` definition, `const f = () => {}` in JavaScript) are the
language special cases at the end.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from probe_core.chunking.grammars import GrammarSpec

# Type aliases shorter than this stay in the header: a chunk per `type Id = string` is noise.
_MIN_ALIAS_LINES = 3
_MAX_SYMBOL_CHARS = 200

_NAME_NODE_TYPES = frozenset(
    {"identifier", "type_identifier", "simple_identifier", "constant", "name", "property_identifier",
     "field_identifier", "scope_resolution", "private_property_identifier"}
)
_JS_FUNCTION_VALUES = frozenset(
    {"function_expression", "function", "generator_function", "arrow_function", "class"}
)
_KEYWORD_KINDS = {
    "class": "class", "struct": "struct", "enum": "enum", "extension": "extension",
    "actor": "class", "interface": "interface",
}
_SPACE = re.compile(r"\s+")
_NOT_WRAPPED = frozenset({"decorator", "template_parameter_list"})  # beside the definition, not it


@dataclass(slots=True)
class Definition:
    """A definition found in a block, before it becomes segments."""

    node: Node  # outermost node (wrapper included): its lines are the definition's lines
    inner: Node  # the definition itself
    kind: str  # symbol_kind: function, method, class, struct, ...
    name: str | None
    parent: str | None = None
    container: bool = False  # members become chunks of their own
    start: int = 0  # line range, filled in by the walker
    end: int = 0


def node_text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def clean_symbol(raw: str | None) -> str | None:
    """One line, bounded length: symbols are payload values and display text."""
    if not raw:
        return None
    cleaned = _SPACE.sub(" ", raw).strip()
    return cleaned[:_MAX_SYMBOL_CHARS] or None


def _strip_type(raw: str) -> str:
    """`&'a mut Foo<T>` / `*Foo[T]` -> `Foo`: the bare name a reader searches for."""
    raw = raw.strip().lstrip("&*").strip()
    raw = re.sub(r"^(?:'\w+\s+)?(?:mut\s+|dyn\s+|const\s+)*", "", raw)
    for stop in "<[({":
        cut = raw.find(stop)
        if cut > 0:
            raw = raw[:cut]
    return raw.strip()


class DefinitionFinder:
    """Classifies block-level nodes of one grammar; `lines` maps a node to its line range."""

    def __init__(self, spec: GrammarSpec, lines: Callable[[Node], tuple[int, int]]) -> None:
        self.spec = spec
        self._lines = lines

    def classify(self, node: Node, in_class: bool) -> Definition | None:
        """The definition `node` is, if any, with its kind and name."""
        spec = self.spec
        kind_of = node.type
        if kind_of in spec.wrappers:
            inner = self._unwrap(node)
            unit = self.classify(inner, in_class) if inner is not None else None
            if unit is not None:
                unit.node = node
                if unit.name is None and node.type == "export_statement":
                    unit.name = "default"  # `export default function () {}`
            return unit
        if kind_of in spec.containers:
            if kind_of in spec.needs_body and node.child_by_field_name("body") is None:
                return None  # `class Foo;`
            kind = self._keyword_kind(node) or spec.containers[kind_of]
            return Definition(node, node, kind, self._name(node), container=True)
        if kind_of in spec.units:
            if kind_of in spec.needs_body and not self._has_body(node):
                return None
            return self._definition(node, spec.units[kind_of], in_class)
        if spec.family == "js":
            return self._js_binding(node, in_class)
        if spec.family == "c" and kind_of == "type_definition":
            return self._c_typedef(node)
        return None

    def _definition(self, node: Node, kind: str, in_class: bool) -> Definition | None:
        family = self.spec.family
        if family == "go":
            return self._go_definition(node, kind)
        if kind == "type":
            start, end = self._lines(node)
            if end - start + 1 < _MIN_ALIAS_LINES:
                return None
        parent = None
        name = self._name(node)
        if family == "c" and node.type == "function_definition" and name and "::" in name:
            scope, _, name = name.rpartition("::")
            parent = _strip_type(scope) or None
            kind = "method"
        if kind == "function" and (in_class or parent):
            kind = "method"
        if node.type in ("init_declaration", "deinit_declaration") and name is None:
            name = node.type.split("_")[0]  # Swift init/deinit have no name node
        return Definition(node, node, kind, name, parent)

    def _unwrap(self, node: Node) -> Node | None:
        for field_name in ("definition", "declaration", "value"):
            inner = node.child_by_field_name(field_name)
            if inner is not None:
                return inner
        for child in reversed(node.named_children):
            if child.type not in self.spec.comments and child.type not in _NOT_WRAPPED:
                return child
        return None

    def _has_body(self, node: Node) -> bool:
        if node.child_by_field_name("body") is not None:
            return True
        return any(child.type == "function_body" for child in node.named_children)

    def _keyword_kind(self, node: Node) -> str | None:
        """Kotlin/Swift spell struct, enum, interface as `class_declaration` + a keyword."""
        if self.spec.family not in ("kotlin", "swift"):
            return None
        words = [child.type for child in node.children if not child.is_named]
        if "enum" in words:
            return "enum"
        for word in words:
            if word in _KEYWORD_KINDS:
                return _KEYWORD_KINDS[word]
        return None

    # -- names -------------------------------------------------------------------------------

    def _name(self, node: Node) -> str | None:
        if node.type == "impl_item":  # Rust: methods of `impl Trait for X` belong to X
            target = node.child_by_field_name("type")
            return clean_symbol(_strip_type(node_text(target))) if target is not None else None
        name_node = node.child_by_field_name("name")
        if name_node is None:
            declarator = node.child_by_field_name("declarator")
            if declarator is not None:
                return clean_symbol(self._declarator_name(declarator))
            name_node = next((c for c in node.named_children if c.type in _NAME_NODE_TYPES), None)
        if name_node is None:
            return None
        return clean_symbol(node_text(name_node))

    def _declarator_name(self, node: Node) -> str:
        """C/C++: the identifier inside `*(*f)(int)`-style declarator chains."""
        for _ in range(16):
            inner = node.child_by_field_name("declarator")
            if inner is None:
                wraps = node.type in ("reference_declarator", "parenthesized_declarator")
                if wraps and node.named_child_count:
                    inner = node.named_children[-1]
                else:
                    break
            node = inner
        return node_text(node)

    # -- language special cases --------------------------------------------------------------

    def _go_definition(self, node: Node, kind: str) -> Definition | None:
        if node.type == "method_declaration":
            receiver = node.child_by_field_name("receiver")
            parent = None
            if receiver is not None:
                param = next((c for c in receiver.named_children if c.type == "parameter_declaration"), None)
                rtype = param.child_by_field_name("type") if param is not None else None
                parent = clean_symbol(_strip_type(node_text(rtype))) if rtype is not None else None
            return Definition(node, node, "method", self._name(node), parent)
        if node.type == "type_declaration":
            spec_node = next((c for c in node.named_children if c.type in ("type_spec", "type_alias")), None)
            if spec_node is None:
                return None
            type_node = spec_node.child_by_field_name("type")
            kind = {"struct_type": "struct", "interface_type": "interface"}.get(
                type_node.type if type_node is not None else "", "type"
            )
            if kind == "type":
                start, end = self._lines(node)
                if end - start + 1 < _MIN_ALIAS_LINES:
                    return None
            return Definition(node, node, kind, self._name(spec_node))
        return Definition(node, node, kind, self._name(node))

    def _c_typedef(self, node: Node) -> Definition | None:
        """`typedef struct {...} Name;` is a struct definition named Name."""
        type_node = node.child_by_field_name("type")
        if type_node is None or type_node.child_by_field_name("body") is None:
            return None
        kind = "enum" if type_node.type == "enum_specifier" else "struct"
        declarator = node.child_by_field_name("declarator")
        name = self._declarator_name(declarator) if declarator is not None else None
        return Definition(node, node, kind, clean_symbol(name) or self._name(type_node))

    def _js_binding(self, node: Node, in_class: bool) -> Definition | None:
        """`const f = () => {}`, `exports.f = function () {}`, `handle = () => {}` in a class."""
        kind_of = node.type
        if kind_of in ("lexical_declaration", "variable_declaration"):
            for declarator in node.named_children:
                if declarator.type != "variable_declarator":
                    continue
                unit = self._js_value(node, declarator.child_by_field_name("value"), in_class)
                if unit is not None:
                    unit.name = self._name(declarator)
                    return unit
            return None
        if kind_of == "expression_statement" and node.named_child_count:
            assignment = node.named_children[0]
            if assignment.type != "assignment_expression":
                return None
            unit = self._js_value(node, assignment.child_by_field_name("right"), in_class)
            left = assignment.child_by_field_name("left")
            if unit is not None and left is not None:
                target = node_text(left)
                owner, _, prop = target.rpartition(".")
                if owner.endswith(".prototype"):
                    unit.parent = clean_symbol(owner[: -len(".prototype")])
                    unit.kind = "method"
                unit.name = clean_symbol(prop or target)
            return unit
        if kind_of in ("field_definition", "public_field_definition") and in_class:
            unit = self._js_value(node, node.child_by_field_name("value"), in_class=True)
            if unit is not None:
                prop = node.child_by_field_name("property") or node.child_by_field_name("name")
                unit.name = clean_symbol(node_text(prop)) if prop is not None else None
            return unit
        return None

    def _js_value(self, owner: Node, value: Node | None, in_class: bool) -> Definition | None:
        if value is None:
            return None
        if value.type == "call_expression":
            # React-style `const C = memo((props) => {...})`: the callback is the definition
            args = value.child_by_field_name("arguments")
            multiline_callbacks = [
                a for a in (args.named_children if args is not None else [])
                if a.type in _JS_FUNCTION_VALUES and a.end_point[0] > a.start_point[0]
            ]
            if not multiline_callbacks:
                return None
            return Definition(owner, value, "method" if in_class else "function", None)
        if value.type not in _JS_FUNCTION_VALUES:
            return None
        unit = self.classify(value, in_class)
        if unit is not None:
            unit.node = owner
        return unit
