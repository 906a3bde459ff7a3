"""Configuration in one place: ``.probe/config.json``, then environment, then flags.

Environment: ``PROBE_PRESET``, ``QDRANT_URL`` / ``QDRANT_API_KEY`` (a Qdrant server instead of the
embedded Qdrant Edge shard), ``TEI_EMBED_URL`` / ``TEI_API_KEY`` (a TEI embedder instead of the
in-process model), ``RERANKER_URL``, ``PROBE_MAX_FILE_BYTES``. Every variable Probe reads, these and
the rest, is listed in ``probe_core/environment.py``, the one reader of the environment.
"""
from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from . import environment
from .errors import ConfigError
from .private_dir import PROBE_DIR_NAME, ensure_private_dir
from .redaction import register_secret, register_url_secrets
from .scan._git_dirs import refuse_git_internals

PROBE_DIR = PROBE_DIR_NAME  # the data dir inside a repository
DENSE_STORAGES = ("float16", "turbo8")  # PROBE_DENSE_STORAGE: a new Qdrant Edge shard's dense datatype
STORE_INDEXES = ("none", "bm25", "graph")  # PROBE_STORE_INDEX: what a new Qdrant Edge shard's optimization builds
CONFIG_FILE = "config.json"


def user_data_dir() -> Path:
    """Where user-level Probe data lives (global memory rules, libraries, registries):
    ``$PROBE_DATA_DIR``, else ``$XDG_DATA_HOME/probe``, else ``~/.local/share/probe``."""
    if d := environment.get("PROBE_DATA_DIR"):
        return Path(d).expanduser()
    if d := environment.get("XDG_DATA_HOME"):
        return Path(d).expanduser() / "probe"
    return Path.home() / ".local" / "share" / "probe"


def user_data_dir_problem() -> str | None:
    """Why ``user_data_dir()`` cannot hold Probe's user data (a file in the way, no write access),
    or None. Checked early (doctor, status, ``probe mcp``'s start): otherwise nothing shows it until a
    global memory rule or a library fails to be written."""
    d = user_data_dir()
    source = ("PROBE_DATA_DIR" if environment.get("PROBE_DATA_DIR") else
              "XDG_DATA_HOME" if environment.get("XDG_DATA_HOME") else "the home directory")
    for p in (d, *d.parents):
        if not p.exists():
            continue
        if not p.is_dir():
            return (f"Probe's user data directory {d} (from {source}) cannot be created: {p} is a file, not a "
                    "directory; global memory rules and reference libraries cannot be saved. Point "
                    f"{'PROBE_DATA_DIR' if source == 'PROBE_DATA_DIR' else 'XDG_DATA_HOME'} at a directory")
        if not os.access(p, os.W_OK | os.X_OK):
            return (f"Probe's user data directory {d} (from {source}) is not writable ({p}); global memory rules "
                    "and reference libraries cannot be saved")
        return None
    return None


@dataclass(frozen=True, slots=True)
class Preset:
    name: str
    embedding_model: str
    dimensions: int | None  # None: whatever the in-process model gives
    reranker_model: str | None
    description: str


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("embedded", "builtin", None, None,
               "CPU, no Docker: Qdrant Edge in-process + the packaged ONNX embedder"),
        Preset("lite", "Qwen/Qwen3-Embedding-0.6B", 1024, None, "TEI on a small GPU (≥ 4 GB)"),
        Preset("balanced", "Qwen/Qwen3-Embedding-4B", 2560, "Qwen/Qwen3-Reranker-0.6B",
               "TEI + reranker on a mid GPU (≥ 16 GB)"),
        Preset("pro", "Qwen/Qwen3-Embedding-8B", 4096, "zeroentropy/zerank-2",
               "TEI + reranker on a large GPU (≥ 32 GB)"),
    )
}


@dataclass(slots=True)
class WorkspaceConfig:
    """What ``.probe/config.json`` holds. Unknown keys in the file are kept on rewrite."""

    workspace_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    preset: str = "embedded"
    created_at: float = field(default_factory=time.time)
    qdrant_url: str | None = None
    qdrant_api_key: str | None = field(default=None, repr=False)  # never in a log line or a message
    tei_url: str | None = None
    tei_api_key: str | None = field(default=None, repr=False)
    reranker_url: str | None = None
    max_file_bytes: int = 1_000_000
    lsp: bool = False  # code intelligence asks an installed language server (else the tree-sitter graph)
    extra: dict = field(default_factory=dict)

    @property
    def preset_spec(self) -> Preset:
        try:
            return PRESETS[self.preset]
        except KeyError:
            raise ConfigError(f"unknown preset {self.preset!r}; choose one of {', '.join(PRESETS)}") from None

    def to_json(self) -> dict:
        data = asdict(self)
        extra = data.pop("extra")
        return {**extra, **data}

    @classmethod
    def from_json(cls, data: dict) -> "WorkspaceConfig":
        """The config a parsed ``config.json`` holds; ``ConfigError`` names the first wrong key."""
        if not isinstance(data, dict):
            raise ConfigError(f"it holds {_short(data)}, not an object of settings")
        for key, value in data.items():
            check = _KEY_CHECKS.get(key)
            if check is not None and not check[0](value):
                raise ConfigError(f"{key!r} must be {check[1]}, not {_short(value)}")
        known = {f.name for f in fields(cls)} - {"extra"}
        cfg = cls(**{k: v for k, v in data.items() if k in known})
        cfg.extra = {k: v for k, v in data.items() if k not in known}
        register_secret(cfg.qdrant_api_key)  # masked wherever Probe prints or logs (probe_core.redaction)
        register_secret(cfg.tei_api_key)
        for url in (cfg.qdrant_url, cfg.tei_url, cfg.reranker_url):
            register_url_secrets(url)
        return cfg

    def with_env(self, env: dict[str, str] | None = None) -> "WorkspaceConfig":
        """Overlay environment settings (they win over the file)."""
        env = environment.environ() if env is None else env
        mapping = {"PROBE_PRESET": "preset", "QDRANT_URL": "qdrant_url", "QDRANT_API_KEY": "qdrant_api_key",
                   "TEI_EMBED_URL": "tei_url", "TEI_API_KEY": "tei_api_key", "RERANKER_URL": "reranker_url"}
        for var, attr in mapping.items():
            if env.get(var):
                setattr(self, attr, env[var])
        if env.get("PROBE_MAX_FILE_BYTES"):
            try:
                value = int(env["PROBE_MAX_FILE_BYTES"])
            except ValueError:
                value = 0
            if value <= 0:  # 0 or less would skip every file, and the next index run would drop them all
                raise ConfigError("PROBE_MAX_FILE_BYTES must be a positive integer number of bytes "
                                  f"(got {_short(env['PROBE_MAX_FILE_BYTES'])})")
            self.max_file_bytes = value
        if (storage := env.get("PROBE_DENSE_STORAGE")) and storage.strip().lower() not in DENSE_STORAGES:
            # checked before any verb runs: ``probe index --rebuild`` would delete the index first
            raise ConfigError(f"PROBE_DENSE_STORAGE must be one of {', '.join(DENSE_STORAGES)} (got {_short(storage)})")
        if (index := env.get("PROBE_STORE_INDEX")) and index.strip().lower() not in STORE_INDEXES:
            raise ConfigError(f"PROBE_STORE_INDEX must be one of {', '.join(STORE_INDEXES)} (got {_short(index)})")
        for url in (self.qdrant_url, self.tei_url, self.reranker_url):
            register_url_secrets(url)
        self.preset_spec  # validate
        return self


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _optional_str(value) -> bool:
    return value is None or isinstance(value, str)


# what each key of config.json must hold (a wrong type would surface later as a crash elsewhere)
_KEY_CHECKS = {
    "workspace_id": (lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string (a UUID)"),
    "preset": (lambda v: v in PRESETS, "one of " + ", ".join(PRESETS)),
    "created_at": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number (seconds)"),
    "qdrant_url": (_optional_str, "a URL string or null"),
    "qdrant_api_key": (_optional_str, "a string or null"),
    "tei_url": (_optional_str, "a URL string or null"),
    "tei_api_key": (_optional_str, "a string or null"),
    "reranker_url": (_optional_str, "a URL string or null"),
    "max_file_bytes": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
                       "a positive integer (bytes)"),
    "lsp": (lambda v: isinstance(v, bool), "true or false"),
}


def config_path(root: Path, probe_dir: Path | None = None) -> Path:
    """``<probe_dir>/config.json``; ``probe_dir`` defaults to ``root/.probe`` (a library's index
    keeps its data dir under the user data dir instead: ``probe_core.libraries``)."""
    return (Path(probe_dir) if probe_dir is not None else Path(root) / PROBE_DIR) / CONFIG_FILE


def load_config(root: Path, probe_dir: Path | None = None) -> WorkspaceConfig | None:
    """The workspace's config, or None when ``probe init`` never ran there."""
    path = config_path(root, probe_dir)
    if not path.exists():
        return None
    try:
        return WorkspaceConfig.from_json(json.loads(path.read_text("utf-8")))
    except (json.JSONDecodeError, TypeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid Probe config ({exc}); fix or delete it") from exc
    except ConfigError as exc:
        raise ConfigError(f"{path} is not valid Probe config: {exc}; fix it, or delete it to start over "
                          "(a new workspace id re-indexes from scratch)") from None


def save_config(root: Path, cfg: WorkspaceConfig, probe_dir: Path | None = None) -> Path:
    path = config_path(root, probe_dir)
    ensure_private_dir(path.parent)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(cfg.to_json(), indent=2, sort_keys=True) + "\n", "utf-8")
    os.replace(tmp, path)
    return path


def init_workspace(root: Path, preset: str | None = None, *,
                   probe_dir: Path | None = None) -> tuple[WorkspaceConfig, bool]:
    """Create (or keep) ``.probe/config.json`` (``<probe_dir>/config.json`` when given). Nothing
    outside the data dir is written: ``.probe/`` keeps itself out of git with its own ``.gitignore``
    (``private_dir.ensure_private_dir``). Returns (config, created)."""
    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"{root} is not a directory")
    refuse_git_internals(root)  # before .probe/ is made inside a bare repository or .git/
    cfg = load_config(root, probe_dir)
    created = cfg is None
    if cfg is None:
        cfg = WorkspaceConfig()
    if preset is not None:
        if preset not in PRESETS:
            raise ConfigError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
        cfg.preset = preset
    if created or preset is not None:
        save_config(root, cfg, probe_dir)
    if probe_dir is None:
        ensure_private_dir(root / PROBE_DIR)  # an older .probe/ gains its .gitignore
    return cfg, created
