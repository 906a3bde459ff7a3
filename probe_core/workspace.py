"""A workspace: one root, its data dir (``.probe/``), the backends it is wired to, and its
collection profile (``collection``: a code project or a reference library's index).

Backends open lazily so that ``probe status`` or an MCP ``initialize`` never waits on a model.
"""
from __future__ import annotations

import hashlib
import logging
import re
import sys
import threading
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

from .collection import CollectionProfile, make_profile
from .config import PROBE_DIR, WorkspaceConfig, init_workspace, load_config
from .embedding.protocol import Embedder
from .errors import ConfigError, WorkspaceNotFound
from .gitrefs import current_branch
from .private_dir import keep_out_of_git, refuse_links
from .records import POINT_NAMESPACE, point_id  # noqa: F401 - their home before records.py
from .scan import refuse_git_internals
from .storage.edge import EdgeStore
from .storage.manifest import Manifest
from .storage.protocol import VectorStore

log = logging.getLogger("probe.index")


def server_safe(name: str) -> str:
    """``name`` as a Qdrant collection name may hold it (a workspace id is a UUID unless edited)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:200]


def git_branch(root: Path) -> str:
    """The checked-out branch (detached → short sha, no git → ""); see ``gitrefs``."""
    return current_branch(root)


class Workspace:
    """Everything Probe knows about one root. Thread-safe for one writer and many readers."""

    def __init__(self, root: Path, config: WorkspaceConfig, *, probe_dir: Path | None = None):
        self.root = Path(root).resolve()
        self.config = config
        # the data dir: ``root/.probe`` for a project; a library keeps it under the user data dir
        self.probe_dir = Path(probe_dir).resolve() if probe_dir is not None else self.root / PROBE_DIR
        self.write_lock = threading.RLock()  # one indexer at a time inside this process
        # Opening the manifest or the store, and a rebuild's close-and-wipe of both, happen under this
        # lock: a reader (a status poll, a search) that meets no open part while a rebuild runs waits
        # for the wipe instead of opening the files being deleted and keeping them for the rebuild.
        self._parts_lock = threading.RLock()
        self.state_version = 0  # bumped on every write; keys the search cache with the generation
        self.lexical_version = 0  # bumped on every write but the dense fill's: files, chunks, the graph
        self._embedder: Embedder | None = None
        self._embedder_lock = threading.Lock()  # the model loads once even if two threads ask at once
        # what to scan, how to read and chunk, how search answers: code, or a library's documents
        self.profile: CollectionProfile = make_profile(self)

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def open(cls, root: Path | str, *, create: bool = True, probe_dir: Path | None = None) -> "Workspace":
        """Open the workspace at ``root``; with ``create`` run ``init`` when it has none.
        ``probe_dir``: the data dir when it is not ``root/.probe`` (a library's index)."""
        root = Path(root).expanduser()
        if not root.is_dir():
            raise ConfigError(f"{root} is not a directory")
        refuse_git_internals(root)  # a bare repository, .git/: git's internals are never a workspace
        refuse_links(probe_dir if probe_dir is not None else root / PROBE_DIR)  # before reading anything
        cfg = load_config(root, probe_dir)
        if cfg is None:
            if not create:
                raise WorkspaceNotFound(f"{root} has no Probe index yet; run `probe index --root {root}`")
            cfg, _ = init_workspace(root, probe_dir=probe_dir)
        elif probe_dir is None:
            keep_out_of_git(root / PROBE_DIR)  # a .probe/ made by a Probe that edited .gitignore instead
        return cls(root, cfg.with_env(), probe_dir=probe_dir)

    @property
    def workspace_id(self) -> str:
        return self.config.workspace_id

    @property
    def extra_payload(self) -> dict:
        """Merged into every point's payload (a library's collection and name)."""
        return self.profile.payload

    @property
    def library(self):
        """The profile of a reference library's index, None for a project. Kept for callers that
        ask; Probe's own code asks ``profile`` what to do instead."""
        return self.profile if self.profile.kind == "library" else None

    @cached_property
    def project_id(self) -> str:
        """Remote-based identity (see ``project_identity``); the folder-name hash if that fails. A
        profile with an id of its own (a library's) keeps it."""
        if self.profile.project_id:
            return self.profile.project_id
        try:
            from .project_identity import resolve_project_id

            return resolve_project_id(self.root)
        except Exception:  # noqa: BLE001 - identity must never break opening a workspace
            return hashlib.sha256(self.root.name.encode()).hexdigest()[:12]

    @property
    def branch(self) -> str:
        """The checked-out git branch ("" outside git, and where the profile does not track branches:
        a library's folder is indexed as it is)."""
        return git_branch(self.root) if self.profile.tracks_branches else ""

    @property
    def collection(self) -> str:
        """The store's collection: ``chunks_<preset>`` in the workspace's own Qdrant Edge shard; on
        a Qdrant server, where many workspaces meet, one per workspace too
        (``chunks_<preset>_<workspace_id>``): BM25's IDF counts only this workspace's chunks, as on
        Edge, and a rebuild, a new model's dimensions or ``probe prune`` drop it whole."""
        base = f"chunks_{self.config.preset}"
        return f"{base}_{server_safe(self.workspace_id)}" if self.config.qdrant_url else base

    @property
    def manifest(self) -> Manifest:
        return self._part("manifest", lambda: Manifest(self.probe_dir / "manifest.sqlite"))

    @property
    def store(self) -> VectorStore:
        return self._part("store", self._open_store)

    def _open_store(self) -> VectorStore:
        if self.config.qdrant_url:
            # qdrant-client takes seconds to import: only the server path pays for it
            from .storage.qdrant_server import QdrantServerStore

            return QdrantServerStore.connect(self.config.qdrant_url, self.collection, api_key=self.config.qdrant_api_key,
                                             shared=(f"chunks_{self.config.preset}", self.workspace_id))
        return EdgeStore(self.probe_dir / "store" / self.collection, self.collection)

    def _part(self, name: str, make):
        """The open manifest or store (kept in ``__dict__`` under its name), opened on first use."""
        part = self.__dict__.get(name)
        if part is None:
            with self._parts_lock:
                part = self.__dict__.get(name)
                if part is None:
                    part = self.__dict__[name] = make()
        return part

    @contextmanager
    def parts_closed(self):
        """Close the manifest and the store and keep them closed for the block (a rebuild wipes
        their files there): no reader opens them meanwhile; the first use after the block opens
        new ones. The helpers made per workspace (``per_workspace``) are dropped before and after. A part that fails to close (a damaged store's last flush) is let go anyway."""
        from .per_workspace import forget_workspace

        with self._parts_lock:
            forget_workspace(self)  # the graph's connection and the text cache: the old files' too
            for name in ("store", "manifest"):
                part = self.__dict__.pop(name, None)
                if part is not None:
                    try:
                        part.close()
                    except Exception as exc:  # noqa: BLE001 - it goes anyway: its files are about to
                        log.info("closing the %s before the rebuild failed: %s", name, exc)
            try:
                yield
            finally:  # a helper a reader made meanwhile (they open the manifest's file on their own)
                forget_workspace(self)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            with self._embedder_lock:
                if self._embedder is None:
                    from .embedding.factory import make_embedder

                    self._embedder = make_embedder(self.config)
        return self._embedder

    def set_embedder(self, embedder: Embedder) -> None:
        """Use a specific embedder (benchmarks compare models this way)."""
        self._embedder = embedder

    def touch(self, *, lexical: bool = True) -> None:
        """The index changed, or answers cached from it must not be served (``lexical=False``: the
        chunks, their words and the graph are as they were: only dense vectors were added, or a
        file changed on disk that is not indexed yet)."""
        self.state_version += 1
        if lexical:
            self.lexical_version += 1

    def close(self) -> None:
        lsp = sys.modules.get("probe_core.intel.lsp.session")  # loaded only if a language server was asked
        if lsp is not None:
            lsp.close_root(self.root)
        from .per_workspace import forget_workspace

        forget_workspace(self)  # the graph's connection first: the manifest's close then ends clean
        if "store" in self.__dict__:
            self.store.close()
        if "manifest" in self.__dict__:
            self.manifest.close()
