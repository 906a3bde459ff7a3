"""Turning a caller's relative path into a real file inside the root, and reading it as text.

Every read of workspace content by path (the scanner's siblings: chunking, ``open_file``)
goes through ``resolve_inside_root`` so that ``../``, absolute paths and symlinks cannot
reach outside the workspace, nor into version-control internals or ``.probe/``.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from probe_core.errors import PathOutsideRoot
from probe_core.scan._default_ignores import ALWAYS_IGNORED_NAMES
from probe_core.scan._git_dirs import inside_git_dir


def shown_path(path: str, limit: int = 200) -> str:
    """``path`` cut to ``limit`` characters for a message: an error must not echo a 1 MB argument."""
    return path if len(path) <= limit else path[:limit] + "…"


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
    component) that points out, or a path into ``.git/`` (any VCS directory), ``.probe/`` or a
    git directory nested in the tree (a bare repository).
    An absolute path that does land inside the root is accepted.
    The path need not exist; opening it is the caller's business. A NUL byte names no file
    and is refused the same way.
    """
    rel = os.fspath(rel_path)
    root_real = os.path.realpath(root)
    if "\0" in rel:
        raise PathOutsideRoot(f"{shown_path(rel)!r} is not a valid path (it contains a NUL byte)")
    resolved = os.path.realpath(os.path.join(root_real, rel))
    if not is_within(resolved, root_real):
        raise PathOutsideRoot(f"{shown_path(rel)} resolves outside the workspace root {root_real}")
    inside = resolved[len(root_real):].split(os.sep)
    if private := next((part for part in inside if part in ALWAYS_IGNORED_NAMES), None):
        raise PathOutsideRoot(f"{shown_path(rel)} is inside {private}/, which Probe never reads "
                              "(version-control internals and Probe's own index)")
    if git_dir := inside_git_dir(root_real, resolved):
        raise PathOutsideRoot(f"{shown_path(rel)} is inside {os.path.relpath(git_dir, root_real)}/, a git directory "
                              "(a bare repository), which Probe never reads")
    return Path(resolved)


def read_regular_file(path: Path | str, max_bytes: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file and its stat, checked on the open descriptor.

    The scanner's checks (a regular file, under the size cap) are made on a path; by the time it
    is read, the path may name a FIFO (a read would block forever), a device or a file that grew
    to gigabytes. Opening without blocking and checking the descriptor closes that gap. Raises
    ``OSError``: ``EINVAL`` for anything but a regular file, ``EFBIG`` over ``max_bytes``.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        if max_bytes is not None and info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes", os.fspath(path))
        data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:  # it grew after the fstat
        raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes", os.fspath(path))
    return data, info


def read_text(root: Path | str, rel_path: str, *, max_bytes: int | None = None) -> str:
    """The content of ``rel_path`` (inside ``root``) as text.

    Decoded as UTF-8 with ``errors="replace"``: invalid bytes become U+FFFD, so a file in
    another encoding reads as mostly-correct text instead of raising. Nothing else is
    rewritten: ``\\r\\n`` line ends and a leading BOM are kept, and callers split lines with
    ``str.splitlines``, which treats ``\\r\\n`` as one break. (``splitlines`` also breaks on
    ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, which editors do not; code that
    reports line numbers should keep that in mind.)

    Raises ``PathOutsideRoot`` like ``resolve_inside_root``, and ``OSError`` when the file
    cannot be read (missing, a directory or a FIFO, no permission, over ``max_bytes``).
    """
    data, _ = read_regular_file(resolve_inside_root(root, rel_path), max_bytes)
    return data.decode("utf-8", errors="replace")
