"""Directories that hold Probe's data are private to the user who owns them, and a repository's
``.probe/`` holds no symbolic links.

``.probe/`` holds the index of a repository (file paths, symbols, project memory rules, logs, the
owner's socket) and the user data dir holds global memory rules, reference libraries and the
workspace registry. Other users of the machine have no business in either, whatever the umask:
every place that creates one of them goes through ``ensure_private_dir``.

A repository's ``.probe/`` keeps itself out of git: it holds a ``.gitignore`` of ``*`` (as a
virtualenv or pytest's cache does), so Probe never has to edit the user's own ``.gitignore`` (a
tracked file: editing it blocked ``git checkout``s and showed up in every ``git status``).

``.probe/`` sits inside a repository someone else may have written: a clone that commits ``.probe``
as a link (or ``.probe/engine.lock``, ``.probe/logs``, ... as links) would make Probe create,
truncate, chmod and write files wherever the links point, as soon as an editor starts
``probe mcp``. Probe makes every file in ``.probe/`` itself, never as a link, so any link there is
refused with a one-line error (``refuse_links``), checked once per process and data dir before
anything is opened or created in it.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import ConfigError

PROBE_DIR_NAME = ".probe"
GITIGNORE = ".gitignore"
_SCAN_LIMIT = 20_000  # entries; an index holds a few hundred
_checked: set[str] = set()


def ensure_private_dir(path: Path | str) -> Path:
    """Create ``path`` (with any missing parents) and make sure only its owner can enter it.

    A new directory is made mode 0700. An existing one that this user owns loses any group and
    other permissions (an index made by an older Probe, or under a permissive umask); one owned by
    someone else is left as it is, since changing it is not ours to do. Returns the path.
    """
    path = Path(path)
    refuse_links(path)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.stat(path)
    if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, stat.S_IMODE(info.st_mode) & 0o700)
    if path.name == PROBE_DIR_NAME:
        keep_out_of_git(path)
    return path


def keep_out_of_git(probe_dir: Path) -> None:
    """Write ``probe_dir/.gitignore`` holding ``*`` unless it exists (a user's own is kept). Git
    then ignores the whole folder, that file included, and nothing outside it changes."""
    try:
        fd = os.open(Path(probe_dir) / GITIGNORE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
    except OSError:  # there already; or a read-only .probe/ (another user's), where nothing is written anyway
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("# Probe's index: derived from the tree, never committed\n*\n")


def refuse_links(path: Path | str) -> None:
    """Raise ``ConfigError`` when ``path`` lies in a repository's ``.probe/`` and that folder, a
    folder on the way down to ``path``, or anything inside ``.probe/`` is a symbolic link. Paths
    outside any ``.probe/`` (the user data dir, which may well be a link of the user's own) pass."""
    path = Path(os.path.abspath(path))
    parts = path.parts
    if PROBE_DIR_NAME not in parts:
        return
    top = len(parts) - 1 - parts[::-1].index(PROBE_DIR_NAME)
    probe_dir = Path(*parts[:top + 1])
    for depth in range(top + 1, len(parts) + 1):  # .probe itself, then each folder down to path
        _refuse_if_link(Path(*parts[:depth]))
    key = str(probe_dir)
    if key in _checked or not probe_dir.is_dir():
        return
    seen = 0
    stack = [probe_dir]
    while stack and seen < _SCAN_LIMIT:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if entry.is_symlink():
                _refuse(Path(entry.path))
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    _checked.add(key)


def _refuse_if_link(path: Path) -> None:
    if os.path.islink(path):
        _refuse(path)


def _refuse(link: Path) -> None:
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    raise ConfigError(f"{link} is a symbolic link (to {target}): Probe keeps its index only in real files "
                      f"inside {PROBE_DIR_NAME}/, never through a link a repository could point anywhere; "
                      "remove it")
