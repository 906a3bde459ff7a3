"""Which paths under a workspace root Probe leaves out, decided the same way for the scanner
and the file watcher.

Sources, highest precedence first; the first source with a pattern matching the path decides,
and within one file the last matching pattern wins:

1. ``extra_ignores`` given by the caller, patterns relative to the root;
2. ``.probeignore`` files (gitignore syntax), the deepest directory first;
3. ``.gitignore`` files, the deepest directory first, each relative to its own directory;
4. the root repository's ``.git/info/exclude`` (worktrees and submodules included);
5. the built-in list in ``_default_ignores``.

A ``!negation`` in 1-2 also re-includes a built-in default; in 3-4 it only undoes other git
rules (see ``_default_ignores`` for why). VCS directories and ``.probe/`` are never included.
As in git, nothing inside an excluded directory can be re-included: the scanner does not
descend into it, and ``matches`` checks every ancestor.

Matching follows git's own algorithm: each entry of a directory is tested by itself against
the patterns (its path relative to the ignore file's directory; dir-only patterns only for
directories), and an excluded directory ends the descent. Lines are compiled by
``pathspec.GitIgnoreSpec`` and we use its patterns' regexes, but not ``check_file``: that judges
whole file paths, which gets directories wrong (the ``*`` / ``!*/`` / ``!*.py`` whitelist
idiom) and re-includes files inside excluded directories, which git does not (``build/`` then
``!build/keep.py``). The tests compare with ``git ls-files --others --exclude-standard``.

Rules are read from the root downward and honoured whether or not the root is a git
repository. Not read: a global ``core.excludesFile`` and ``.gitignore`` files above the root.

A line git accepts but can never match with (a ``[`` left open, an unknown ``[:class:]``) or one
pathspec cannot compile is skipped with a warning naming its file and line, never an error: one
odd line must not stop indexing. Bracket expressions follow git's reading (``_git_brackets``).
"""
from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

from probe_core.scan._default_ignores import ALWAYS_IGNORED_NAMES, VENV_MARKER, is_default_ignored
from probe_core.scan._git_brackets import InertPattern, fill_brackets, split_brackets

log = logging.getLogger("probe.scan")
_warned: set[tuple[str, int, str]] = set()  # (file, line, text): each unusable line is reported once per process

PROBEIGNORE = ".probeignore"
GITIGNORE = ".gitignore"
RULE_FILE_NAMES: frozenset[str] = frozenset({GITIGNORE, PROBEIGNORE})


# pathspec's gitignore regexes end a pattern with "the path ends here, or this was a directory
# and the path goes on below it", capturing that slash in this group (the name is the same
# since pathspec 0.12; GitIgnoreSpec's own matcher reads it too).
_DIR_MARK_GROUP = "ps_d"
_END_OR_DESCENDANT = f"(?:(?P<{_DIR_MARK_GROUP}>/)|$)"


@dataclass(frozen=True, slots=True)
class _Rule:
    """One pattern line: ``excludes`` is False for a ``!negation``."""

    regex: re.Pattern[str]
    excludes: bool
    dir_only: bool

    def matches(self, path: str, is_dir: bool) -> bool:
        """Whether the pattern names ``path`` itself (not merely a directory above it)."""
        if self.dir_only and not is_dir:
            return False
        found = self.regex.search(path)
        return found is not None and found.groupdict().get(_DIR_MARK_GROUP) is None


class _RuleFile:
    """The compiled patterns of one ignore file, last line first."""

    __slots__ = ("_any", "rules")

    def __init__(self, rules: tuple[_Rule, ...]) -> None:
        self.rules = rules
        # Most paths match no pattern at all; one combined search says so without a Python
        # loop over every line (a 60-line .gitignore is common).
        self._any = _combine(rule.regex for rule in rules)

    def decide(self, path: str, is_dir: bool) -> bool | None:
        """True: excluded, False: re-included by a negation, None: no pattern matches."""
        if self._any is not None and self._any.search(path) is None:
            return None
        for rule in self.rules:
            if rule.matches(path, is_dir):
                return rule.excludes
        return None


def _combine(regexes: Iterable[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One regex matching wherever any of ``regexes`` does; None if they cannot be joined."""
    sources = [regex.pattern for regex in regexes]
    if any(isinstance(source, bytes) for source in sources):
        return None
    # group names may repeat across alternatives only if unnamed
    joined = "|".join(f"(?:{source.replace(f'(?P<{_DIR_MARK_GROUP}>', '(')})" for source in sources)
    try:
        return re.compile(joined)
    except re.error:
        return None


@dataclass(frozen=True, slots=True)
class _Layer:
    """One ignore file, anchored at ``base`` (posix, relative to the root)."""

    base: str
    rule_file: _RuleFile
    overrides_defaults: bool


class IgnoreRules:
    """The ignore decision for one root. Build once per root and reuse: ignore files are read
    lazily, once per directory, and cached until ``invalidate()``.
    """

    def __init__(self, root: Path | str, extra_ignores: Sequence[str] = (), *,
                 keep_extensions: Collection[str] = ()) -> None:
        """``keep_extensions``: file extensions (lower-case, no dot) the built-in binary list does
        not leave out for this root, e.g. ``{"pdf"}`` for a reference library that reads PDFs.
        Ignore files and ``extra_ignores`` still apply to them like to any file."""
        self.root = Path(os.path.realpath(root))
        self._root_str = str(self.root)
        self._extra = _compile(list(extra_ignores), "the extra ignore patterns")
        self._keep_extensions = frozenset(keep_extensions)
        self.invalidate()

    def invalidate(self) -> None:
        """Forget every ignore file read so far; call when ``is_rule_file`` says one changed.

        Files that a changed rule now re-includes are not discovered by this alone: the caller
        needs a rescan for that.
        """
        exclude_path = _info_exclude_path(self._root_str)
        self._exclude = _compile(_read_pattern_lines(exclude_path), exclude_path) if exclude_path else None
        self._rule_files: dict[str, tuple[_RuleFile | None, _RuleFile | None]] = {}
        self._layers: dict[str, tuple[_Layer, ...]] = {}

    @staticmethod
    def is_rule_file(rel_path: str) -> bool:
        """Whether a change to this path (posix, relative) can change ignore decisions."""
        return rel_path.rpartition("/")[2] in RULE_FILE_NAMES or rel_path == ".git/info/exclude"

    def matches(self, rel_path: str, is_dir: bool | None = None) -> bool:
        """Whether ``rel_path`` (posix, relative to the root) is ignored, itself or through an
        ignored ancestor directory.

        ``is_dir`` says whether the path is a directory (dir-only patterns like ``build/``
        depend on it); ``None`` asks the filesystem, following symlinks as the scanner does. A
        trailing ``/`` also marks a directory. The root itself is never ignored.

        Raises ``ValueError`` for an absolute path or one with ``..`` components.
        """
        if rel_path.endswith("/"):
            is_dir = True
        parts = split_rel_path(rel_path)
        if not parts:
            return False
        if is_dir is None:
            is_dir = os.path.isdir(os.path.join(self._root_str, *parts))
        parent = ""
        for depth, name in enumerate(parts):
            last = depth == len(parts) - 1
            if self.excludes_entry(parent, name, is_dir if last else True):
                return True
            parent = f"{parent}/{name}" if parent else name
        return False

    def excludes_entry(self, parent: str, name: str, is_dir: bool) -> bool:
        """Whether the entry ``name`` in directory ``parent`` (posix, relative; ``""`` for the
        root) is ignored, assuming its ancestors are not. This is the scanner's per-entry test;
        use ``matches`` for an arbitrary path.
        """
        if name in ALWAYS_IGNORED_NAMES:
            return True
        rel = f"{parent}/{name}" if parent else name
        for layer in self._layers_for(parent):
            sub = rel[len(layer.base) + 1 :] if layer.base else rel
            excluded = layer.rule_file.decide(sub, is_dir)
            if excluded is None:
                continue
            if excluded:
                return True
            if layer.overrides_defaults:
                return False
            break  # re-included by git rules: the built-in defaults still apply
        if is_default_ignored(name, is_dir):
            return not (self._keep_extensions and not is_dir
                        and name.lower().rpartition(".")[2] in self._keep_extensions)
        return is_dir and os.path.isfile(os.path.join(self._root_str, rel, VENV_MARKER))

    def _layers_for(self, rel_dir: str) -> tuple[_Layer, ...]:
        """The compiled ignore files that apply to entries of ``rel_dir``, precedence order."""
        cached = self._layers.get(rel_dir)
        if cached is not None:
            return cached
        dirs = [rel_dir]
        while dirs[-1]:
            dirs.append(dirs[-1].rpartition("/")[0])
        probe_layers: list[_Layer] = []
        git_layers: list[_Layer] = []
        for directory in dirs:
            probe_rules, git_rules = self._rule_files_in(directory)
            if probe_rules is not None:
                probe_layers.append(_Layer(directory, probe_rules, overrides_defaults=True))
            if git_rules is not None:
                git_layers.append(_Layer(directory, git_rules, overrides_defaults=False))
        layers: list[_Layer] = []
        if self._extra is not None:
            layers.append(_Layer("", self._extra, overrides_defaults=True))
        layers += probe_layers
        layers += git_layers
        if self._exclude is not None:
            layers.append(_Layer("", self._exclude, overrides_defaults=False))
        result = tuple(layers)
        self._layers[rel_dir] = result
        return result

    def _rule_files_in(self, rel_dir: str) -> tuple[_RuleFile | None, _RuleFile | None]:
        cached = self._rule_files.get(rel_dir)
        if cached is None:
            abs_dir = os.path.join(self._root_str, rel_dir) if rel_dir else self._root_str
            cached = tuple(_compile(_read_pattern_lines(path), path)
                           for path in (os.path.join(abs_dir, PROBEIGNORE), os.path.join(abs_dir, GITIGNORE)))
            self._rule_files[rel_dir] = cached
        return cached


def split_rel_path(rel_path: str) -> list[str]:
    """The components of a posix path relative to the root (``./`` and ``//`` dropped).

    Raises ``ValueError`` for an absolute path or a ``..`` component: such a path is not a
    name inside the root, and ignore rules have nothing to say about it.
    """
    parts = [part for part in rel_path.split("/") if part not in ("", ".")]
    if rel_path.startswith("/") or ".." in parts:
        raise ValueError(f"not a path relative to the workspace root: {rel_path!r}")
    return parts


def is_ignored(root: Path | str, rel_path: str, *, extra_ignores: Sequence[str] = ()) -> bool:
    """One-off form of ``IgnoreRules(root, extra_ignores).matches(rel_path)``.

    It reads the ignore files again on every call; anything that asks more than once (a
    watcher) should keep an ``IgnoreRules``.
    """
    return IgnoreRules(root, extra_ignores).matches(rel_path)


def _read_pattern_lines(path: str) -> list[str] | None:
    """The lines of an ignore file, or None when there is none we can read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:  # absent, a directory, unreadable: no rules from it
        return None
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return text.splitlines()


def _compile(lines: list[str] | None, source: str) -> _RuleFile | None:
    """Compile gitignore lines; None when no line is an actual pattern. A line that cannot be used
    is skipped with a warning naming ``source`` (the file) and its line number."""
    if not lines:
        return None
    rules: list[_Rule] = []
    for number, line in enumerate(lines, 1):
        body, dir_only = _split_dir_only(line)
        if not body or body.startswith("#"):
            continue
        try:
            rule = _compile_line(body, dir_only)
        except (InertPattern, ValueError, re.error, FutureWarning) as exc:
            _warn_skipped(source, number, line, str(exc) or type(exc).__name__)
            continue
        if rule is not None:
            rules.append(rule)
    return _RuleFile(tuple(reversed(rules))) if rules else None


def _compile_line(body: str, dir_only: bool) -> _Rule | None:
    """One pattern line as a rule (None: it holds no pattern). Raises on a line git cannot use, on
    one pathspec rejects, and on a regex Python reads differently than it was written (a warning)."""
    classes: dict[str, str] = {}
    if "[" in body:
        body, classes = split_brackets(body)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "possible nested set" & co: not git's meaning, not a line to print
        try:
            patterns = GitIgnoreSpec.from_lines([body]).patterns
        except ValueError:  # git never matches with these either (wildmatch aborts)
            raise InertPattern("it ends with a lone '\\'" if body.endswith("\\") else "not a usable pattern") from None
        pattern = patterns[0] if patterns else None
        if pattern is None or pattern.include is None or pattern.regex is None:
            if body.strip() == "!":
                raise InertPattern("it names nothing")
            return None
        regex = pattern.regex
        if classes:
            regex = re.compile(fill_brackets(regex.pattern, classes), regex.flags)
        return _Rule(_self_match_regex(regex), excludes=pattern.include, dir_only=dir_only)


def _warn_skipped(source: str, number: int, line: str, reason: str) -> None:
    key = (source, number, line)
    if key not in _warned:
        _warned.add(key)
        log.warning("%s:%d: ignore pattern %r skipped: %s", source, number, line[:200], reason[:200])


def _self_match_regex(regex: re.Pattern[str]) -> re.Pattern[str]:
    """``regex`` narrowed to match the path itself and no longer paths below it: the walker
    asks about each entry on its own and has already decided the directories above it."""
    source = regex.pattern
    if not isinstance(source, str) or _END_OR_DESCENDANT not in source:
        return regex  # `*`, `**`, `dir/**`...: special forms; `_Rule.matches` reads the group
    return re.compile(source.replace(_END_OR_DESCENDANT, "$"), regex.flags)


def _split_dir_only(line: str) -> tuple[str, bool]:
    """Split git's "directories only" trailing slash off a pattern line.

    As git does: unescaped trailing spaces go first, then a trailing ``/`` marks the pattern
    dir-only and is dropped. Dropping it does not change anchoring (``foo/`` matches at any
    depth, like ``foo``), and leaves pathspec a plain pattern to match the entry itself.
    """
    end = len(line)
    while end and line[end - 1] == " " and not (end >= 2 and line[end - 2] == "\\"):
        end -= 1
    body = line[:end]
    if len(body) > 1 and body.endswith("/") and not body.endswith("\\/"):
        return body[:-1], True
    return body, False


def _info_exclude_path(root: str) -> str | None:
    """``info/exclude`` of the repository at ``root``, following a ``.git`` file (worktree,
    submodule) to its git directory and a worktree to its common directory."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return os.path.join(dot_git, "info", "exclude")
    lines = _read_pattern_lines(dot_git)
    if not lines or not lines[0].startswith("gitdir:"):
        return None
    git_dir = os.path.join(root, lines[0].removeprefix("gitdir:").strip())
    common = _read_pattern_lines(os.path.join(git_dir, "commondir"))
    if common:
        git_dir = os.path.join(git_dir, common[0].strip())
    return os.path.join(git_dir, "info", "exclude")
