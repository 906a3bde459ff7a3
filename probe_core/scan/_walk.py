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
  one unreadable path never stops the walk of the rest.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from probe_core.scan._ignore_rules import IgnoreRules


@dataclass(frozen=True, slots=True)
class Entry:
    """One directory entry no ignore rule excludes. ``is_dir`` follows a symlink (False for a
    broken one); ``is_link`` says whether the entry itself is a symlink."""

    rel: str  # posix, relative to the root
    path: str  # absolute, under the real root (not resolved)
    is_link: bool
    is_dir: bool

    @property
    def entered(self) -> bool:
        """Whether the walk goes into this entry: a real directory with a UTF-8 name."""
        return self.is_dir and not self.is_link and is_utf8(self.rel)


@dataclass(slots=True)
class Listing:
    """One directory the walk entered: its entries, or ``error`` when it could not be listed
    (``missing``: gone meanwhile; ``unreadable``: permission denied or another OS error)."""

    rel: str  # "" for the root
    path: str
    entries: list[Entry] = field(default_factory=list)
    error: str | None = None


def walk_tree(rules: IgnoreRules, start: str = "") -> Iterator[Listing]:
    """Every directory under ``rules.root`` (from ``start``, a posix directory relative to the
    root, ``""`` for all of it) that Probe reads, parents before children.

    ``start`` itself is entered only if it is a real, not ignored directory inside the root
    (nothing is yielded otherwise): callers pass paths they got from elsewhere (a watcher event).
    """
    root = str(rules.root)
    if start:
        parts = [part for part in start.split("/") if part not in ("", ".")]
        if ".." in parts or not all(map(is_utf8, parts)) or not _real_dir_below(root, parts):
            return
        try:
            if rules.matches("/".join(parts), True):
                return
        except ValueError:
            return
        start = "/".join(parts)
    seen: set[tuple[int, int]] = set()
    pending: list[tuple[str, str]] = [(start, os.path.join(root, start) if start else root)]
    while pending:
        rel_dir, abs_dir = pending.pop()
        try:
            info = os.lstat(abs_dir)
            identity = (info.st_dev, info.st_ino)
            if identity in seen:
                continue
            seen.add(identity)
            with os.scandir(abs_dir) as scan:
                raw = list(scan)
        except FileNotFoundError:
            yield Listing(rel_dir, abs_dir, error="missing")
            continue
        except OSError:
            yield Listing(rel_dir, abs_dir, error="unreadable")
            continue
        listing = Listing(rel_dir, abs_dir)
        for dir_entry in raw:
            rel = f"{rel_dir}/{dir_entry.name}" if rel_dir else dir_entry.name
            try:
                is_link = dir_entry.is_symlink()
                is_dir = dir_entry.is_dir()  # follows a symlink; False for a broken one
            except OSError:
                is_link, is_dir = False, False  # the caller's stat reports it
            if rules.excludes_entry(rel_dir, dir_entry.name, is_dir):
                continue
            listing.entries.append(Entry(rel, dir_entry.path, is_link, is_dir))
        yield listing
        pending.extend((entry.rel, entry.path) for entry in listing.entries if entry.entered)


def entered_dirs(rules: IgnoreRules, start: str = "") -> list[str]:
    """The directories (posix, relative; ``""`` for the root) ``walk_tree`` enters and can list."""
    return [listing.rel for listing in walk_tree(rules, start) if listing.error is None]


def is_utf8(name: str) -> bool:
    """Whether a name ``os.scandir`` gave us is valid UTF-8 (undecodable bytes come back as lone
    surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _real_dir_below(root: str, parts: list[str]) -> bool:
    """Whether root/parts is a directory reached without passing through any symlink."""
    path = root
    for part in parts:
        path = os.path.join(path, part)
        try:
            if os.path.islink(path) or not os.path.isdir(path):
                return False
        except (OSError, ValueError):
            return False
    return True
