"""Turning a caller's relative path into a real file inside the root, and reading it as text.

Every read of workspace content by path (the scanner's siblings: chunking, ``open_file``)
goes through ``resolve_inside_root`` so that ``../``, absolute paths and symlinks cannot
reach outside the workspace.
"""
from __future__ import annotations

import os
from pathlib import Path

from probe_core.errors import PathOutsideRoot


def is_within(path: str, root: str) -> bool:
    """Whether the real path ``path`` is ``root`` or below it (both already realpath'd)."""
    if path == root:
        return True
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path.startswith(prefix)


def resolve_inside_root(root: Path | str, rel_path: str) -> Path:
    """The real path of ``rel_path`` under ``root``, every symlink resolved.

    Raises ``PathOutsideRoot`` when the result is not inside the (real) root: ``../`` that
    climbs out, an absolute path elsewhere, a symlink (to a file or a directory, at any
    component) that points out. An absolute path that does land inside the root is accepted.
    The path need not exist; opening it is the caller's business. A NUL byte names no file
    and is refused the same way.
    """
    rel = os.fspath(rel_path)
    root_real = os.path.realpath(root)
    if "\0" in rel:
        raise PathOutsideRoot(f"{rel!r} is not a valid path (it contains a NUL byte)")
    resolved = os.path.realpath(os.path.join(root_real, rel))
    if not is_within(resolved, root_real):
        raise PathOutsideRoot(f"{rel} resolves outside the workspace root {root_real}")
    return Path(resolved)


def read_text(root: Path | str, rel_path: str) -> str:
    """The content of ``rel_path`` (inside ``root``) as text.

    Decoded as UTF-8 with ``errors="replace"``: invalid bytes become U+FFFD, so a file in
    another encoding reads as mostly-correct text instead of raising. Nothing else is
    rewritten: ``\\r\\n`` line ends and a leading BOM are kept, and callers split lines with
    ``str.splitlines``, which treats ``\\r\\n`` as one break. (``splitlines`` also breaks on
    ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, which editors do not; code that
    reports line numbers should keep that in mind.)

    Raises ``PathOutsideRoot`` like ``resolve_inside_root``, and ``OSError`` when the file
    cannot be read (missing, a directory, no permission).
    """
    data = resolve_inside_root(root, rel_path).read_bytes()
    return data.decode("utf-8", errors="replace")
