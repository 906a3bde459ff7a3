"""Git's own directories: never a workspace root, never indexed, never read by path.

A git directory holds ``config`` (remote URLs, sometimes with a token in them), hooks, packed
objects and logs: nothing an agent should find by searching, and plenty it must not be handed.
Three shapes of it can meet Probe:

* ``.git`` (a directory, or the file of a worktree or submodule) anywhere in the tree: left out by
  name, like every VCS directory (``ALWAYS_IGNORED_NAMES``);
* a bare repository (``--root repo.git``) or a root inside a git directory (``--root repo/.git``,
  ``--root repo/.git/refs``): refused when the workspace is opened, with a one-line reason;
* a bare repository nested inside the tree (``vendor/lib.git/``, fixtures of git tools): the walk
  does not enter it and reports it skipped (``git_dir``), and no path under it is read.

A git directory is recognised the way git recognises one (``is_git_directory`` in setup.c): a
``HEAD`` that names a ref or an object id, an ``objects/`` and a ``refs/`` directory.
"""
from __future__ import annotations

import os
import re
from collections.abc import Container
from pathlib import Path

from probe_core.errors import ConfigError
from probe_core.scan._default_ignores import ALWAYS_IGNORED_NAMES

GIT_DIR_MARKERS = ("HEAD", "objects", "refs")
_HEAD = re.compile(rb"(ref: refs/|[0-9a-f]{40}\b|[0-9a-f]{64}\b)")


def is_git_dir(path: str, names: Container[str] | None = None) -> bool:
    """Whether ``path`` is a git directory. ``names``: its entries when the caller listed it
    already (the walk), so that the ordinary directory costs no system call."""
    if names is not None and not all(name in names for name in GIT_DIR_MARKERS):
        return False
    if not (os.path.isdir(os.path.join(path, "objects")) and os.path.isdir(os.path.join(path, "refs"))):
        return False
    head = os.path.join(path, "HEAD")
    if os.path.islink(head):
        return os.readlink(head).startswith("refs/")
    try:
        with open(head, "rb") as handle:
            return _HEAD.match(handle.read(100)) is not None
    except OSError:
        return False


def refuse_git_internals(root: Path | str) -> None:
    """Raise ``ConfigError`` (one line) when ``root`` is a bare repository, or is or lies inside a
    ``.git`` directory (any VCS directory) or a ``.probe/`` folder."""
    real = Path(os.path.realpath(root))
    for folder in (real, *real.parents):
        if folder.name in ALWAYS_IGNORED_NAMES:
            what = f"a {folder.name} directory" if folder == real else f"inside the {folder.name} directory {folder}"
            raise ConfigError(f"{root} is {what}: Probe indexes a working tree, never version-control internals "
                              "or its own index; use the checkout's top folder as --root")
        if is_git_dir(str(folder)):
            what = "a bare git repository" if folder == real else f"inside the git directory {folder}"
            raise ConfigError(f"{root} is {what}: it holds git's internals (config, objects), not a working tree; "
                              "index a clone's checkout instead")


def inside_git_dir(root_real: str, resolved: str) -> str | None:
    """The first git directory strictly between ``root_real`` and the file ``resolved`` (both real
    paths, ``resolved`` inside the root), or None."""
    parts = resolved[len(root_real):].strip(os.sep).split(os.sep)[:-1]
    folder = root_real
    for part in parts:
        folder = os.path.join(folder, part)
        if os.path.isfile(os.path.join(folder, "HEAD")) and is_git_dir(folder):
            return folder
    return None
