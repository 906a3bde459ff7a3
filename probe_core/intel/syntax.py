"""The node types of each tree-sitter grammar that the symbol graph reads (extract.py): what names a
definition, what is a member access, what is a call. A language gets call sites in the graph by
having its call and member nodes here (``support.py`` lists the languages that do).
"""
from __future__ import annotations

# identifiers that can name a definition somewhere
IDENT = frozenset({"identifier", "type_identifier", "field_identifier", "property_identifier",
                   "shorthand_property_identifier", "constant", "simple_identifier", "name"})  # name: php
# the receiver words: `self.x()` means a method of the enclosing type
SELF_WORDS = frozenset({"self", "this", "cls", "Self", "super", "$this"})  # $this: php (`static::` → self)
SKIP_NAMES = SELF_WORDS | {"_"}
# member access node -> (object field, member field)
MEMBER = {
    "attribute": ("object", "attribute"),  # python
    "member_expression": ("object", "property"),  # js/ts
    "selector_expression": ("operand", "field"),  # go
    "field_expression": ("value|argument", "field"),  # rust | c/c++ `obj.f`, `p->f`
    "scoped_identifier": ("path", "name"),  # rust `A::b`, java `a.b`
    "scoped_type_identifier": ("path", "name"),
    "qualified_type": ("package", "name"),  # go `http.Handler`
    "nested_type_identifier": ("module", "name"),  # ts `ns.T`
    "field_access": ("object", "field"),  # java
    "method_invocation": ("object", "name"),  # java
    "call": ("receiver", "method"),  # ruby `obj.name` (python's call has neither field)
    "scope_resolution": ("scope", "name"),  # ruby `A::B`
    "member_access_expression": ("expression|object", "name"),  # c# `obj.Name`, php `$obj->name`
    "member_call_expression": ("object", "name"),  # php `$obj->name()`
    "nullsafe_member_call_expression": ("object", "name"),  # php `$obj?->name()`
    "scoped_call_expression": ("scope", "name"),  # php `self::name()`, `Type::name()`
}
# call node -> the field holding what is called
CALLS = {"call": "function", "call_expression": "function", "new_expression": "constructor",
         "method_invocation": "name", "object_creation_expression": "type",
         "macro_invocation": "macro", "invocation_expression": "function", "function_call_expression": "function"}
# call nodes whose method name is one of their own fields (ruby: `obj.name(…)`, `name(…)`, `name arg`)
CALL_MEMBERS = {"call": "method", "member_call_expression": "name", "nullsafe_member_call_expression": "name",
                "scoped_call_expression": "name"}  # ruby, php
# names that are not uses of a definition: php's `$name` variables
NOT_A_USE_PARENTS = frozenset({"variable_name"})
# ruby: a bare name standing as a statement is a call of a method without arguments (`save`); a local
# variable read there resolves to no definition, so it adds nothing
RUBY_STATEMENT_PARENTS = frozenset({"body_statement", "block_body", "then", "else", "begin", "do",
                                    "parenthesized_statements"})
PASS_THROUGH = frozenset({"generic_function", "generic_type", "type_arguments_wrapper"})
IMPORTS = frozenset({"import_statement", "import_from_statement", "import_declaration",
                     "use_declaration", "future_import_statement"})
# interface/trait members without a body: the finder skips them, implementations need them
SIGNATURES = frozenset({"method_elem", "method_spec", "function_signature_item", "method_signature",
                        "abstract_method_signature"})
CONTAINER_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "module",
                             "extension"})
TYPE_LIKE = frozenset({"type_identifier", "identifier", "scoped_type_identifier", "qualified_type",
                       "generic_type", "scoped_identifier", "nested_type_identifier", "attribute",
                       "member_expression", "constant", "scope_resolution",  # ruby `< Base`, `< A::Base`
                       "name", "qualified_name"})  # php `extends Base`
