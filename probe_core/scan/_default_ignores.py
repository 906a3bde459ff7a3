"""The built-in ignore list: everything Probe leaves out before any ``.gitignore`` is read.

This is the one place the list lives. Two tiers:

* ``ALWAYS_IGNORED_NAMES`` can never be re-included: VCS internals and Probe's own index.
  Indexing them is never what anyone wants, and a broad ``!*/`` whitelist in a
  ``.gitignore`` must not drag ``.git/`` in.
* Everything else is a *default*: dependencies, caches, build outputs, lock files, minified
  bundles and binaries by extension. A negation in a ``.probeignore`` (or in
  ``extra_ignores``) re-includes a default, e.g. ``!build/`` for a project whose ``build/``
  directory is source code. Negations in ``.gitignore`` do not, since git knows nothing of
  this list and a ``!*/`` there would otherwise re-include ``node_modules/``.

Names are matched on the last path component, at any depth. Extensions are compared
case-insensitively (``logo.PNG`` is an image too).
"""
from __future__ import annotations

# --- directories and files that are never indexed, whatever the rules say ----------------
ALWAYS_IGNORED_NAMES: frozenset[str] = frozenset(
    {".git", ".hg", ".svn", ".bzr", ".jj", "_darcs", ".probe"}
)

# --- directories (matched only when the entry is a directory) -----------------------------
DEFAULT_IGNORED_DIR_NAMES: frozenset[str] = frozenset(
    {
        # dependencies
        "node_modules", "bower_components", "jspm_packages", ".yarn", ".pnpm-store",
        # Python environments and tool caches (any directory holding a pyvenv.cfg is a
        # virtualenv too, whatever its name: see VENV_MARKER)
        ".venv", "__pypackages__", "__pycache__", ".mypy_cache", ".pytest_cache",
        ".ruff_cache", ".hypothesis", ".tox", ".nox", ".pytype", ".pyre", ".eggs",
        ".ipynb_checkpoints", ".direnv",
        # other toolchains' caches and editor state
        ".gradle", ".idea", ".cache", ".terraform", ".dart_tool", ".stack-work",
        ".parcel-cache", ".turbo", ".angular", ".sass-cache",
        # build outputs. `build`, `target`, `out` and `dist` are sometimes source code;
        # re-include with `!build/` in .probeignore.
        "dist", "build", "target", "out", ".next", ".nuxt", ".svelte-kit", ".output",
        ".docusaurus", "coverage", "htmlcov", ".nyc_output",
    }
)
DEFAULT_IGNORED_DIR_SUFFIXES: tuple[str, ...] = (".egg-info",)

# A directory containing this file is a Python virtualenv (venv/, env/, .env-3.11/, ...).
VENV_MARKER = "pyvenv.cfg"

# --- files matched by exact name: lock files and OS droppings -----------------------------
DEFAULT_IGNORED_FILE_NAMES: frozenset[str] = frozenset(
    {
        "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
        "bun.lockb", "bun.lock", "Cargo.lock", "poetry.lock", "uv.lock", "pdm.lock",
        "Pipfile.lock", "Gemfile.lock", "composer.lock", "go.sum", "flake.lock",
        "pubspec.lock", "mix.lock", "Podfile.lock", "Package.resolved",
        "packages.lock.json", "gradle.lockfile",
        ".DS_Store", "Thumbs.db", "desktop.ini", ".coverage",
    }
)

# --- files matched by the end of their (lower-cased) name: generated web bundles ----------
DEFAULT_IGNORED_FILE_SUFFIXES: tuple[str, ...] = (
    ".min.js", ".min.mjs", ".min.css", ".bundle.js", ".chunk.js", ".map",
)

# --- files matched by their last extension (lower-cased; keep entries lower-case) ---------
# Content sniffing (a NUL byte in the first 8 KB) catches the rest; listing these saves
# opening them, and keeps binary formats that happen to lack an early NUL out.
BINARY_EXTENSIONS: frozenset[str] = frozenset(
    {
        # images
        "png", "jpg", "jpeg", "gif", "bmp", "ico", "icns", "tif", "tiff", "webp", "avif",
        "heic", "psd", "xcf", "svgz",
        # audio / video
        "mp3", "mp4", "m4a", "m4v", "wav", "flac", "ogg", "oga", "opus", "aac", "avi",
        "mov", "mkv", "webm", "wmv", "flv",
        # archives and packages
        "zip", "tar", "gz", "tgz", "bz2", "xz", "zst", "lz4", "lzma", "7z", "rar", "jar",
        "war", "ear", "whl", "egg", "apk", "ipa", "deb", "rpm", "dmg", "iso", "msi", "cab",
        # fonts
        "ttf", "otf", "woff", "woff2", "eot",
        # compiled code and object files
        "so", "dll", "dylib", "exe", "o", "obj", "a", "lib", "pyc", "pyo", "pyd", "class",
        "wasm", "elc", "beam",
        # documents
        "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp",
        # models and data blobs
        "onnx", "bin", "pt", "pth", "ckpt", "safetensors", "gguf", "h5", "hdf5", "npy",
        "npz", "pkl", "pickle", "parquet", "arrow", "feather", "tflite", "pb",
        # databases
        "sqlite", "sqlite3", "db", "mdb",
        # keys/keystores and editor swap files
        "jks", "keystore", "p12", "pfx", "swp", "swo",
    }
)


def is_default_ignored(name: str, is_dir: bool) -> bool:
    """Whether the built-in list (not the always-ignored tier) leaves out this entry.

    Only the entry's own name is looked at; the ``pyvenv.cfg`` check needs the filesystem
    and lives in the ignore rules.
    """
    if is_dir:
        return name in DEFAULT_IGNORED_DIR_NAMES or name.endswith(DEFAULT_IGNORED_DIR_SUFFIXES)
    if name in DEFAULT_IGNORED_FILE_NAMES:
        return True
    lower = name.lower()
    if lower.endswith(DEFAULT_IGNORED_FILE_SUFFIXES):
        return True
    _, dot, ext = lower.rpartition(".")
    return bool(dot) and ext in BINARY_EXTENSIONS
