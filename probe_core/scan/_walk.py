"""The one walk of a workspace tree that everything listing directories shares (root confinement).

The scanner (which files to index) and the file watcher (which directories to watch) must agree
on where Probe goes, and neither may leave the root. The rule lives here, once:

* a directory is entered only when it is a real directory: a symlink to a directory (inside the
  root or out of it, to ``/``, or looping back) is an entry of its parent, never followed;
* an entry an ignore rule excludes is not listed, and an excluded directory is not entered;
* a directory whose name is not valid UTF-8 is not entered (the scanner reports it);
* a directory already entered under another name (a bind mount of an ancestor) is not entered
  again, so no tree shape makes the walk endless;
* a directory that cannot be listed (permission denied, gone meanwhile) is reported and skipped:
  one unreadable path never stops the walk of the rest;
* a git directory below the root (a bare repository nested in the tree: ``_git_dirs``) is
  reported (``git_dir``) and not entered: git's internals are never indexed or watched;
* a directory is listed only if it is the very directory its parent listed: each is opened with
  ``O_NOFOLLOW | O_DIRECTORY`` and its ``(st_dev, st_ino)`` compared with the identity taken
  through the parent's descriptor when the parent was listed. A directory (or any ancestor)
  swapped for a symlink while the walk runs therefore leads nowhere: it is reported ``missing``.

Why not open each directory relative to its parent's descriptor (``dir_fd``)? A depth-first walk
would hold a descriptor per level, and a tree 5,000 levels deep would run out of them; comparing
identities gives the same guarantee with one descriptor open at a time.
"""
from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from probe_core.scan._git_dirs import is_git_dir
from probe_core.scan._ignore_rules import IgnoreRules, split_rel_path

# A directory opened for listing: never through a symlink in its last component, never a file.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

Identity = tuple[int, int]  # (st_dev, st_ino)


@dataclass(frozen=True, slots=True)
class Entry:
    """One directory entry no ignore rule excludes. ``is_dir`` follows a symlink (False for a
    broken one); ``is_link`` says whether the entry itself is a symlink; ``identity`` is that of a
    directory the walk enters, taken through the parent's descriptor (None for other entries)."""

    rel: str  # posix, relative to the root
    path: str  # absolute, under the real root (not resolved)
    is_link: bool
    is_dir: bool
    identity: Identity | None = None

    @property
    def entered(self) -> bool:
        """Whether the walk goes into this entry: a real directory with a UTF-8 name."""
        return self.is_dir and not self.is_link and is_utf8(self.rel)


@dataclass(slots=True)
class Listing:
    """One directory the walk entered: its entries and identity, or ``error`` when it could not be
    listed (``missing``: gone, or swapped for a link or another directory meanwhile;
    ``unreadable``: permission denied or another OS error) or is not walked (``git_dir``)."""

    rel: str  # "" for the root
    path: str
    entries: list[Entry] = field(default_factory=list)
    error: str | None = None
    identity: Identity | None = None


def walk_tree(rules: IgnoreRules, start: str = "") -> Iterator[Listing]:
    """Every directory under ``rules.root`` (from ``start``, a posix directory relative to the
    root, ``""`` for all of it) that Probe reads, parents before children.

    ``start`` itself is entered only if it is a real, not ignored directory inside the root
    (nothing is yielded otherwise): callers pass paths they got from elsewhere (a watcher event).
    """
    root = str(rules.root)
    expected: Identity | None = None  # the root: whatever directory it is now
    if start:
        try:
            parts = split_rel_path(start)
            if not all(map(is_utf8, parts)) or rules.matches("/".join(parts), True):
                return
        except ValueError:  # absolute, or climbing out with ".."
            return
        expected = _identity_below(root, parts)
        if expected is None:
            return
        start = "/".join(parts)
    seen: set[Identity] = set()
    pending: list[tuple[str, str, Identity | None]] = [(start, os.path.join(root, start) if start else root,
                                                        expected)]
    while pending:
        rel_dir, abs_dir, expected = pending.pop()
        if expected in seen:
            continue  # a bind mount of a directory already walked
        listing = _list_dir(rules, rel_dir, abs_dir, expected)
        if listing.identity is not None:
            if listing.identity in seen:
                continue
            seen.add(listing.identity)
        yield listing
        pending.extend((entry.rel, entry.path, entry.identity) for entry in listing.entries if entry.entered)


def _list_dir(rules: IgnoreRules, rel_dir: str, abs_dir: str, expected: Identity | None) -> Listing:
    """List one directory, if it is still the one its parent listed (``expected``)."""
    try:
        fd = os.open(abs_dir, _DIR_FLAGS)
    except FileNotFoundError:
        return Listing(rel_dir, abs_dir, error="missing")
    except OSError as exc:  # ELOOP: a symlink now; ENOTDIR: a file now
        return Listing(rel_dir, abs_dir, error="missing" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else "unreadable")
    try:
        info = os.fstat(fd)
        identity = (info.st_dev, info.st_ino)
        if expected is not None and identity != expected:  # an ancestor was swapped for a link meanwhile
            return Listing(rel_dir, abs_dir, error="missing")
        listing = Listing(rel_dir, abs_dir, identity=identity)
        prefix = abs_dir if abs_dir.endswith(os.sep) else abs_dir + os.sep
        dir_prefix = f"{rel_dir}/" if rel_dir else ""
        names: set[str] = set()
        with os.scandir(fd) as scan:  # entries' stat calls go through fd, not through a path
            for dir_entry in scan:
                name = dir_entry.name
                names.add(name)
                try:
                    is_link = dir_entry.is_symlink()
                    is_dir = dir_entry.is_dir()  # follows a symlink; False for a broken one
                except OSError:
                    is_link, is_dir = False, False  # the caller's stat reports it
                if rules.excludes_entry(rel_dir, name, is_dir):
                    continue
                entry_identity = None
                if is_dir and not is_link:
                    try:
                        entry_info = dir_entry.stat(follow_symlinks=False)
                        entry_identity = (entry_info.st_dev, entry_info.st_ino)
                    except OSError:
                        is_dir = False  # gone since it was listed: the caller's stat reports it
                listing.entries.append(Entry(dir_prefix + name, prefix + name, is_link, is_dir, entry_identity))
        if rel_dir and is_git_dir(abs_dir, names):  # a bare repository inside the tree
            return Listing(rel_dir, abs_dir, error="git_dir", identity=identity)
        return listing
    except OSError:
        return Listing(rel_dir, abs_dir, error="unreadable")
    finally:
        os.close(fd)


def entered_dirs(rules: IgnoreRules) -> list[str]:
    """The directories (posix, relative; ``""`` for the root) ``walk_tree`` enters and can list."""
    return [listing.rel for listing in walk_tree(rules) if listing.error is None]


def is_utf8(name: str) -> bool:
    """Whether a name ``os.scandir`` gave us is valid UTF-8 (undecodable bytes come back as lone
    surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _identity_below(root: str, parts: list[str]) -> Identity | None:
    """The identity of root/parts, reached one component at a time without following any symlink
    (each opened relative to its parent's descriptor), or None if it is not such a directory."""
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError:
        return None
    try:
        for part in parts:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        info = os.fstat(fd)
        return info.st_dev, info.st_ino
    except OSError:
        return None
    finally:
        os.close(fd)
