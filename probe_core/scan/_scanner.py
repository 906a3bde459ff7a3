"""Walking a workspace root: which files get indexed and which are left out, and why."""
from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from probe_core.records import ScannedFile, SkippedFile
from probe_core.scan._ignore_rules import IgnoreRules, split_rel_path
from probe_core.scan._safe_paths import is_within
from probe_core.scan._walk import is_utf8, walk_tree

# 1 MB holds any hand-written source file (10k+ lines of code) while leaving out generated
# blobs, vendored bundles and data dumps that would flood the index with near-useless chunks
# and slow embedding. Raise it per workspace for repositories with large hand-written files.
DEFAULT_MAX_FILE_BYTES = 1_000_000

# How much of a file is read to tell text from binary, like git's and grep's heuristics.
BINARY_SNIFF_BYTES = 8192


class SkipReason(StrEnum):
    """Why a file the scanner saw is not indexed (``SkippedFile.reason``).

    Ignored paths are *not* reported: an ignore rule is a choice, and listing every file under
    ``node_modules/`` would bury the interesting reasons.
    """

    BINARY = "binary"  # a NUL byte in the first BINARY_SNIFF_BYTES (UTF-16 text lands here)
    TOO_LARGE = "too_large"  # over max_file_bytes
    SYMLINK_OUTSIDE_ROOT = "symlink_outside_root"  # resolves outside the root
    SYMLINK_DIR = "symlink_dir"  # a symlink to a directory inside the root: not followed
    NOT_REGULAR_FILE = "not_regular_file"  # FIFO, socket, device
    UNDECODABLE_NAME = "undecodable_name"  # a name that is not valid UTF-8
    MISSING = "missing"  # gone between listing and reading, or a broken symlink
    UNREADABLE = "unreadable"  # permission denied, symlink loop, other OS errors
    GIT_DIR = "git_dir"  # a git directory inside the tree (a nested bare repository): git's internals


@dataclass(slots=True)
class ScanResult:
    """What ``scan_files`` found: files to index, sorted by path, and files left out."""

    files: list[ScannedFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)

    def skip_summary(self, examples: int = 20) -> dict:
        """What ``probe status`` shows of the files left out: a count per reason and the first
        ``examples`` of them (rarest reasons first, so one odd file is not buried under binaries)."""
        by_reason: dict[str, int] = {}
        for skipped in self.skipped:
            by_reason[skipped.reason] = by_reason.get(skipped.reason, 0) + 1
        ordered = sorted(self.skipped, key=lambda s: (by_reason[s.reason], s.reason, s.path))
        return {"by_reason": dict(sorted(by_reason.items())),
                "examples": [{"path": s.path, "reason": s.reason} for s in ordered[:examples]]}


def scan_files(
    root: Path | str,
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    extra_ignores: Sequence[str] = (),
    rules: IgnoreRules | None = None,
) -> ScanResult:
    """List the files under ``root`` that Probe indexes.

    Ignored directories (see ``IgnoreRules``) are pruned without being listed. Each remaining
    file is checked for size, then sniffed for binary content. Empty files are included: they
    cost nothing and their presence (``__init__.py``) means something.

    Symlinks: one whose target is outside the root is skipped; one to a file inside is
    followed and reported under the link's own path; one to a directory is never followed,
    which rules out loops and double-indexing. A file that vanishes or cannot be read is
    skipped with a reason; nothing under the root makes the scan raise.

    Names that are not valid UTF-8 are skipped (``undecodable_name``) rather than carried as
    surrogate escapes that would break JSON, payloads and hashing downstream; the reported
    path shows U+FFFD in their place. Directories with such names are skipped whole.

    ``rules`` lets a caller share its ``IgnoreRules`` for this root (the watcher); otherwise
    one is built from ``extra_ignores``. Raises ``NotADirectoryError`` if ``root`` is not a
    directory.
    """
    root_real = os.path.realpath(root)
    if not os.path.isdir(root_real):
        raise NotADirectoryError(f"not a directory: {root}")
    if rules is None:
        rules = IgnoreRules(root_real, extra_ignores)
    elif str(rules.root) != root_real:
        raise ValueError(f"ignore rules for {rules.root} cannot scan {root_real}")
    result = ScanResult()
    for listing in walk_tree(rules):
        if listing.error is not None:
            result.skipped.append(SkippedFile(_displayable(listing.rel), SkipReason(listing.error).value))
            continue
        for entry in listing.entries:
            if entry.entered:
                continue  # walk_tree lists it next
            outcome = _classify(entry.rel, entry.path, entry.is_link, entry.is_dir, root_real, max_file_bytes)
            if isinstance(outcome, ScannedFile):
                result.files.append(outcome)
            elif outcome is not None:
                result.skipped.append(outcome)
    result.files.sort(key=lambda scanned: scanned.path)
    result.skipped.sort(key=lambda skipped: skipped.path)
    return result


def scan_path(
    rules: IgnoreRules, rel_path: str, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> ScannedFile | SkippedFile | None:
    """Decide one path the way ``scan_files`` would, for a watcher reacting to a change.

    Returns a ``ScannedFile`` to (re)index, a ``SkippedFile`` for a path that is not (gone:
    ``missing``), or ``None`` when the path is ignored or is a directory. ``rel_path`` is
    posix and relative to ``rules.root``; ``ValueError`` if it is absolute or climbs out.
    """
    parts = split_rel_path(rel_path)
    root_real = str(rules.root)
    abs_path = os.path.join(root_real, *parts)
    is_dir = os.path.isdir(abs_path)
    if not parts or rules.matches(rel_path, is_dir):
        return None
    rel = "/".join(parts)
    # The scanner never descends through a directory symlink, so a path reached through one
    # is not indexed either.
    lexical_parent = os.path.dirname(abs_path)
    real_parent = os.path.realpath(lexical_parent)
    if real_parent != lexical_parent:
        inside = is_within(real_parent, root_real)
        reason = SkipReason.SYMLINK_DIR if inside else SkipReason.SYMLINK_OUTSIDE_ROOT
        return SkippedFile(_displayable(rel), reason.value)
    return _classify(rel, abs_path, os.path.islink(abs_path), is_dir, root_real, max_file_bytes)


def _classify(
    rel: str, abs_path: str, is_link: bool, is_dir: bool, root_real: str, max_file_bytes: int
) -> ScannedFile | SkippedFile | None:
    """The verdict on one entry that no ignore rule excludes; None: a directory to descend."""
    if not is_utf8(rel):
        return SkippedFile(_displayable(rel), SkipReason.UNDECODABLE_NAME.value)
    if is_link:
        if not is_within(os.path.realpath(abs_path), root_real):
            return SkippedFile(rel, SkipReason.SYMLINK_OUTSIDE_ROOT.value)
        if is_dir:
            return SkippedFile(rel, SkipReason.SYMLINK_DIR.value)
    elif is_dir:
        return None
    try:
        info = os.stat(abs_path)  # follows a symlink to its (inside-the-root) target
        if not stat.S_ISREG(info.st_mode):
            # checked before opening: reading a FIFO would block the scan forever
            return SkippedFile(rel, SkipReason.NOT_REGULAR_FILE.value)
        if info.st_size > max_file_bytes:
            return SkippedFile(rel, SkipReason.TOO_LARGE.value)
        if info.st_size and _looks_binary(abs_path):
            return SkippedFile(rel, SkipReason.BINARY.value)
    except FileNotFoundError:
        return SkippedFile(rel, SkipReason.MISSING.value)
    except OSError:
        return SkippedFile(rel, SkipReason.UNREADABLE.value)
    return ScannedFile.from_stat(rel, info)


def _looks_binary(abs_path: str) -> bool:
    with open(abs_path, "rb") as handle:
        return b"\0" in handle.read(BINARY_SNIFF_BYTES)


def _displayable(rel: str) -> str:
    """``rel`` with undecodable bytes shown as U+FFFD, safe to print or serialise."""
    return os.fsencode(rel).decode("utf-8", errors="replace") if rel else rel
