"""Small readers of tree-sitter nodes and source text that the graph walker (``extract.py``) uses:
a Rust macro's call sites, a node's field name, a `use` tree flattened, a string literal's body,
a doc comment's first line. Kept apart so the walker's module holds only the walk.
"""
from __future__ import annotations

import re

from tree_sitter import Node

from probe_core.chunking.definitions import node_text

_SPACE = re.compile(r"\s+")
_PY_STRING = re.compile(r"^[rRbBuUfF]{0,2}(?P<q>\"\"\"|'''|\"|')(?P<body>.*)(?P=q)$", re.S)
_COMMENT_MARK = re.compile(r"^\s*(?:/\*\*?|\*/|\*|///?!?|#!?|--)\s?")
MAX_SIGNATURE = 200


def one_line(raw: str, limit: int = MAX_SIGNATURE) -> str:
    return _SPACE.sub(" ", raw).strip()[:limit]


def token_tree_use(node: Node, receiver: str | None) -> tuple[str | None, bool]:
    """Inside a Rust macro's token tree: `name(` is a call; `a.name` / `A::name` is qualified."""
    nxt = node.next_sibling
    call = nxt is not None and nxt.type == "token_tree" and (nxt.text or b"").startswith(b"(")
    qualifier = None
    prev = node.prev_sibling
    if prev is not None and prev.type in (".", "::"):
        obj = prev.prev_sibling
        if obj is not None:
            qualifier = node_text(obj)
            if receiver and qualifier == receiver:
                qualifier = "self"
    return qualifier, call


def field_of(node: Node, parent: Node | None) -> str | None:
    """The field ``node`` fills in ``parent`` (its parent: the caller knows it)."""
    if parent is None:
        return None
    for i, child in enumerate(parent.children):
        if child.start_byte == node.start_byte and child.type == node.type:
            return parent.field_name_for_child(i)
    return None


def descendants(node: Node, types: set[str]):
    stack = list(node.named_children)
    while stack:
        n = stack.pop()
        if n.type in types:
            yield n
        stack.extend(n.named_children)


def rust_use(node: Node, prefix: str):
    """Flatten a `use` tree into (module, name, alias) triples."""
    join = (lambda a, b: f"{a}::{b}" if a else b)
    t = node.type
    if t in ("identifier", "crate", "self", "super"):
        yield prefix, node_text(node), None
    elif t == "scoped_identifier":
        path, name = node.child_by_field_name("path"), node.child_by_field_name("name")
        yield join(prefix, node_text(path) if path is not None else ""), node_text(name) if name else None, None
    elif t == "use_as_clause":
        path, alias = node.child_by_field_name("path"), node.child_by_field_name("alias")
        for module, name, _ in rust_use(path, prefix) if path is not None else []:
            yield module, name, node_text(alias) if alias is not None else None
    elif t == "use_wildcard":
        inner = node.named_children[0] if node.named_child_count else None
        yield join(prefix, node_text(inner) if inner is not None else ""), "*", None
    elif t == "scoped_use_list":
        path, lst = node.child_by_field_name("path"), node.child_by_field_name("list")
        new_prefix = join(prefix, node_text(path)) if path is not None else prefix
        if lst is not None:
            yield from rust_use(lst, new_prefix)
    elif t == "use_list":
        for child in node.named_children:
            yield from rust_use(child, prefix)


def string_body(literal: str) -> str:
    """The text inside a Python string literal: its prefix (r, b, u, f, in any case and pair) and
    quotes removed, and nothing else (stripping a set of characters would eat the first letter of
    "Return ..." or the last of "... thank you")."""
    m = _PY_STRING.match(literal)
    return m["body"] if m else literal


def first_doc_line(raw: str) -> str:
    for line in raw.splitlines():
        line = _COMMENT_MARK.sub("", line).strip().strip('"\'').strip()
        if line and line not in ("*", "/"):
            return line[:MAX_SIGNATURE]
    return ""
