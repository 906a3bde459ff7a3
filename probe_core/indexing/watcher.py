"""The file watcher: filesystem events under a workspace root become scan requests (DESIGN §4).

Two threads:

* the *event* thread watches exactly the directories the scanner enters (``scan.walk_tree``:
  inside the root, no directory symlink followed, ignored ones left out), each on its own
  (``watched_dirs.WatchedDirs``), and records every change that the scanner's own ``IgnoreRules``
  would not skip. A symlink to ``/`` or a loop in the tree therefore costs nothing, and an
  unreadable directory is skipped, not an error. ``.git/HEAD`` (a checkout, a rebase; in a linked
  worktree the HEAD in the checkout's own git dir outside the root, watched too) and ignore
  files (``.gitignore``, ``.probeignore``, ``.git/info/exclude``) are recorded as "needs a full
  scan". Every ``rescan_s`` the watched set is walked again. When the user's inotify watches run
  out the thread polls the tree instead (``tree_poll.TreePoll``, every ``poll_s`` or more) and
  tries inotify again every ``rescan_s``. If watchfiles raises otherwise, the thread restarts it
  (up to ``max_restarts`` times, then ``running`` turns False) and asks for a full scan, since
  events may have been lost.
* the *flush* thread owns the timers. A batch goes out after ``debounce_s`` of quiet (trailing
  debounce) or ``max_wait_s`` after its first event, whichever comes first, and only once the
  changed files are stable (their stat unchanged across ``stable_s``: an editor or a
  checkout still writing postpones it). More than ``burst_files`` paths become one full
  incremental scan. Every ``rescan_s`` a full stat rescan catches missed events (the indexer
  compares mtime, size, ctime, inode and device, and hashes racy files: ``change_detection``).

watchfiles' own ``debounce``/``step`` only group raw events; the trailing debounce is ours, and
the filtering too (watchfiles' filter would keep ``watch`` from reporting quiet while ignored
files keep changing).
"""
from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..scan import ALWAYS_IGNORED_NAMES, IgnoreRules
from .tree_poll import TreePoll
from .watched_dirs import WatchedDirs, WatchLimitReached, relative_path, watch_limit

log = logging.getLogger("probe.watch")

_FLUSH_TICK_S = 0.05
_STABLE_CHECK_MAX_FILES = 64
_POLL_COST_FACTOR = 20  # a poll waits at least 20 times what the last one cost: at most ~5% of a core


@dataclass(frozen=True, slots=True)
class ChangeBatch:
    """What to re-index: ``paths`` (posix, relative to the root), or everything (``full_scan``)."""

    paths: frozenset[str]
    full_scan: bool
    reason: str  # changes | burst | git_head | ignore_rules | periodic | restart | watch_gap


@dataclass(frozen=True, slots=True)
class WatchSettings:
    debounce_s: float = 3.0
    max_wait_s: float = 30.0
    stable_s: float = 0.25
    burst_files: int = 200
    rescan_s: float = 900.0
    max_restarts: int = 3
    poll_s: float = 2.0  # the shortest pause between polls, when inotify's watches ran out


class RepoWatcher:
    """Watches one root and calls ``on_batch`` (from its flush thread) with debounced batches."""

    def __init__(self, root: Path | str, on_batch: Callable[[ChangeBatch], None],
                 settings: WatchSettings = WatchSettings(), rules: IgnoreRules | None = None,
                 on_change: Callable[[], None] | None = None):
        """``on_change`` (optional) is called on every accepted raw event, before any debounce:
        the engine uses it to stop trusting cached answers at once."""
        self.root = os.path.realpath(root)
        self._prefix = self.root.rstrip(os.sep) + os.sep
        self.on_batch = on_batch
        self.on_change = on_change
        self.settings = settings
        self.rules = rules or IgnoreRules(self.root)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pending: set[str] = set()
        self._full_reason: str | None = None
        self._first_event = 0.0
        self._last_event = 0.0
        self._threads: list[threading.Thread] = []
        self.restarts = 0
        self.last_error: str | None = None
        self.batches_sent = 0
        self._events_alive = False
        self._watches: WatchedDirs | None = None
        self._poll: TreePoll | None = None  # set while inotify's watches are out
        self._rules_changed = False
        self._git_head, self._git_watch = self._find_git_head()

    def _find_git_head(self) -> tuple[str | None, str | None]:
        """(the checkout's HEAD file, the folder to watch for it besides the root, or None).

        In a plain clone HEAD is ``.git/HEAD`` under the root. In a linked worktree (or a submodule)
        ``.git`` is a file naming the checkout's own git dir elsewhere (``<main>/.git/worktrees/<name>``):
        that folder is watched too, since a checkout there changes nothing under the root's ``.git``.
        The folder, not the file: git replaces HEAD by a rename, which a watch on the file would lose."""
        from ..gitrefs import git_dirs

        dirs = git_dirs(self.root)
        if dirs is None:
            return None, None
        own = os.path.realpath(dirs[0])
        head = os.path.join(own, "HEAD")
        if own == self.root or own.startswith(self._prefix) or not os.path.isdir(own):
            return head, None  # under the root: the root's watch sees it
        return head, own

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._events_alive = True
        for target, name in ((self._event_loop, "probe-watch-events"), (self._flush_loop, "probe-watch-flush")):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 3.0) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=timeout)

    @property
    def running(self) -> bool:
        """False once the event thread gave up (or before ``start``)."""
        return self._events_alive and not self._stop.is_set()

    def status(self) -> dict:
        with self._lock:
            pending = len(self._pending) + (1 if self._full_reason else 0)
        return {"watcher_running": self.running, "watcher_restarts": self.restarts,
                "watcher_error": self.last_error, "pending_changes": pending, "batches_sent": self.batches_sent,
                "watcher_mode": "poll" if self._poll is not None else "inotify"}

    @property
    def watched_dirs(self) -> frozenset[str]:
        """The directories watched now (posix, relative; ``""`` is the root), or walked by each
        poll while polling."""
        source = self._poll if self._poll is not None else self._watches
        return frozenset(source.dirs) if source is not None else frozenset()

    # -- events ------------------------------------------------------------------------------
    def _accept(self, _change, abs_path: str) -> bool:
        """The event filter: keep what the scanner would index, plus the files that steer it."""
        if abs_path == self._git_head:
            return True
        rel = relative_path(self._prefix, abs_path)
        if not rel:
            return False
        if rel.partition("/")[0] in ALWAYS_IGNORED_NAMES:
            return rel in (".git/HEAD", ".git/info/exclude")
        if IgnoreRules.is_rule_file(rel):
            return True
        try:
            return not self.rules.matches(rel)
        except ValueError:
            return False

    def _record(self, changes) -> None:
        now = time.monotonic()
        with self._lock:
            if not self._pending and not self._full_reason:
                self._first_event = now
            self._last_event = now
            for _change, abs_path in changes:
                if abs_path == self._git_head:  # a checkout (also in a linked worktree)
                    self._full_reason = "git_head"
                    continue
                rel = relative_path(self._prefix, abs_path)
                if rel is None:
                    continue
                if rel == ".git/HEAD":
                    self._full_reason = "git_head"
                elif rel == ".git/info/exclude" or IgnoreRules.is_rule_file(rel):
                    self.rules.invalidate()
                    self._rules_changed = True
                    self._full_reason = self._full_reason or "ignore_rules"
                else:
                    self._pending.add(rel)
        if self.on_change is not None:
            self.on_change()

    def _request_full(self, reason: str) -> None:
        now = time.monotonic()
        with self._lock:
            if not self._pending and not self._full_reason:
                self._first_event = now
            self._last_event = now
            self._full_reason = self._full_reason or reason

    def _event_loop(self) -> None:
        while not self._stop.is_set():
            try:
                if not os.path.isdir(self.root):
                    raise FileNotFoundError(f"watched root {self.root} is gone")
                if self._watch():
                    return  # stopped
                self._poll_tree()  # until stopped, or time to try inotify again
            except Exception as exc:
                self.restarts += 1
                self.last_error = f"{type(exc).__name__}: {exc}"
                if self.restarts > self.settings.max_restarts:
                    log.error("file watcher failed %d times, giving up: %s", self.restarts, self.last_error)
                    self._events_alive = False
                    return
                log.warning("file watcher failed (%s); restarting (%d/%d)", self.last_error, self.restarts,
                            self.settings.max_restarts)
                self._request_full("restart")  # events may have been missed while it was down
                self._stop.wait(min(0.5 * self.restarts, 5.0))

    def _watch(self) -> bool:
        """Watch with inotify until stopped (True), or until the user's watches run out (False)."""
        watches = WatchedDirs(self.root, self.rules, self._accept, self._stop, self._steering_dirs,
                              on_gap=lambda: self._request_full("watch_gap"))
        try:
            changes: set | None = watches.open()
            self._watches = watches
            if self._poll is not None:  # back from polling: what changed since the last poll is unknown
                log.info("watch: inotify watches are available again; polling stops")
                self._poll = None
                self._request_full("watch_gap")
            last_walk = time.monotonic()
            while changes is not None:
                if changes:
                    self._record(changes)
                if self._stop.is_set():
                    break
                if not changes:  # a quiet moment
                    rewalk = self._rules_changed or time.monotonic() - last_walk >= self.settings.rescan_s
                    if rewalk:  # an ignore-rule change, or the periodic look at what is watched
                        self._rules_changed = False
                        last_walk = time.monotonic()
                    seen = watches.tidy(rewalk=rewalk)
                    if seen:
                        self._record(seen)
                changes = watches.wait()
            return True
        except WatchLimitReached as exc:
            if self._poll is None:
                log.warning("watch: inotify watches ran out (%s; limit %d); polling the tree instead",
                            exc, watch_limit())
                self._poll = TreePoll(self.rules, self._steering_files)
                self._request_full("watch_gap")  # nothing was watched for a moment
            return False
        finally:
            watches.close()

    def _poll_tree(self) -> None:
        """Poll until stopped or until ``rescan_s`` has passed (then inotify is tried again; the
        poll keeps its last snapshot, so nothing falls between)."""
        poll = self._poll
        assert poll is not None
        started = time.monotonic()
        while not self._stop.is_set():
            changes = {(change, path) for change, path in poll.changes() if self._accept(change, path)}
            if changes:
                self._record(changes)
            if self._rules_changed:
                self._rules_changed = False  # the next poll walks with the new rules
            if time.monotonic() - started >= self.settings.rescan_s:
                return
            self._stop.wait(max(self.settings.poll_s, _POLL_COST_FACTOR * poll.last_cost_s))

    def _steering_dirs(self) -> list[str]:
        """Directories outside the walk watched for the files that steer scans: ``.git/`` for HEAD,
        ``.git/info/`` for the excludes (the rest of ``.git`` is never watched)."""
        return [path for path in (os.path.join(self.root, ".git"), os.path.join(self.root, ".git", "info"),
                                  self._git_watch)
                if path and os.path.isdir(path) and not os.path.islink(path)]

    def _steering_files(self) -> list[str]:
        files = [os.path.join(self.root, ".git", "HEAD"), os.path.join(self.root, ".git", "info", "exclude")]
        return files + [self._git_head] if self._git_head and self._git_head not in files else files

    # -- timers ------------------------------------------------------------------------------
    def _flush_loop(self) -> None:
        s = self.settings
        last_rescan = time.monotonic()
        while not self._stop.wait(_FLUSH_TICK_S):
            now = time.monotonic()
            with self._lock:
                busy = bool(self._pending or self._full_reason)
                due = busy and (now - self._last_event >= s.debounce_s or now - self._first_event >= s.max_wait_s)
                overdue = busy and now - self._first_event >= s.max_wait_s
                paths = list(self._pending) if due else []
                seen_until = self._last_event
            if due and not overdue and not self._stable(paths):
                with self._lock:
                    self._last_event = max(self._last_event, time.monotonic())
                continue
            if due:
                with self._lock:
                    if self._last_event > seen_until and not overdue:
                        continue  # more changes arrived during the stable check: wait for quiet again
                    batch = self._take()
                self._emit(batch)
                if batch.full_scan:
                    last_rescan = time.monotonic()
            elif now - last_rescan >= s.rescan_s:
                last_rescan = now
                self._emit(ChangeBatch(frozenset(), True, "periodic"))

    def _take(self) -> ChangeBatch:
        paths, reason = frozenset(self._pending), self._full_reason
        self._pending = set()
        self._full_reason = None
        if reason:
            return ChangeBatch(frozenset(), True, reason)
        if len(paths) > self.settings.burst_files:
            return ChangeBatch(frozenset(), True, "burst")
        return ChangeBatch(paths, False, "changes")

    def _stable(self, paths: list[str]) -> bool:
        """Whether the (existing) changed files keep their stat across ``stable_s``."""
        if self.settings.stable_s <= 0 or not paths:
            return True
        sample = paths[:_STABLE_CHECK_MAX_FILES]
        before = [self._stat(p) for p in sample]
        if self._stop.wait(self.settings.stable_s):
            return True
        return before == [self._stat(p) for p in sample]

    def _stat(self, rel: str) -> tuple[int, ...] | None:
        try:
            st = os.stat(os.path.join(self.root, rel))
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino

    def _emit(self, batch: ChangeBatch) -> None:
        self.batches_sent += 1
        log.info("watch: %s (%s)", "full scan" if batch.full_scan else f"{len(batch.paths)} changed paths",
                 batch.reason)
        try:
            self.on_batch(batch)
        except Exception:
            log.exception("handling a change batch failed")
