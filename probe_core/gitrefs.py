"""What a root's git repository says about branches, read from files (no ``git`` process).

Handles a plain ``.git`` folder and a linked worktree (``.git`` is a file naming the worktree's git
dir, whose ``commondir`` points at the main repository, where refs and config live).
"""
from __future__ import annotations

from pathlib import Path


def git_dirs(root: Path | str) -> tuple[Path, Path] | None:
    """(the checkout's own git dir, the repository's common dir), or None outside git."""
    dot = Path(root) / ".git"
    try:
        if dot.is_dir():
            return dot, dot
        if not dot.is_file():
            return None
        text = dot.read_text("utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    own = Path(text[7:].strip())
    own = own if own.is_absolute() else (Path(root) / own)
    common_file = own / "commondir"
    try:
        common = Path(common_file.read_text("utf-8").strip()) if common_file.is_file() else own
    except OSError:
        common = own
    return own, (common if common.is_absolute() else (own / common).resolve())


def current_branch(root: Path | str) -> str:
    """The checked-out branch (``refs/heads/`` stripped); a detached HEAD → its 12-hex sha; no git → ""."""
    dirs = git_dirs(root)
    if dirs is None:
        return ""
    try:
        text = (dirs[0] / "HEAD").read_text("utf-8").strip()
    except OSError:
        return ""
    if text.startswith("ref: "):
        return text[5:].removeprefix("refs/heads/")
    return text[:12]


def local_branches(root: Path | str) -> set[str] | None:
    """Every local branch name (loose refs and ``packed-refs``); None when it cannot be read."""
    dirs = git_dirs(root)
    if dirs is None:
        return None
    common = dirs[1]
    heads = common / "refs" / "heads"
    names: set[str] = set()
    try:
        if heads.is_dir():
            names.update(p.relative_to(heads).as_posix() for p in heads.rglob("*")
                         if p.is_file() and not p.name.endswith(".lock"))
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text("utf-8").splitlines():
                parts = line.split(" ", 1)
                if len(parts) == 2 and parts[1].startswith("refs/heads/"):
                    names.add(parts[1][len("refs/heads/"):])
    except OSError:
        return None
    return names
