"""The typed rows of the symbol graph and the result shape every code-intelligence query returns.

`source` names who produced an answer: "treesitter" (the graph) or "lsp" (an installed language
server answered find_callers/find_references/find_implementations, see `lsp`); same shape either way.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

SOURCE_TREESITTER = "treesitter"
SOURCE_LSP = "lsp"


@dataclass(slots=True)
class Symbol:
    """A definition: function, method, class, struct, interface, trait, impl block, ..."""

    path: str
    name: str
    qualname: str  # "Class.method", "Outer.inner", or the name at module level
    kind: str
    line: int  # the declaration line (`def`/`class`/`type … struct`/`impl … for`)
    end_line: int
    signature: str = ""
    doc: str = ""
    parent: str | None = None  # qualname of the enclosing definition, receiver type, impl target
    language: str = ""
    id: int | None = None  # row id once stored

    @property
    def owner(self) -> str | None:
        """The type a method belongs to (last part of `parent`)."""
        return self.parent.rsplit(".", 1)[-1] if self.parent else None


@dataclass(slots=True)
class Ref:
    """One use of a name: a call site, a plain reference or an import."""

    path: str
    line: int
    name: str
    qualifier: str | None  # `obj` in `obj.name`, `self`, `pkg` in `pkg.Name`, `Type` in `Type::f`
    kind: str  # call | ref | import
    enclosing: str | None = None  # qualname of the innermost enclosing definition
    enclosing_line: int | None = None


@dataclass(slots=True)
class Edge:
    """`child` extends/implements/embeds `parent` (parent written as in the source, last segment)."""

    path: str
    line: int  # the child's declaration line (for Rust the `impl … for` line)
    child: str
    parent: str
    kind: str  # extends | implements | embeds
    parent_qualifier: str | None = None


@dataclass(slots=True)
class Import:
    """`module` as written (dotted, relative, a path string); `name` None for whole-module imports."""

    path: str
    line: int
    module: str
    name: str | None = None
    alias: str | None = None

    @property
    def bound(self) -> str:
        """The local name the import binds."""
        if self.alias:
            return self.alias
        if self.name and self.name != "*":
            return self.name
        return self.module.replace("::", ".").replace("/", ".").rsplit(".", 1)[-1]


@dataclass(slots=True)
class FileGraph:
    """Everything the graph knows about one file."""

    path: str
    language: str | None
    lines: int
    symbols: list[Symbol] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)


@dataclass(slots=True)
class Item:
    """One location in a query's answer."""

    path: str
    line: int
    symbol: str | None
    kind: str
    context: str | None = ""  # None until ``queries.finish`` reads it (only for the items it keeps)
    confidence: float = 1.0
    depth: int | None = None
    category: str | None = None  # impact_analysis: caller | type_reference | implementation | test

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if v is not None}
        d["confidence"] = round(self.confidence, 2)
        return d


@dataclass(slots=True)
class IntelResult:
    """`{target, items, truncated, source}`: the contract of find_* / impact_analysis."""

    target: dict | None
    items: list[Item]
    truncated: bool = False
    source: str = SOURCE_TREESITTER
    message: str | None = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out: dict = {"target": self.target, "items": [i.to_dict() for i in self.items],
                     "truncated": self.truncated, "source": self.source}
        if self.message:
            out["message"] = self.message
        out.update(self.extra)
        return out
