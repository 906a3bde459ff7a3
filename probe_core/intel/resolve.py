"""Which definition a use of a name means, as far as scopes and imports tell without types.

Order of evidence for a use of `name` (each step either decides or falls through):
1. `self.name` / `this.name` / `Self::name` / a Go receiver: a method of the enclosing type, its
   bases (certain) or its subclasses (an override that may run);
2. `Type.name` / `Type::name`: a member of that type (or of its bases);
3. `mod.name` where `mod` is an import: a top-level definition in that module (an import of
   something outside the repository means: not ours);
4. bare `name`: the same file's module level or enclosing function, then the file's imports
   (re-exports followed), then Go's package (the directory) or a glob import;
5. `expr.name` on a value of unknown type: every method so named, confidence shared out.
Every answer carries a confidence; nothing certain is dropped, nothing ruled out is kept.
"""
from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from pathlib import Path

from .extract import SELF_WORDS
from .model import Import, Ref, Symbol
from .store import GraphStore

TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type", "module", "extension"})
_LANG_FAMILY = {"javascript": "js", "typescript": "js", "tsx": "js", "c": "c", "cpp": "c"}
_JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts")
_MAX_REEXPORT_HOPS = 4


def family(language: str | None) -> str:
    return _LANG_FAMILY.get(language or "", language or "")


class Resolver:
    """Resolves uses of names against one graph; caches per instance (one per query)."""

    def __init__(self, store: GraphStore, root: Path | None = None) -> None:
        self.store = store
        self._defs: dict[str, list[Symbol]] = {}
        self._imports: dict[str, list[Import]] = {}
        self.index = store.file_index()  # kept by the store while the graph does not change
        self.languages: dict[str, str | None] = self.index.languages
        self.lines: dict[str, int] = self.index.lines
        self._dirs: dict[str, list[str]] = self.index.dirs
        self._modules: dict[tuple, set[str]] = {}
        self.go_module = _go_module(root) if root is not None else None
        self.ancestors = lru_cache(maxsize=None)(self._ancestors)
        self.descendants = lru_cache(maxsize=None)(self._descendants)

    # -- lookups -----------------------------------------------------------------------------
    def defs(self, name: str) -> list[Symbol]:
        """Definitions named `name` (impl blocks are not definitions of their type)."""
        found = self._defs.get(name)
        if found is None:
            found = self._defs[name] = [s for s in self.store.symbols_named(name) if s.kind != "impl"]
        return found

    def imports(self, path: str) -> list[Import]:
        found = self._imports.get(path)
        if found is None:
            found = self._imports[path] = self.store.imports_of(path)
        return found

    def is_type(self, name: str) -> bool:
        return any(s.kind in TYPE_KINDS for s in self.defs(name))

    def _ancestors(self, type_name: str) -> frozenset[str]:
        seen: set[str] = set()
        todo = [type_name]
        while todo:
            for e in self.store.edges_from(todo.pop()):
                if e.parent not in seen and e.parent != type_name:
                    seen.add(e.parent)
                    todo.append(e.parent)
        return frozenset(seen)

    def _descendants(self, type_name: str) -> frozenset[str]:
        seen: set[str] = set()
        todo = [type_name]
        while todo:
            for e in self.store.edges_to(todo.pop()):
                if e.child not in seen and e.child != type_name:
                    seen.add(e.child)
                    todo.append(e.child)
        return frozenset(seen)

    def enclosing_type(self, ref: Ref) -> str | None:
        """The type whose method (or nested function of a method) holds the use."""
        if not ref.enclosing:
            return None
        parts = ref.enclosing.split(".")
        for i in range(len(parts) - 1, -1, -1):
            if self.is_type(parts[i]) and (i < len(parts) - 1 or len(parts) == 1):
                return parts[i]
        return parts[-2] if len(parts) > 1 else None

    # -- modules -----------------------------------------------------------------------------
    def module_files(self, module: str, from_path: str) -> set[str]:
        """Files of the repository an import names; empty for something outside it."""
        lang = family(self.languages.get(from_path))
        # only relative forms depend on the importing file's directory
        key = (lang, module, posixpath.dirname(from_path) if module.startswith(".") or lang == "js" else None)
        found = self._modules.get(key)
        if found is None:
            found = self._modules[key] = self._module_files(module, from_path, lang)
        return set(found)

    def _module_files(self, module: str, from_path: str, lang: str) -> set[str]:
        files = self.languages
        if lang == "python":
            dots = len(module) - len(module.lstrip("."))
            rest = module[dots:].replace(".", "/")
            if dots:
                base = posixpath.dirname(from_path)
                for _ in range(dots - 1):
                    base = posixpath.dirname(base)
                stem = posixpath.join(base, rest) if rest else base
                return {p for p in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi") if p in files}
            if not rest:
                return set()
            return set(self.index.ending(f"{rest}.py")) | set(self.index.ending(f"{rest}/__init__.py"))
        if lang == "js":
            if not module.startswith("."):
                return set()
            stem = posixpath.normpath(posixpath.join(posixpath.dirname(from_path), module))
            stem = re.sub(r"\.(js|mjs|cjs)$", "", stem)
            out = {stem + ext for ext in _JS_EXTS if stem + ext in files}
            out |= {f"{stem}/index{ext}" for ext in _JS_EXTS if f"{stem}/index{ext}" in files}
            if module in files:
                out.add(module)
            return out
        if lang == "go":
            if self.go_module and (module == self.go_module or module.startswith(self.go_module + "/")):
                rel = module[len(self.go_module):].strip("/")
                return set(self._dirs.get(rel, []))
            first = module.split("/", 1)[0]
            if "." not in first:  # the standard library
                return set()
            last = module.rstrip("/").rsplit("/", 1)[-1]
            return {p for d in self.index.dirs_named(last) for p in self._dirs[d]}
        if lang == "rust":
            segs = [s for s in module.split("::") if s and s not in ("crate", "self", "super")]
            if not segs:
                return {p for p in self.index.ending("lib.rs") + self.index.ending("main.rs")
                        if p.endswith(("src/lib.rs", "src/main.rs")) or p in ("lib.rs", "main.rs")}
            last = segs[-1]
            return set(self.index.ending(f"{last}.rs")) | set(self.index.ending(f"{last}/mod.rs"))
        if lang == "java":
            rel = module.replace(".", "/")
            out = {p for p in files if p.endswith(f"{rel}.java")}
            out |= {p for d in self.index.dirs_named(rel) for p in self._dirs[d]}
            return out
        return set()

    def _import_targets(self, imp: Import, from_path: str) -> set[str]:
        """Files an import may point into (the named submodule too, for `from pkg import mod`)."""
        files = self.module_files(imp.module, from_path)
        if imp.name and imp.name not in ("*", "default"):
            lang = family(self.languages.get(from_path))
            sep = {"python": ".", "rust": "::", "java": "."}.get(lang)
            if sep:
                joined = imp.module + (imp.name if imp.module.endswith(sep) or imp.module.endswith(".") else sep + imp.name)
                files |= self.module_files(joined, from_path)
        return files

    def _exported(self, name: str, files: set[str], cands: list[Symbol], hops: int = 0) -> list[Symbol]:
        """Top-level definitions of `name` in `files`, following re-exports (`export * from`)."""
        found = [c for c in cands if c.path in files and (c.parent is None or c.kind in TYPE_KINDS)]
        if found or hops >= _MAX_REEXPORT_HOPS:
            return found
        nxt: set[str] = set()
        for f in files:
            for imp in self.imports(f):
                if imp.bound == name or imp.name == name or imp.name == "*":
                    nxt |= self._import_targets(imp, f)
        nxt -= files
        return self._exported(name, nxt, cands, hops + 1) if nxt else []

    # -- resolution --------------------------------------------------------------------------
    def use_key(self, ref: Ref) -> tuple:
        """What ``resolve(ref)`` depends on: two uses with the same key resolve alike (a file's
        repeated ``fmt.Errorf`` calls; a bare or ``self`` name also by the definition it is in)."""
        q = ref.qualifier
        if q is None or q.split("(")[0] in SELF_WORDS:
            return ref.path, ref.name, q, ref.enclosing
        return ref.path, ref.name, q

    def resolve(self, ref: Ref) -> list[tuple[Symbol, float]]:
        """Candidate definitions of one use, most likely first, each with a confidence in (0, 1]."""
        lang = family(self.languages.get(ref.path))
        cands = [c for c in self.defs(ref.name) if family(c.language) == lang or not c.language]
        if not cands:
            return []
        q = ref.qualifier
        if q is not None and q.split("(")[0] in SELF_WORDS:
            return self._in_hierarchy(ref, cands, super_only=q.startswith("super"))
        if q is None:
            return self._bare(ref, cands, lang)
        return self._qualified(ref, cands, q, lang)

    def _in_hierarchy(self, ref: Ref, cands: list[Symbol], super_only: bool = False) -> list[tuple[Symbol, float]]:
        cls = self.enclosing_type(ref)
        if cls is None:
            return [(c, 0.2) for c in cands if c.parent]
        up = self.ancestors(cls)
        own = [c for c in cands if c.owner == cls and not super_only]
        out = [(c, 1.0) for c in own]
        out += [(c, 1.0 if not own else 0.7) for c in cands if c.owner in up]
        if not super_only:
            down = self.descendants(cls)
            out += [(c, 0.6) for c in cands if c.owner in down]
        if out:
            return out
        return [(c, 0.2) for c in cands if c.parent and c.owner not in (cls,)]

    def _bare(self, ref: Ref, cands: list[Symbol], lang: str) -> list[tuple[Symbol, float]]:
        enclosing = ref.enclosing or ""
        local = [c for c in cands if c.path == ref.path and (
            c.parent is None or (c.kind == "function" and (enclosing == c.parent or enclosing.startswith(c.parent + "."))))]
        if lang in ("java", "csharp", "kotlin", "ruby", "c"):  # a bare name in a method: a member first
            members = self._in_hierarchy(ref, cands) if ref.enclosing else []
            members = [m for m in members if m[1] > 0.2]
            if members:
                return members
        if local:
            return [(c, 1.0) for c in local]
        imported = False
        for imp in self.imports(ref.path):
            if imp.bound != ref.name:
                continue
            imported = True
            files = self._import_targets(imp, ref.path)
            if not files:
                continue
            found = self._exported(imp.name if imp.name not in (None, "*", "default") else ref.name, files, cands)
            if found:
                return [(c, 1.0) for c in found]
        if lang == "go":
            here = posixpath.dirname(ref.path)
            pkg = [c for c in cands if posixpath.dirname(c.path) == here and c.parent is None]
            return [(c, 1.0) for c in pkg]
        if imported:
            return []  # bound by an import of something outside the repository
        globbed: list[Symbol] = []
        for imp in self.imports(ref.path):
            if imp.name == "*":
                globbed += self._exported(ref.name, self._import_targets(imp, ref.path), cands)
        if globbed:
            return [(c, 0.8) for c in globbed]
        if lang in ("rust", "java", "c", "csharp", "kotlin", "ruby", "php", "swift"):
            # crate-wide macros, same-package classes, headers: no import needed
            top = [c for c in cands if c.parent is None or c.kind in TYPE_KINDS]
            return [(c, 0.5 / len(top) if len(top) > 1 else 0.5) for c in top]
        return []

    def _qualified(self, ref: Ref, cands: list[Symbol], q: str, lang: str) -> list[tuple[Symbol, float]]:
        parts = [p for p in re.split(r"::|\.", re.sub(r"<.*?>", "", q)) if p]
        last = parts[-1] if parts else q
        first = parts[0] if parts else q
        # Type.member / Type::member
        if self.is_type(last):
            members = [(c, 1.0) for c in cands if c.owner == last]
            up = self.ancestors(last)
            members += [(c, 0.9) for c in cands if c.owner in up]
            if members:
                return members
        # module.member
        for imp in self.imports(ref.path):
            if imp.bound not in (first, last):
                continue
            files = self._import_targets(imp, ref.path)
            if not files:
                return []  # a module outside the repository
            found = self._exported(ref.name, files, cands)
            found += [c for c in cands if c.owner == imp.name and c not in found]
            return [(c, 1.0) for c in found]
        if lang == "rust" and len(parts) >= 1 and parts[0] in ("crate", "self", "super") or \
                (lang == "rust" and not self.is_type(last)):
            mod_files = self.module_files("::".join(parts), ref.path)
            found = [c for c in cands if c.path in mod_files and c.parent is None]
            if found:
                return [(c, 1.0) for c in found]
        # value.member on a value of unknown type: any method so named
        methods = [c for c in cands if c.parent and (c.kind == "method" or self.is_type(c.owner or ""))]
        if not methods:
            return []
        share = 0.6 if len(methods) == 1 else 0.5 / len(methods)
        return [(c, share) for c in methods]


def _go_module(root: Path) -> str | None:
    try:
        text = (Path(root) / "go.mod").read_text("utf-8", "replace")
    except OSError:
        return None
    m = re.search(r"^\s*module\s+(\S+)", text, re.M)
    return m.group(1) if m else None
