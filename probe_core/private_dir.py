"""Directories that hold Probe's data are private to the user who owns them.

``.probe/`` holds the index of a repository (file paths, symbols, project memory rules, logs, the
owner's socket) and the user data dir holds global memory rules, reference libraries and the
workspace registry. Other users of the machine have no business in either, whatever the umask:
every place that creates one of them goes through ``ensure_private_dir``.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


def ensure_private_dir(path: Path | str) -> Path:
    """Create ``path`` (with any missing parents) and make sure only its owner can enter it.

    A new directory is made mode 0700. An existing one that this user owns loses any group and
    other permissions (an index made by an older Probe, or under a permissive umask); one owned by
    someone else is left as it is, since changing it is not ours to do. Returns the path.
    """
    path = Path(path)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.stat(path)
    if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, stat.S_IMODE(info.st_mode) & 0o700)
    return path
