"""Why a scan found nothing to index, in words a user can act on.

An empty index used to say only "run `probe index`", which is no help when ``probe index`` just ran
and a ``.probeignore`` of ``*`` (or a ``.gitignore`` doing the same) leaves every file out. This
looks at the root's own entries: when each one is excluded, it names the ignore file that does it.
Only called when the index is empty, so its cost (one directory listing) never touches a search.
"""
from __future__ import annotations

import os
from pathlib import Path

from pathspec import GitIgnoreSpec

from ..scan import IgnoreRules

IGNORE_FILES = (".probeignore", ".gitignore", os.path.join(".git", "info", "exclude"))
NEVER_INDEXED = {".git", ".probe", ".hg", ".svn"}


def why_nothing_indexed(root: Path | str) -> str | None:
    """A sentence saying every file under ``root`` is ignored, and by which file; None when that is
    not the reason (the folder is empty, or some entry is not ignored)."""
    root = Path(root)
    try:
        entries = [(e.name, e.is_dir()) for e in os.scandir(root)
                   if e.name not in NEVER_INDEXED and e.name not in (".probeignore", ".gitignore")]
    except OSError:
        return None
    if not entries:
        return f"{root} holds no files to index"
    rules = IgnoreRules(root)
    if not all(rules.excludes_entry("", name, is_dir) for name, is_dir in entries):
        return None
    for rel in IGNORE_FILES:
        path = root / rel
        try:
            spec = GitIgnoreSpec.from_lines(path.read_text("utf-8", errors="replace").splitlines())
        except Exception:  # noqa: BLE001 - an unreadable or unparsable file is not the one to name
            continue
        if all(spec.match_file(name + ("/" if is_dir else "")) for name, is_dir in entries):
            return (f"every file under {root} is ignored by {path}; edit it (or add `!pattern` lines to "
                    ".probeignore) to let Probe index them")
    return (f"every file under {root} is ignored (by .probeignore/.gitignore rules or Probe's built-in "
            "defaults for build output, dependencies and binaries)")
