"""Which language a path holds, and which kind of chunk (code, doc, config, test) it yields.

Decided from the path alone, so the scanner, the indexer and search filters agree on the same
names without reading files. The names are the `language` payload values users filter on.
"""
from __future__ import annotations

from pathlib import PurePosixPath

from probe_core.errors import ConfigError
from probe_core.records import ChunkKind

_EXTENSIONS: dict[str, str] = {
    # languages chunked by syntax tree (see grammars.py)
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp",
    ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".inl": "cpp",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby", ".ru": "ruby",
    ".cs": "csharp",
    ".php": "php",
    ".kt": "kotlin", ".kts": "kotlin",
    ".swift": "swift",
    # documents and configuration, chunked by headings / top-level blocks
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
    ".rst": "rst", ".rest": "rst",
    ".yaml": "yaml", ".yml": "yaml",
    ".toml": "toml",
    ".json": "json", ".jsonc": "json", ".json5": "json",
    # other languages: named for search filters, chunked by lines
    ".html": "html", ".htm": "html", ".xhtml": "html",
    ".xml": "xml", ".xsd": "xml", ".xsl": "xml", ".xslt": "xml", ".svg": "xml", ".plist": "xml",
    ".css": "css", ".scss": "scss", ".sass": "scss", ".less": "less",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".ksh": "shell", ".fish": "fish",
    ".sql": "sql",
    ".scala": "scala", ".sc": "scala",
    ".lua": "lua",
    ".pl": "perl", ".pm": "perl",
    ".r": "r",
    ".dart": "dart",
    ".ex": "elixir", ".exs": "elixir",
    ".erl": "erlang", ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml", ".mli": "ocaml",
    ".clj": "clojure", ".cljs": "clojure", ".cljc": "clojure", ".edn": "clojure",
    ".jl": "julia",
    ".zig": "zig",
    ".nim": "nim",
    ".vue": "vue",
    ".svelte": "svelte",
    ".groovy": "groovy", ".gradle": "groovy",
    ".m": "objc", ".mm": "objc",
    ".proto": "protobuf",
    ".graphql": "graphql", ".gql": "graphql",
    ".tf": "hcl", ".tfvars": "hcl", ".hcl": "hcl",
    ".ps1": "powershell", ".psm1": "powershell",
    ".bat": "batch", ".cmd": "batch",
    ".vim": "vim",
    ".elm": "elm",
    ".fs": "fsharp", ".fsx": "fsharp",
    ".cmake": "cmake",
    # plain text: known to be text, chunked by lines
    ".txt": "text", ".text": "text", ".adoc": "text", ".asciidoc": "text",
    ".cfg": "text", ".ini": "text", ".conf": "text", ".properties": "text",
    ".editorconfig": "text", ".gitignore": "text", ".gitattributes": "text",
    ".dockerignore": "text", ".npmignore": "text", ".env": "text",
    ".mk": "text", ".in": "text", ".csv": "text", ".tsv": "text",
}

_FILENAMES: dict[str, str] = {
    "makefile": "text", "gnumakefile": "text",
    "dockerfile": "text", "containerfile": "text",
    "jenkinsfile": "groovy",
    "procfile": "text",
    "license": "text", "licence": "text", "copying": "text", "notice": "text",
    "readme": "text", "changelog": "text", "changes": "text", "authors": "text",
    "contributors": "text", "codeowners": "text", "owners": "text",
    "rakefile": "ruby", "gemfile": "ruby", "vagrantfile": "ruby", "podfile": "ruby",
    "pipfile": "toml", "uv.lock": "toml", "cargo.lock": "toml", "poetry.lock": "toml",
    "pipfile.lock": "json", "composer.lock": "json",
    "go.mod": "text", "go.sum": "text", "yarn.lock": "text",
    "cmakelists.txt": "cmake",
    ".bashrc": "shell", ".bash_profile": "shell", ".zshrc": "shell", ".profile": "shell",
}

# Every `language` payload value: what search filters and map_code accept (PDFs exist only in
# reference libraries, whose text layer is indexed as "pdf").
LANGUAGES = frozenset(_EXTENSIONS.values()) | frozenset(_FILENAMES.values()) | {"pdf"}
# What people type for a language: its extensions without the dot (py, ts, rs, yml, ...), and the
# names other tools use for it.
_ALIASES = {ext.lstrip("."): lang for ext, lang in _EXTENSIONS.items()} | {
    "golang": "go", "c++": "cpp", "cplusplus": "cpp", "c#": "csharp", "cs": "csharp", "dotnet": "csharp",
    "js": "javascript", "node": "javascript", "ecmascript": "javascript", "ts": "typescript",
    "py": "python", "python3": "python", "rs": "rust", "rb": "ruby", "kt": "kotlin", "md": "markdown",
    "restructuredtext": "rst", "yml": "yaml", "sh": "shell", "bash": "shell", "zsh": "shell",
    "objective-c": "objc", "objectivec": "objc", "proto": "protobuf", "terraform": "hcl",
    "plaintext": "text", "txt": "text", "f#": "fsharp",
}


def normalize_language(name: str) -> str:
    """The payload name for what a user typed: any case, an extension or a common alias
    (``Python``, ``py``, ``golang`` → python, python, go). Raises ``ConfigError`` naming the valid
    values, so an unknown language is an error instead of a silently empty answer."""
    key = name.strip().lower() if isinstance(name, str) else ""
    if key in LANGUAGES:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    import difflib

    close = difflib.get_close_matches(key, sorted(LANGUAGES | _ALIASES.keys()), n=1)
    hint = f" (did you mean {_ALIASES.get(close[0], close[0])!r}?)" if close else ""
    raise ConfigError(f"unknown language {name!r}{hint}; known languages: {', '.join(sorted(LANGUAGES))}")


# Extensions whose `text` content is configuration rather than prose.
_CONFIG_TEXT_EXTENSIONS = frozenset(
    {".cfg", ".ini", ".conf", ".properties", ".editorconfig", ".gitignore", ".gitattributes",
     ".dockerignore", ".npmignore", ".env"}
)
# `text` files that are build/run recipes, i.e. code someone edits, not prose.
_CODE_TEXT_NAMES = frozenset(
    {"makefile", "gnumakefile", "dockerfile", "containerfile", "procfile"}
)
_CODE_TEXT_EXTENSIONS = frozenset({".mk"})

_DOC_LANGUAGES = frozenset({"markdown", "rst", "html"})
_CONFIG_LANGUAGES = frozenset({"yaml", "toml", "json"})

_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "testdata", "e2e"})
# snake_case suffixes match in any case; CamelCase ones (Java's FooTest) only as written, so
# that "Latest.java" stays code.
_TEST_SUFFIXES_ANY_CASE = (
    "_test.py", "_tests.py", "_test.go", "_test.rb", "_spec.rb", "_test.rs",
    "_test.cc", "_test.cpp", "_unittest.cc", "_unittest.cpp", "_test.c",
)
_TEST_SUFFIXES_CAMEL = (
    "Test.java", "Tests.java", "IT.java", "Test.kt", "Tests.kt", "Tests.cs", "Test.cs",
    "Test.php", "Tests.swift", "Test.swift",
)
_TEST_INFIXES = (".test.", ".spec.", "_test.", "-test.", ".tests.")


def _name_and_ext(path: str) -> tuple[str, str]:
    name = PurePosixPath(path.replace("\\", "/")).name
    dot = name.rfind(".")
    # ".gitignore" is all extension; "Makefile" has none.
    ext = name[dot:].lower() if dot >= 0 else ""
    return name, ext


def language_for_path(path: str) -> str | None:
    """The language name for `path` ("python", "markdown", "text", ...), or None if unknown.

    Decided by well-known file names first (Makefile, Dockerfile, Gemfile...), then by
    extension. "text" means a known plain-text file with no finer language. None means the
    extension is unknown: `chunk_file` still chunks such a file, by lines, as "text" (the
    scanner has already decided it is text, not binary).
    """
    name, ext = _name_and_ext(path)
    lower = name.lower()
    if lower in _FILENAMES:
        return _FILENAMES[lower]
    if lower.startswith(("dockerfile.", "containerfile.")) or ext in (".dockerfile", ".containerfile"):
        return "text"
    if lower.startswith("makefile."):
        return "text"
    if lower.startswith(("readme.", "license.", "licence.", "copying.", "changelog.", "notice.")) \
            and ext not in _EXTENSIONS:
        return "text"
    return _EXTENSIONS.get(ext)


def is_test_path(path: str) -> bool:
    """True when the path follows a common test layout or test file naming convention."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    if any(part.lower() in _TEST_DIRS for part in parts[:-1]):
        return True
    lower = name.lower()
    if lower.startswith("test_") or lower == "conftest.py":
        return True
    if lower.endswith(_TEST_SUFFIXES_ANY_CASE) or name.endswith(_TEST_SUFFIXES_CAMEL):
        return True
    return any(infix in lower for infix in _TEST_INFIXES)


def chunk_kind_for(path: str, language: str | None) -> ChunkKind:
    """The `chunk_kind` payload for every chunk of `path`: "code", "doc", "config" or "test".

    Documents and configuration keep their kind wherever they live (a YAML fixture under
    tests/ is still "config"); source files are "test" when the path looks like a test
    (tests/ or spec/ directories, test_*.py, *_test.go, *.test.ts, *.spec.js, FooTest.java,
    Rust files under tests/ ...), otherwise "code". Unknown languages (None) count as code.
    """
    name, ext = _name_and_ext(path)
    if language in _DOC_LANGUAGES:
        return "doc"
    if language in _CONFIG_LANGUAGES:
        return "config"
    if language == "text":
        if ext in _CONFIG_TEXT_EXTENSIONS:
            return "config"
        lower = name.lower()
        is_recipe = (
            lower in _CODE_TEXT_NAMES
            or ext in _CODE_TEXT_EXTENSIONS
            or lower.startswith(("dockerfile.", "containerfile.", "makefile."))
            or ext in (".dockerfile", ".containerfile")
        )
        if not is_recipe:
            return "doc"
    return "test" if is_test_path(path) else "code"
