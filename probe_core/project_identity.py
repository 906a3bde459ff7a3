"""Project identity: a stable 12-hex ``project_id`` for a repository root, shared by its branches.

This module sits below ``workspace``, which asks it for a root's id; re-keying the points of an
indexed workspace whose id changed is ``memory.identity``'s.

Rules (deterministic; the same inputs always give the same id):

1. **Remote.** The root's git remote (``origin``, else the first ``[remote "…"]`` in
   ``.git/config``; worktrees whose ``.git`` is a ``gitdir:`` file are followed to the main
   repository's config) is normalized by :func:`normalize_remote` to ``host/path`` (protocol,
   credentials, port, ``.git`` suffix and trailing slashes removed, lowercased). The id is
   ``sha256(normalized)[:12]``.
2. **No remote.** The id is ``sha256(folder name)[:12]`` (a moved folder keeps its id).
3. **Two clones of one remote.** When another *registered, still existing* root has the same
   normalized remote but a different path, both get
   ``sha256(normalized + ":" + suffix)[:12]`` where ``suffix`` is the shortest trailing run of
   path components (joined with ``/``) that no conflicting root ends with; the full resolved path
   when none is short enough. Each clone computes its own suffix against all the others, so the
   result does not depend on registration order.

The registry of known roots is ``projects.json`` in the user data dir (``$PROBE_DATA_DIR``, else
``$XDG_DATA_HOME/probe``, else ``~/.local/share/probe``): ``{"roots": {path: normalized_remote}}``.

A project whose id changes (it gained a remote, or a second clone appeared) is re-keyed in place by
``memory.identity.rekey_project``: a payload update of its points, no re-embedding.
"""
from __future__ import annotations

import configparser
import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path

from .config import user_data_dir
from .gitrefs import git_dirs
from .private_dir import ensure_private_dir

log = logging.getLogger("probe.identity")

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.*)$")  # [user@]host:path (scp-like ssh)


def _sha12(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def normalize_remote(url: str) -> str:
    """``https://User:pw@GitHub.com/Org/Repo.git/`` → ``github.com/org/repo``; ssh forms likewise."""
    url = url.strip()
    m = _SCHEME.match(url)
    if m:
        rest = url[m.end():]
        host, _, path = rest.partition("/")
        host = host.rpartition("@")[2]  # credentials / user
        host = host.split(":", 1)[0]  # port
    else:
        scp = _SCP.match(url)
        if scp:
            host, path = scp.group(1), scp.group(2)
        else:  # a bare path or host/path
            host, path = "", url
    path = path.strip("/")
    while path.endswith(".git"):
        path = path[:-4].rstrip("/")
    joined = f"{host}/{path}" if host else path
    return joined.strip("/").lower()


def _git_dir(root: Path) -> Path | None:
    """The repository's common git dir (a worktree's config lives in the main repository)."""
    dirs = git_dirs(root)
    return dirs[1] if dirs else None


def read_git_remote(root: Path | str) -> str | None:
    """The raw URL of ``origin`` (else the first remote) from the repository's config, or None."""
    try:
        gd = _git_dir(Path(root))
        if gd is None or not (gd / "config").is_file():
            return None
        cp = configparser.ConfigParser(strict=False, interpolation=None)
        cp.read(gd / "config", encoding="utf-8")
    except (OSError, configparser.Error, UnicodeDecodeError):
        return None
    remotes: list[tuple[str, str]] = []
    for section in cp.sections():
        m = re.fullmatch(r'remote\s+"(.+)"', section.strip())
        if m and cp.get(section, "url", fallback=None):
            remotes.append((m.group(1), cp.get(section, "url")))
    for name, url in remotes:
        if name == "origin":
            return url
    return remotes[0][1] if remotes else None


def identity_key(root: Path | str) -> str:
    """The normalized remote of ``root``, or "" when it has none."""
    url = read_git_remote(root)
    return normalize_remote(url) if url else ""


def _suffix(root: Path, others: list[Path]) -> str:
    parts = root.parts[1:] if root.anchor else root.parts  # the components, without "/"
    for k in range(1, len(parts) + 1):
        tail = parts[-k:]
        if all(o.parts[-k:] != tail for o in others):
            return "/".join(tail)
    return root.as_posix()


def project_id(root: Path | str, known: Mapping[str, str] | None = None, *, key: str | None = None) -> str:
    """The id of ``root`` given ``known`` other roots (path → their normalized remote or "")."""
    root = Path(root).resolve()
    key = identity_key(root) if key is None else key
    if not key:
        return _sha12(root.name)
    clashes = [Path(p) for p, k in (known or {}).items() if k == key and Path(p) != root]
    if not clashes:
        return _sha12(key)
    return _sha12(f"{key}:{_suffix(root, clashes)}")


# -- registry ----------------------------------------------------------------------------------


class ProjectRegistry:
    """``projects.json``: every root Probe has opened → its normalized remote ("" for none)."""

    def __init__(self, path: Path | None = None):
        self.path = path or user_data_dir() / "projects.json"

    def load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
            roots = data.get("roots", {})
            return {str(k): str(v) for k, v in roots.items()} if isinstance(roots, dict) else {}
        except (OSError, ValueError, AttributeError):
            return {}

    def register(self, root: Path, key: str) -> dict[str, str]:
        """Record ``root`` (dropping roots that no longer exist); returns the registry after."""
        roots = {p: k for p, k in self.load().items() if Path(p).is_dir()}
        if roots.get(str(root)) != key:
            roots[str(root)] = key
            ensure_private_dir(self.path.parent)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"roots": dict(sorted(roots.items()))}, indent=1), "utf-8")
            os.replace(tmp, self.path)
        return roots


def resolve_project_id(root: Path | str, registry: ProjectRegistry | None = None) -> str:
    """Register ``root`` and return its id; any failure falls back to the folder-name id."""
    root = Path(root).resolve()
    try:
        key = identity_key(root)
        try:
            known = (registry or ProjectRegistry()).register(root, key)
        except OSError as exc:  # read-only home: no disambiguation, still a valid id
            log.debug("project registry unavailable: %s", exc)
            known = {}
        return project_id(root, known, key=key)
    except Exception as exc:  # noqa: BLE001 - identity must never break opening a workspace
        log.warning("project identity failed for %s (%s); using the folder name", root, exc)
        return _sha12(root.name)
