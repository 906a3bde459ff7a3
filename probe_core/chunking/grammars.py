"""Per-language tables of tree-sitter node types: what is a definition, a class, a namespace.

The walker (code.py, definitions.py) is generic; what it knows about a language is written
here as data, so adding a language is mostly adding a table, not a branch.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from tree_sitter import Parser, Tree
from tree_sitter_language_pack import get_parser


@dataclass(frozen=True)
class GrammarSpec:
    """What the chunker needs to know about one tree-sitter grammar."""

    grammar: str  # name in tree-sitter-language-pack
    # node type -> symbol_kind of definitions kept whole ("function" becomes "method" in a class)
    units: dict[str, str] = field(default_factory=dict)
    # node type -> symbol_kind of definitions whose members become chunks of their own
    containers: dict[str, str] = field(default_factory=dict)
    # nodes around a definition that belong to its chunk (decorators, `export`, `template<>`)
    wrappers: frozenset[str] = frozenset()
    # blocks walked through as if their content were at the enclosing level; named ones
    # (C++ namespaces, Rust `mod x {}`) become the parent_symbol of what they hold
    namespaces: frozenset[str] = frozenset()
    anonymous_namespaces: frozenset[str] = frozenset()  # #ifdef, extern "C": no name to give
    # a container's body nodes, whose named children are its members
    bodies: frozenset[str] = frozenset()
    # comments and attributes: attached to the definition right below them
    comments: frozenset[str] = frozenset()
    # definitions that are only declarations without a body (interface method signatures)
    needs_body: frozenset[str] = frozenset()
    # which special-case rules of code.py apply ("js", "go", "c", "rust", "kotlin", "swift")
    family: str = ""


_JS_UNITS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "method_definition": "method",
    # only reached through `export default ...` or `const x = ...` (see code.py)
    "function_expression": "function",
    "function": "function",
    "generator_function": "function",
    "arrow_function": "function",
}
_JS = GrammarSpec(
    grammar="javascript",
    units=_JS_UNITS,
    containers={"class_declaration": "class", "class": "class"},
    wrappers=frozenset({"export_statement"}),
    bodies=frozenset({"class_body"}),
    comments=frozenset({"comment"}),
    family="js",
)
_TS_UNITS = {
    **_JS_UNITS,
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "type_alias_declaration": "type",
}
_TS_KW = dict(
    units=_TS_UNITS,
    containers={"class_declaration": "class", "abstract_class_declaration": "class", "class": "class"},
    wrappers=frozenset({"export_statement", "ambient_declaration"}),
    namespaces=frozenset({"internal_module", "module"}),
    bodies=frozenset({"class_body"}),
    comments=frozenset({"comment"}),
    family="js",
)
_C_KW = dict(
    units={
        "function_definition": "function",
        "struct_specifier": "struct",
        "union_specifier": "struct",
        "enum_specifier": "enum",
    },
    namespaces=frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"}),
    anonymous_namespaces=frozenset(
        {"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef",
         "linkage_specification"}
    ),
    comments=frozenset({"comment"}),
    needs_body=frozenset({"struct_specifier", "union_specifier", "enum_specifier"}),
    family="c",
)

SPECS: dict[str, GrammarSpec] = {
    "python": GrammarSpec(
        grammar="python",
        units={"function_definition": "function"},
        containers={"class_definition": "class"},
        wrappers=frozenset({"decorated_definition"}),
        bodies=frozenset({"block"}),
        comments=frozenset({"comment"}),
    ),
    "javascript": _JS,
    "typescript": GrammarSpec(grammar="typescript", **_TS_KW),
    "tsx": GrammarSpec(grammar="tsx", **_TS_KW),
    "go": GrammarSpec(
        grammar="go",
        units={
            "function_declaration": "function",
            "method_declaration": "method",
            "type_declaration": "type",
        },
        comments=frozenset({"comment"}),
        family="go",
    ),
    "rust": GrammarSpec(
        grammar="rust",
        units={
            "function_item": "function",
            "struct_item": "struct",
            "union_item": "struct",
            "enum_item": "enum",
            "macro_definition": "macro",
            "type_item": "type",
        },
        containers={"impl_item": "impl", "trait_item": "trait"},
        namespaces=frozenset({"mod_item"}),
        bodies=frozenset({"declaration_list"}),
        comments=frozenset({"line_comment", "block_comment", "attribute_item"}),
        family="rust",
    ),
    "java": GrammarSpec(
        grammar="java",
        units={
            "method_declaration": "method",
            "constructor_declaration": "method",
            "compact_constructor_declaration": "method",
        },
        containers={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "class",
            "annotation_type_declaration": "interface",
        },
        bodies=frozenset(
            {"class_body", "interface_body", "enum_body", "enum_body_declarations", "annotation_type_body"}
        ),
        comments=frozenset({"line_comment", "block_comment"}),
        needs_body=frozenset({"method_declaration"}),
    ),
    "c": GrammarSpec(grammar="c", **_C_KW),
    "cpp": GrammarSpec(
        grammar="cpp",
        units={"function_definition": "function", "enum_specifier": "enum"},
        containers={"class_specifier": "class", "struct_specifier": "struct", "union_specifier": "struct"},
        wrappers=frozenset({"template_declaration"}),
        namespaces=_C_KW["namespaces"] | {"namespace_definition", "linkage_specification"},
        anonymous_namespaces=_C_KW["anonymous_namespaces"],
        bodies=frozenset({"field_declaration_list"}),
        comments=frozenset({"comment"}),
        needs_body=frozenset({"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}),
        family="c",
    ),
    "ruby": GrammarSpec(
        grammar="ruby",
        units={"method": "function", "singleton_method": "method"},
        containers={"class": "class", "module": "module"},
        bodies=frozenset({"body_statement", "singleton_class"}),
        comments=frozenset({"comment"}),
    ),
    "csharp": GrammarSpec(
        grammar="csharp",
        units={
            "method_declaration": "method",
            "constructor_declaration": "method",
            "destructor_declaration": "method",
            "operator_declaration": "method",
            "conversion_operator_declaration": "method",
            "enum_declaration": "enum",
        },
        containers={
            "class_declaration": "class",
            "struct_declaration": "struct",
            "interface_declaration": "interface",
            "record_declaration": "class",
        },
        namespaces=frozenset({"namespace_declaration"}),
        bodies=frozenset({"declaration_list"}),
        comments=frozenset({"comment"}),
        needs_body=frozenset({"method_declaration"}),
    ),
    "php": GrammarSpec(
        grammar="php",
        units={"function_definition": "function", "method_declaration": "method"},
        containers={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
        },
        namespaces=frozenset({"namespace_definition"}),
        bodies=frozenset({"declaration_list", "enum_declaration_list"}),
        comments=frozenset({"comment"}),
        needs_body=frozenset({"method_declaration"}),
    ),
    "kotlin": GrammarSpec(
        grammar="kotlin",
        units={"function_declaration": "function"},
        containers={"class_declaration": "class", "object_declaration": "class"},
        bodies=frozenset({"class_body", "enum_class_body", "companion_object"}),
        comments=frozenset({"line_comment", "multiline_comment"}),
        needs_body=frozenset({"function_declaration"}),
        family="kotlin",
    ),
    "swift": GrammarSpec(
        grammar="swift",
        units={
            "function_declaration": "function",
            "init_declaration": "method",
            "deinit_declaration": "method",
        },
        containers={"class_declaration": "class", "protocol_declaration": "interface"},
        bodies=frozenset({"class_body", "enum_class_body", "protocol_body"}),
        comments=frozenset({"comment", "multiline_comment"}),
        family="swift",
    ),
}

# A C header that uses these is parsed with the C++ grammar (".h" maps to "c").
_CPP_IN_HEADER = re.compile(
    r"^\s*(?:class\s+\w+\s*[:{]|namespace\s+\w*\s*\{|template\s*<)|\bstd::|\bpublic:", re.M
)


def spec_for(language: str, text: str) -> GrammarSpec | None:
    """The grammar table for `language`, or None when it is not chunked by syntax tree."""
    if language == "c" and _CPP_IN_HEADER.search(text):
        return SPECS["cpp"]
    return SPECS.get(language)


_local = threading.local()


def parser_for(spec: GrammarSpec) -> Parser:
    """A cached parser for the grammar; one per thread, as parsers are not thread-safe."""
    cache: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    parser = cache.get(spec.grammar)
    if parser is None:
        parser = cache[spec.grammar] = get_parser(spec.grammar)
    return parser


def parse(spec: GrammarSpec, text: str, *, share: bool = False) -> Tree:
    """``text`` parsed with ``spec``'s grammar. ``share``: keep the tree for the next caller that
    parses this same ``text`` object (the chunker shares its tree with the graph's extractor, which
    reads the same file next: each file is parsed once, not twice); that caller takes it, and a
    tree nobody takes is dropped at this thread's next shared parse."""
    kept = getattr(_local, "shared", None)
    if kept is not None and kept[0] is text and kept[1] == spec.grammar:
        _local.shared = None
        return kept[2]
    tree = parser_for(spec).parse(text.encode("utf-8", "surrogatepass"))
    if share:
        _local.shared = (text, spec.grammar, tree)
    return tree
