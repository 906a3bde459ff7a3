"""File enumeration: which files under a workspace root Probe indexes, and safe reads of them.

* ``scan_files`` walks the root once (``os.scandir``, ignored directories pruned) and returns
  the files to index plus the ones left out with a reason.
* ``IgnoreRules`` is the ignore decision (``.gitignore`` files, ``.git/info/exclude``,
  ``.probeignore``, built-in defaults); the scanner and the file watcher share it, and
  ``scan_path`` gives the watcher the scanner's verdict on a single path.
* ``walk_tree`` is the root-confined walk both of them list directories with (no directory
  symlink followed, ignored directories not entered, unreadable ones skipped).
* ``resolve_inside_root`` and ``read_text`` are how anything reads a workspace file by path.
* ``refuse_git_internals`` refuses a root that is git's internals (a bare repository, ``.git/``).

The built-in ignore list lives in ``_default_ignores``.
"""
from __future__ import annotations

from probe_core.scan._default_ignores import ALWAYS_IGNORED_NAMES
from probe_core.scan._git_dirs import is_git_dir, refuse_git_internals
from probe_core.scan._ignore_rules import IgnoreRules, is_ignored
from probe_core.scan._safe_paths import read_regular_file, read_text, resolve_inside_root, shown_path
from probe_core.scan._walk import Entry, Listing, entered_dirs, walk_tree
from probe_core.scan._scanner import (
    BINARY_SNIFF_BYTES,
    DEFAULT_MAX_FILE_BYTES,
    ScanResult,
    SkipReason,
    scan_files,
    scan_path,
)

__all__ = [
    "ALWAYS_IGNORED_NAMES",
    "BINARY_SNIFF_BYTES",
    "DEFAULT_MAX_FILE_BYTES",
    "Entry",
    "IgnoreRules",
    "Listing",
    "ScanResult",
    "SkipReason",
    "entered_dirs",
    "is_git_dir",
    "is_ignored",
    "read_regular_file",
    "read_text",
    "refuse_git_internals",
    "resolve_inside_root",
    "scan_files",
    "scan_path",
    "shown_path",
    "walk_tree",
]
