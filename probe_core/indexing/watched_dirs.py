"""The directories the file watcher watches, and the inotify watches over them (DESIGN §4).

Each directory the scanner's walk enters is watched on its own, never recursively (notify's
recursive mode follows directory symlinks), through at most two watchfiles watches:

* the *main* watch over the directories known when it was opened;
* a *supplementary* watch over the directories that appeared since. A new directory re-opens only
  this one, its replacement registered before the old one is closed so that no event falls
  between them: a birth costs a few registrations, not one per directory of the tree.

At a quiet moment, once the supplementary watch and the entries known to be stale (directories
deleted, moved or ignored since the main watch opened) outgrow ``sqrt(2N)`` (``N`` the directories
watched; at least 64), one new main watch replaces both: the cost of a birth stays about
``sqrt(2N)`` registrations amortised, against ``N`` for swapping in a full new watch each time.

inotify watches are a per-user resource (``fs.inotify.max_user_watches``, 8,192 on older kernels)
that editors and other watchers share. A replacement is opened before the watch it replaces is
closed only while both together stay within half the limit; otherwise the old one is closed first
and the gap is covered: by listing the supplementary directories again, or by a full
stat scan after a main watch (``on_gap``). An open that hits the limit raises
``WatchLimitReached``, after which the watcher polls instead.

Directories are tracked by identity ``(st_dev, st_ino)`` and by deletion events: a watched
directory deleted and made again (a generator's output) is watched again whatever order its
events arrive in (watchfiles reports a *set*). When following new directories gives up (a tree
still growing after five rounds) the set is marked stale and walked again at the next quiet
moment; the watcher also walks it again at every periodic rescan.
"""
from __future__ import annotations

import errno
import logging
import math
import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping

import watchfiles
from watchfiles import Change

from ..errors import ProbeError
from ..scan import ALWAYS_IGNORED_NAMES, IgnoreRules, Listing, walk_tree

log = logging.getLogger("probe.watch")

FileChange = tuple[Change, str]
Identity = tuple[int, int]  # (st_dev, st_ino)

_MAIN_WAIT_MS = 100  # how long a wait on the main watch blocks before the loop looks around (and drains the other)
_EXTRA_WAIT_MS = 10  # the supplementary watch is only drained (watchfiles sleeps a 50 ms step first)
_OPEN_ATTEMPTS = 5
_FOLLOW_ROUNDS = 5
_MIN_CONSOLIDATE = 64
_LIMIT_FILES = ("/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches")
_DEFAULT_LIMIT = 8192


class WatchLimitReached(ProbeError, RuntimeError):
    """The user's inotify watches (or inotify instances) ran out."""


def watch_limit() -> int:
    """The inotify watches this user may hold: ``fs.inotify.max_user_watches``, or the user
    namespace's own ``user.max_inotify_watches`` where that is lower."""
    values = []
    for path in _LIMIT_FILES:
        try:
            with open(path) as handle:
                values.append(int(handle.read()))
        except (OSError, ValueError):
            continue
    return min(values) if values else _DEFAULT_LIMIT


def overlap_allowed(held: int, new: int) -> bool:
    """Whether a watch of ``new`` directories may be opened while ``held`` are still watched: the
    watches held during the overlap stay within half the user's limit, or the new watch is small
    (a supplementary one: at most 64 directories or 1/32 of the limit)."""
    limit = watch_limit()
    return held + new <= limit // 2 or new <= max(_MIN_CONSOLIDATE, limit // 32)


class _Watch:
    """One watchfiles watch: its generator of change sets and how many paths it registered."""

    def __init__(self, changes: Iterator[set[FileChange]], size: int):
        self.changes = changes
        self.size = size

    def wait(self) -> set[FileChange] | None:
        """The next change set (empty after the watch's timeout; None once stopped)."""
        return next(self.changes, None)

    def close(self) -> set[FileChange]:
        """What the watch caught that was not taken yet, then closes it."""
        try:
            return self.wait() or set()
        finally:
            self.changes.close()


class WatchedDirs:
    """The watched directories of one root and the watches over them. Used from one thread; only
    ``dirs`` may be read from others (it is replaced, never changed in place)."""

    def __init__(self, root: str, rules: IgnoreRules, accept: Callable[[Change, str], bool],
                 stop: threading.Event, steering_dirs: Callable[[], list[str]], on_gap: Callable[[], None]):
        """``accept`` filters events (the scanner's ignore rules); ``steering_dirs`` lists the
        directories outside the walk watched for the files that steer scans (``.git/`` for HEAD);
        ``on_gap`` asks for a full stat scan when events may have been missed."""
        self.root = root
        self._prefix = root.rstrip(os.sep) + os.sep
        self.rules = rules
        self._accept = accept
        self._stop = stop
        self._steering_dirs = steering_dirs
        self._on_gap = on_gap
        self.dirs: Mapping[str, Identity] = {}
        self._main: _Watch | None = None
        self._extra: _Watch | None = None
        self._extra_dirs: frozenset[str] = frozenset()
        self._stale_entries = 0  # watched by the main watch, but deleted, moved or ignored since
        self._stale = False  # some directory may be unwatched: walk again at the next quiet moment

    # -- the loop's three calls ----------------------------------------------------------------
    def open(self) -> set[FileChange]:
        """Walk the tree and watch it; the changes seen while doing so (directories born among
        them followed). Raises ``WatchLimitReached``."""
        self.dirs = _walk_dirs(self.rules)
        self._main, seen = self._open(main=True)
        return self.absorb(seen)

    def wait(self) -> set[FileChange] | None:
        """The accepted changes of the next moment (about 150 ms when quiet), with the
        directories born among them watched and the entries already inside them added; None
        once stopped."""
        assert self._main is not None, "open() first"
        changes = self._main.wait()
        if changes is not None and self._extra is not None:
            more = self._extra.wait()
            changes = None if more is None else changes | more
        if changes is None:
            return None
        return self.absorb(changes)

    def tidy(self, rewalk: bool = False) -> set[FileChange]:
        """At a quiet moment: walk the tree again if asked (``rewalk``) or if following gave up,
        and consolidate the watches once the supplementary one has grown. Returns what was seen
        meanwhile."""
        seen: set[FileChange] = set()
        if rewalk or self._stale:
            seen |= self._rewalk()
        if len(self._extra_dirs) + self._stale_entries > self._consolidate_at():
            seen |= self._consolidate()
        return self.absorb(seen) if seen else seen

    def close(self) -> None:
        for watch in (self._extra, self._main):
            if watch is not None:
                watch.changes.close()
        self._main = self._extra = None

    # -- directories appearing and disappearing ------------------------------------------------
    def absorb(self, changes: Iterable[FileChange]) -> set[FileChange]:
        """``changes`` that ``accept`` keeps, plus the entries of directories born among them, which
        are watched from now on; watched directories that are gone or replaced are dropped."""
        kept = [(change, path) for change, path in changes if self._accept(change, path)]
        born = self._dir_changes(kept)
        return set(kept) | self._follow(born) if born else set(kept)

    def _dir_changes(self, changes: Iterable[FileChange]) -> set[str]:
        """Directories among ``changes`` that must be watched anew; drops the watched ones that
        are gone. Decided by what is on disk now, so the order of the events does not matter: a
        directory with a deletion event, or another identity than the one watched, was replaced."""
        deleted: set[str] = set()
        touched: set[str] = set()
        for change, abs_path in changes:
            rel = relative_path(self._prefix, abs_path)
            if not rel or rel.partition("/")[0] in ALWAYS_IGNORED_NAMES:
                continue
            touched.add(rel)
            if change == Change.deleted:
                deleted.add(rel)
        gone: set[str] = set()
        born: set[str] = set()
        for rel in touched:
            known = self.dirs.get(rel)
            now = _dir_identity(os.path.join(self.root, rel))
            if known is not None and (now != known or rel in deleted):
                gone.add(rel)
            if now is not None and (known is None or rel in gone):
                born.add(rel)
        if gone:
            self._drop(gone)
        return born

    def _follow(self, born: set[str]) -> set[FileChange]:
        """Watch ``born`` and everything below, then list them again once watched: entries
        written before their watch existed are reported as added. Gives up (marking the set
        stale, to be walked again at the next quiet moment) if directories keep appearing."""
        reported: set[FileChange] = set()
        for _round in range(_FOLLOW_ROUNDS):
            found: dict[str, Identity] = {}
            for listing in _walk_from(self.rules, born):
                reported.update((Change.added, entry.path) for entry in listing.entries
                                if not entry.entered and self._accept(Change.added, entry.path))
                if self.dirs.get(listing.rel) != listing.identity:
                    found[listing.rel] = listing.identity
            if not found:  # every directory listed was watched before it was listed
                return reported
            self._watch_more(found)
            drained = {(c, p) for c, p in self._reopen_extra() if self._accept(c, p)}
            reported |= drained
            born = set(found) | self._dir_changes(drained)
        self._stale = True
        log.info("watch: directories keep appearing under %s; the watch set is walked again when quiet",
                 ", ".join(sorted(born)[:3]))
        return reported

    def _rewalk(self) -> set[FileChange]:
        """Walk the tree again and watch what the walk enters now (after an ignore-rule change, a
        follow that gave up, or periodically): what was missed is followed, what is gone dropped."""
        self._stale = False
        walked = _walk_dirs(self.rules)
        gone = {rel for rel, identity in self.dirs.items() if walked.get(rel) != identity}
        if gone:
            self._drop(gone)
        missing = {rel for rel, identity in walked.items() if self.dirs.get(rel) != identity}
        if not missing:
            return set()
        log.info("watch: %d directories were not watched (%s); watching them", len(missing),
                 ", ".join(sorted(missing)[:3]))
        return self._follow(missing)

    def _watch_more(self, found: Mapping[str, Identity]) -> None:
        self.dirs = {**self.dirs, **found}
        self._extra_dirs = self._extra_dirs | found.keys()

    def _drop(self, gone: set[str]) -> None:
        """Forget ``gone`` and everything below them."""
        keep = {rel: identity for rel, identity in self.dirs.items() if not _under(rel, gone)}
        self._stale_entries += len(self.dirs) - len(keep)
        self._extra_dirs = frozenset(rel for rel in self._extra_dirs if rel in keep)
        self.dirs = keep

    # -- the watches ---------------------------------------------------------------------------
    def _reopen_extra(self) -> set[FileChange]:
        """Replace the supplementary watch by one over the current supplementary directories; the
        changes the old one caught."""
        old = self._extra
        held = (self._main.size if self._main else 0) + (old.size if old else 0)
        seen: set[FileChange] = set()
        if old is not None and not overlap_allowed(held, len(self._extra_dirs)):
            seen |= old.close()  # close first; listing the directories again below covers the gap
            old = self._extra = None
            gap = True
        else:
            gap = False
        try:
            self._extra, first = self._open(main=False)
        except WatchLimitReached:
            if old is not None:
                seen |= old.close()
            self._extra = None
            return seen | self._consolidate()  # one watch over everything needs fewer; else polling
        seen |= first
        if old is not None:
            seen |= old.close()
        if gap:
            for listing in _walk_from(self.rules, self._extra_dirs):
                seen.update((Change.added, entry.path) for entry in listing.entries if not entry.entered)
        return seen

    def _consolidate(self) -> set[FileChange]:
        """One new main watch over every directory in place of the main and supplementary ones."""
        held = (self._main.size if self._main else 0) + (self._extra.size if self._extra else 0)
        seen: set[FileChange] = set()
        overlap = overlap_allowed(held, len(self.dirs))
        if overlap:
            try:
                new, first = self._open(main=True)
            except WatchLimitReached:  # other programs hold more than we thought
                overlap = False
        if not overlap:
            seen |= self._close_all()
            new, first = self._open(main=True)  # WatchLimitReached: the caller falls back to polling
        seen |= first
        seen |= self._close_all()
        self._main = new
        self._extra_dirs = frozenset()
        self._stale_entries = 0
        if not overlap:
            self._on_gap()  # the main watch's directories were unwatched for a moment
        return seen

    def _close_all(self) -> set[FileChange]:
        seen: set[FileChange] = set()
        for watch in (self._extra, self._main):
            if watch is not None:
                seen |= watch.close()
        self._main = self._extra = None
        return seen

    def _consolidate_at(self) -> int:
        return max(_MIN_CONSOLIDATE, math.isqrt(2 * len(self.dirs)))

    def _open(self, main: bool) -> tuple[_Watch, set[FileChange]]:
        """A watch over the main (every directory, plus the steering ones) or the supplementary
        directories, registered when this returns: (the watch, the changes its first wait saw).

        Errors adding a watch are not ignored (watchfiles' ``ignore_permission_denied`` would
        drop every one of them, the watch limit included, without a word): a directory gone or
        made unreadable since the walk is left out and the watch opened again."""
        for _attempt in range(_OPEN_ATTEMPTS):
            paths = self._paths(main)
            watch = watchfiles.watch(*paths, watch_filter=None, debounce=1000, step=50, stop_event=self._stop,
                                     rust_timeout=_MAIN_WAIT_MS if main else _EXTRA_WAIT_MS, yield_on_timeout=True,
                                     recursive=False, ignore_permission_denied=False, debug=False,
                                     raise_interrupt=False)
            try:
                first = next(watch, None) or set()
            except (FileNotFoundError, PermissionError):
                watch.close()
                self._forget_unwatchable()
                continue
            except (OSError, RuntimeError) as exc:
                watch.close()
                if _is_limit(exc):
                    raise WatchLimitReached(str(exc)) from exc
                raise
            return _Watch(watch, len(paths)), first
        raise RuntimeError(f"the tree under {self.root} keeps changing while the watch is set up")

    def _paths(self, main: bool) -> list[str]:
        dirs = sorted(self.dirs) if main else sorted(self._extra_dirs)
        paths = [os.path.join(self.root, rel) if rel else self.root for rel in dirs]
        if main:
            paths += self._steering_dirs()
        return paths

    def _forget_unwatchable(self) -> None:
        """Drop the directories that are gone or unreadable since they were walked."""
        gone = {rel for rel in self.dirs
                if not os.access(os.path.join(self.root, rel) if rel else self.root, os.R_OK | os.X_OK)
                or _dir_identity(os.path.join(self.root, rel) if rel else self.root) is None}
        if gone:
            self._drop(gone)


def relative_path(prefix: str, abs_path: str) -> str | None:
    """``abs_path`` as a posix path relative to the root whose ``prefix`` (the root with a trailing
    separator) it starts with; None for a path outside the root."""
    if not abs_path.startswith(prefix):
        return None
    rel = abs_path[len(prefix):]
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def _walk_dirs(rules: IgnoreRules) -> dict[str, Identity]:
    """Every directory the walk enters and can list, with its identity."""
    return {listing.rel: listing.identity for listing in walk_tree(rules)
            if listing.error is None and listing.identity is not None}


def _walk_from(rules: IgnoreRules, starts: Iterable[str]) -> Iterator[Listing]:
    """The listings of the subtrees under ``starts``, each walked once (a start below another is
    covered by it; sorted, an ancestor comes before its descendants)."""
    tops: set[str] = set()
    for start in sorted(starts):
        if _under(start, tops):
            continue
        tops.add(start)
        yield from (listing for listing in walk_tree(rules, start)
                    if listing.error is None and listing.identity is not None)


def _under(rel: str, tops: set[str] | frozenset[str]) -> bool:
    """Whether ``rel`` is one of ``tops`` or below one of them (``""`` is the root)."""
    if rel in tops or "" in tops:
        return True
    cut = rel.find("/")
    while cut != -1:
        if rel[:cut] in tops:
            return True
        cut = rel.find("/", cut + 1)
    return False


def _dir_identity(path: str) -> Identity | None:
    """The identity of ``path`` if it is a directory itself (not a link to one)."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _is_limit(exc: BaseException) -> bool:
    """Whether ``exc`` (from watchfiles opening a watch) says inotify's watches or instances ran
    out: notify's ``MaxFilesWatch`` (ENOSPC), or EMFILE creating the inotify instance."""
    text = str(exc)
    return (getattr(exc, "errno", None) in (errno.ENOSPC, errno.EMFILE) or "MaxFilesWatch" in text
            or "watch limit" in text or "os error 24" in text or "os error 28" in text)
