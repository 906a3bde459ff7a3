"""A repository's commits as evaluation material: the message, cleaned into a query, and the lines
the commit changed, read with ``git`` subprocesses (offline; nothing but the local clone).

Commits are read newest first and merges are left out. ``query_from_message`` drops what a
developer would never type into a search box: trailers (``Signed-off-by:``...), issue and pull
request references, URLs, conventional-commit type prefixes; ``skip_reason`` says why a message
is not a usable query (too short, a revert, a version bump).
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import GitError

GIT_TIMEOUT_S = 30
# What a user's configuration could change in the output parsed here: the diff's path prefixes
# (diff.noprefix, diff.mnemonicPrefix: also overridden by explicit prefixes), non-ASCII paths
# C-quoted (core.quotePath), paths relative to a subfolder, signatures printed into log and show.
_GIT_SETTINGS = ("-c", "core.quotePath=false", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
                 "-c", "diff.relative=false", "-c", "log.showSignature=false")
MIN_QUERY_WORDS = 4
MAX_QUERY_CHARS = 300  # a search box, not an essay: the subject and the start of the body

_TRAILER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*(?:-by|-id|-Id|-ID)?:\s+\S.*$")
_KNOWN_TRAILERS = re.compile(
    r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by|"
    r"change-id|cc|fixes|closes|resolves|refs|see-also|bug|issue|pr-url|reviewed-on|link)\s*:", re.I)
_URL = re.compile(r"\bhttps?://\S+")
_ISSUE_REF = re.compile(
    r"\(?(?<![\w/])(?:(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?|see)\s+)?(?:[\w.-]+/[\w.-]+)?#\d+\b\)?", re.I)
_GH_REF = re.compile(r"\b(?:GH|gh)-\d+\b")
_CONVENTIONAL = re.compile(
    r"^(?:feat|fix|docs|style|refactor|perf|test|tests|build|ci|chore|revert)(?:\([^)]*\))?!?:\s*", re.I)
_BUMP = re.compile(r"^(?:bump|release|prepare release|version|v?\d+\.\d+(?:\.\d+)?\b)", re.I)
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")  # numbers ("6.12.3") are not words of a query


@dataclass(frozen=True, slots=True)
class Hunk:
    """Lines a commit touched in one file, on the new side (1-based, inclusive)."""

    start: int
    end: int


@dataclass(slots=True)
class Commit:
    sha: str
    subject: str
    body: str
    files: dict[str, list[Hunk]] = field(default_factory=dict)  # new path → touched lines

    @property
    def message(self) -> str:
        return f"{self.subject}\n\n{self.body}".strip()


def git(root: Path, *args: str) -> str:
    """Run ``git -C root args`` (with ``_GIT_SETTINGS``) and return its stdout; a failure is a ``GitError``."""
    try:
        out = subprocess.run(["git", "-C", str(root), *_GIT_SETTINGS, *args], capture_output=True,
                             timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"cannot run git in {root}: {exc}") from exc
    if out.returncode != 0:
        msg = out.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed in {root}: {msg[-1] if msg else 'exit ' + str(out.returncode)}")
    return out.stdout.decode("utf-8", "replace")


def head_commit(root: Path) -> str:
    """The checked-out commit; a ``GitError`` when ``root`` is not a git repository with commits."""
    try:
        return git(root, "rev-parse", "HEAD").strip()
    except GitError as exc:
        raise GitError(f"{root} has no git history to evaluate on (`probe eval` reads the commits of a git "
                       f"repository): {exc}") from exc


def iter_commits(root: Path, limit: int) -> Iterator[Commit]:
    """The newest ``limit`` non-merge commits reachable from HEAD, newest first (hunks not read yet)."""
    raw = git(root, "log", "--no-merges", f"--max-count={limit}", "--format=%H%x1f%s%x1f%b%x1e", "HEAD")
    for record in raw.split("\x1e"):
        parts = record.strip("\n").split("\x1f")
        if len(parts) == 3 and parts[0]:
            yield Commit(sha=parts[0].strip(), subject=parts[1].strip(), body=parts[2].strip())


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote_path(text: str) -> str:
    """A path as git prints it: as is, or C-quoted (``"..."`` with ``\\t``, ``\\"``, ``\\\\`` and
    ``\\ooo`` octal bytes) when it holds special characters."""
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return text
    body, out, i = text[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 == len(body):
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
        elif body[i + 1] in _C_ESCAPES:
            out.append(_C_ESCAPES[body[i + 1]])
            i += 2
        else:  # \ooo: one byte of the UTF-8 name
            out.append(int(body[i + 1:i + 4], 8) & 0xFF)
            i += 4
    return out.decode("utf-8", "replace")


def _new_path(header: str) -> str | None:
    """The path of a ``+++ `` line (None for ``/dev/null``: a deleted file). Git ends the name with
    a TAB when it holds a space, and C-quotes it when it holds special characters."""
    name = unquote_path(header[4:].rstrip("\t"))
    return name[2:] if name.startswith("b/") else None


def read_hunks(root: Path, commit: Commit) -> None:
    """Fill ``commit.files`` with the new-side lines each changed file's hunks touch. A pure
    deletion touches the line it happened after; deleted files are left out. A ``GitError`` when
    git cannot show the commit."""
    diff = git(root, "show", "--format=", "--unified=0", "--no-color", "--find-renames", "--no-ext-diff",
               "--src-prefix=a/", "--dst-prefix=b/", commit.sha)
    path: str | None = None
    in_header = False  # between "diff --git" and the first hunk: "--- " and "+++ " name the files
    for line in diff.split("\n"):  # not splitlines: a form feed inside a changed line is no line break
        if line.startswith("diff --git "):
            path, in_header = None, True
        elif in_header and line.startswith("+++ "):
            path = _new_path(line)
            if path is not None:
                commit.files.setdefault(path, [])
        elif line.startswith("@@"):  # a content line starts with "+", "-", " " or "\\", never "@@"
            in_header = False
            m = _HUNK.match(line)
            if path is None or not m:
                continue
            start, count = int(m.group(1)), int(m.group(2)) if m.group(2) is not None else 1
            first = max(1, start)
            commit.files[path].append(Hunk(first, max(first, start + count - 1)))


def file_at(root: Path, sha: str, path: str) -> str | None:
    """``path`` as committed in ``sha`` (None if git cannot show it)."""
    try:
        return git(root, "show", f"{sha}:{path}")
    except GitError:
        return None


def query_from_message(message: str) -> str:
    """The commit message as a developer's search query: subject and body without trailers,
    references and URLs, whitespace collapsed, at most ``MAX_QUERY_CHARS`` (cut at a word)."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", message.strip()) if p.strip()]
    if len(paragraphs) > 1 and all(_TRAILER.match(ln.strip()) for ln in paragraphs[-1].splitlines()):
        paragraphs = paragraphs[:-1]  # the trailer block
    lines = [ln for p in paragraphs for ln in p.splitlines() if not _KNOWN_TRAILERS.match(ln.strip())]
    text = " ".join(ln.strip().lstrip("-*• ").strip() for ln in lines)
    text = _CONVENTIONAL.sub("", text)
    text = _URL.sub(" ", text)
    text = _ISSUE_REF.sub(" ", text)
    text = _GH_REF.sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip(" .;:-")
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS].rsplit(" ", 1)[0]
    return text


def skip_reason(commit: Commit, query: str) -> str | None:
    """Why this commit's message cannot be a query (None: it can)."""
    subject = commit.subject.strip()
    if subject.lower().startswith(("revert ", 'revert"', "merge ")):
        return "revert or merge"
    if _BUMP.match(_CONVENTIONAL.sub("", subject)):
        return "version bump or release"
    if len(_WORDS.findall(query)) < MIN_QUERY_WORDS:
        return "message too short"
    return None
