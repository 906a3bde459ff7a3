"""Memory rules: short, labelled instructions an agent (or a user) keeps across sessions.

Global rules live in a user-level store (``$PROBE_DATA_DIR``, else ``$XDG_DATA_HOME/probe``, else
``~/.local/share/probe``; file ``memory.sqlite``), project rules in ``<root>/.probe/memory.sqlite``.
A label is unique within its scope. Every write runs in one SQLite transaction, so a failure leaves
nothing half-written. Imports stay light (stdlib only): the MCP server reads the rules at start.
"""
from __future__ import annotations

import os
import re
import sqlite3
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..config import user_data_dir
from ..errors import ProbeError
from ..private_dir import ensure_private_dir

LABEL_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_LABEL = 15
MAX_CONTENT = 8000
# Per scope: rules are read into every session's instructions and every `list` answer, so they stay
# few and short. An agent looping on `add` hits a clear error instead of growing the store (and the
# answers, and the server's memory) without end.
MAX_RULES = 200
MAX_SCOPE_CHARS = 200_000  # all contents of one scope together
SCOPES = ("global", "project")
ACTIONS = ("add", "update", "remove", "list")
DB_NAME = "memory.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label TEXT NOT NULL UNIQUE,
    content TEXT NOT NULL,
    title TEXT,
    tags TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
)
"""


class RuleError(ProbeError):
    """A memory-rule request that cannot be carried out (bad label, duplicate, missing rule ...)."""


@dataclass
class Rule:
    label: str
    scope: str
    content: str
    title: str | None = None
    tags: list[str] = field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""

    def to_dict(self) -> dict:
        return asdict(self)




def validate_label(label: str | None) -> str:
    if label is None or not str(label).strip():
        raise RuleError("a label is required (lowercase letters, digits and hyphens, e.g. \"use-uv\")")
    label = str(label).strip()
    if len(label) > MAX_LABEL:
        raise RuleError(f"label {label!r} is {len(label)} characters; at most {MAX_LABEL}")
    if not LABEL_RE.match(label):
        raise RuleError(f"label {label!r} is invalid: use lowercase letters and digits separated by single "
                        "hyphens, e.g. \"use-uv\" or \"no-mocks\"")
    return label


def _validate_scope(scope: str | None) -> str:
    scope = scope or "project"
    if scope not in SCOPES:
        raise RuleError(f"unknown scope {scope!r}; one of {', '.join(SCOPES)}")
    return scope


def _validate_content(content: str | None) -> str:
    if content is None or not str(content).strip():
        raise RuleError("content must not be empty: the rule's text is what the agent reads")
    content = str(content).strip()
    if len(content) > MAX_CONTENT:
        raise RuleError(f"content is {len(content)} characters; at most {MAX_CONTENT} (keep rules short)")
    return content


def _validate_tags(tags) -> list[str] | None:
    if tags is None:
        return None
    if isinstance(tags, str):
        tags = [t for t in tags.split(",")]
    out = []
    for t in tags:
        if not isinstance(t, str):
            raise RuleError(f"tags must be strings, got {t!r}")
        t = t.strip()
        if not t:
            continue
        if "," in t:
            raise RuleError(f"tag {t!r} must not contain a comma")
        if t not in out:
            out.append(t)
    return out


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class RuleStore:
    """Global rules (user store) and the project's rules (``<root>/.probe``), for one workspace root."""

    def __init__(self, root: Path | str | None = None, *, data_dir: Path | str | None = None):
        self.root = Path(root).expanduser().resolve() if root is not None else None
        self.data_dir = Path(data_dir) if data_dir is not None else user_data_dir()

    def path_for(self, scope: str) -> Path:
        scope = _validate_scope(scope)
        if scope == "global":
            return self.data_dir / DB_NAME
        if self.root is None:
            raise RuleError("project rules need a workspace root; use scope \"global\" or pass --root")
        return self.root / ".probe" / DB_NAME

    def _connect(self, scope: str, *, create: bool) -> sqlite3.Connection | None:
        path = self.path_for(scope)
        if not path.exists():
            if not create:
                return None
            try:
                ensure_private_dir(path.parent)
            except OSError as exc:
                raise RuleError(f"cannot create {path.parent}: {exc}") from exc
        try:
            conn = sqlite3.connect(path, timeout=10, isolation_level=None)
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise RuleError(f"cannot open the {scope} memory store {path}: {exc}") from exc
        return conn

    @staticmethod
    def _row(scope: str, row) -> Rule:
        label, content, title, tags, created, updated = row
        return Rule(label=label, scope=scope, content=content, title=title,
                    tags=[t for t in tags.split(",") if t], created_at=created, updated_at=updated)

    _COLS = "label, content, title, tags, created_at, updated_at"

    def _get(self, conn, scope: str, label: str) -> Rule | None:
        row = conn.execute(f"SELECT {self._COLS} FROM rules WHERE label = ?", (label,)).fetchone()
        return self._row(scope, row) if row else None

    # -- actions -------------------------------------------------------------------------------
    def add(self, label: str, content: str, scope: str = "project", title: str | None = None,
            tags=None) -> Rule:
        label, scope, content = validate_label(label), _validate_scope(scope), _validate_content(content)
        tags = _validate_tags(tags) or []
        now = _now()
        with closing(self._connect(scope, create=True)) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if self._get(conn, scope, label) is not None:
                    raise RuleError(f"a {scope} rule labelled {label!r} already exists; use action \"update\" "
                                    "to change it or pick another label")
                _check_room(conn, scope, added=1, chars=len(content))
                conn.execute(f"INSERT INTO rules ({self._COLS}) VALUES (?, ?, ?, ?, ?, ?)",
                             (label, content, title or None, ",".join(tags), now, now))
                rule = self._get(conn, scope, label)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return rule

    def update(self, label: str, scope: str = "project", content: str | None = None, title: str | None = None,
               tags=None) -> Rule:
        label, scope = validate_label(label), _validate_scope(scope)
        if content is None and title is None and tags is None:
            raise RuleError("update needs something to change: content, title or tags")
        if content is not None:
            content = _validate_content(content)
        tags = _validate_tags(tags)
        with self._editing(scope, label) as (conn, old):
            if content is not None:
                _check_room(conn, scope, added=0, chars=len(content) - len(old.content))
            conn.execute("UPDATE rules SET content = ?, title = ?, tags = ?, updated_at = ? WHERE label = ?",
                         (content if content is not None else old.content,
                          (title or None) if title is not None else old.title,
                          ",".join(tags if tags is not None else old.tags), _now(), label))
            rule = self._get(conn, scope, label)
        return rule

    def remove(self, label: str, scope: str = "project") -> Rule:
        label, scope = validate_label(label), _validate_scope(scope)
        with self._editing(scope, label) as (conn, old):
            conn.execute("DELETE FROM rules WHERE label = ?", (label,))
        return old

    @contextmanager
    def _editing(self, scope: str, label: str):
        """One write transaction on an existing rule: yields (connection, current rule)."""
        conn = self._connect(scope, create=False)
        if conn is None:
            raise RuleError(f"no {scope} rule labelled {label!r} (the {scope} store is empty)")
        with closing(conn):
            conn.execute("BEGIN IMMEDIATE")
            try:
                old = self._get(conn, scope, label)
                if old is None:
                    raise RuleError(f"no {scope} rule labelled {label!r}; "
                                    f"existing: {', '.join(self._labels(conn)) or 'none'}")
                yield conn, old
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    @staticmethod
    def _labels(conn) -> list[str]:
        return [r[0] for r in conn.execute("SELECT label FROM rules ORDER BY created_at, id")]

    def list(self, scope: str | None = None) -> list[Rule]:
        """Global rules first, then the project's, each by creation date (``scope`` keeps one)."""
        scopes = [_validate_scope(scope)] if scope else (["global", "project"] if self.root else ["global"])
        out: list[Rule] = []
        for s in scopes:
            conn = self._connect(s, create=False)
            if conn is None:
                continue
            with closing(conn):
                rows = conn.execute(f"SELECT {self._COLS} FROM rules ORDER BY created_at, id").fetchall()
            out.extend(self._row(s, r) for r in rows)
        return out

    def apply(self, action: str, label: str | None = None, content: str | None = None, scope: str | None = "project",
              title: str | None = None, tags=None) -> dict:
        """One ``memory`` tool call: the changed rule (if any), the current rules (``list`` only) and a message."""
        if action not in ACTIONS:
            raise RuleError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")
        rule: Rule | None = None
        if action == "add":
            rule = self.add(label, content, scope or "project", title=title, tags=tags)
            message = f"added {rule.scope} rule {rule.label!r}"
        elif action == "update":
            rule = self.update(label, scope or "project", content=content, title=title, tags=tags)
            message = f"updated {rule.scope} rule {rule.label!r}"
        elif action == "remove":
            rule = self.remove(label, scope or "project")
            message = f"removed {rule.scope} rule {rule.label!r}"
        # Only `list` carries the rules: an add answers with the rule it added, so an answer's size
        # never follows the size of the store (it did: 1.7 MB per add at 5,900 rules).
        rules = self.list() if action == "list" else []
        if action == "list":
            message = f"{len(rules)} rule(s)"
        return {"action": action, "rule": rule.to_dict() if rule else None,
                "rules": [r.to_dict() for r in rules], "message": message}


def _check_room(conn, scope: str, *, added: int, chars: int) -> None:
    """Refuse a write that would take ``scope`` past ``MAX_RULES`` or ``MAX_SCOPE_CHARS``."""
    count, total = conn.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(content)), 0) FROM rules").fetchone()
    if count + added > MAX_RULES:
        raise RuleError(f"the {scope} scope already holds {count} rules, the most it keeps ({MAX_RULES}); "
                        "remove or merge rules (action \"remove\" / \"update\") before adding another")
    if chars > 0 and total + chars > MAX_SCOPE_CHARS:
        raise RuleError(f"the {scope} rules would hold {total + chars} characters, more than {MAX_SCOPE_CHARS}; "
                        "shorten or remove rules first (rules are read into every session)")


def render_rules_markdown(rules: list[Rule] | list[dict], *, heading: str = "# Memory rules") -> str:
    """The rules as markdown: one bullet each, global first (as listed)."""
    items = [r.to_dict() if isinstance(r, Rule) else r for r in rules]
    lines = [heading, ""]
    if not items:
        lines.append("No memory rules yet (add one with the `memory` tool or `probe memory add`).")
    for r in items:
        head = f"- **{r['label']}** ({r['scope']})"
        if r.get("title"):
            head += f" {r['title']}"
        if r.get("tags"):
            head += f" [{', '.join(r['tags'])}]"
        body = r["content"].replace("\n", "\n  ")
        lines.append(f"{head}: {body}")
    return "\n".join(lines)
