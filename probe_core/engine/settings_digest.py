"""What decides how an owner answers, as one digest: the backend environment and ``config.json``.

An owner (``probe mcp``, or the background daemon a CLI call started) answers every attached call
with the settings it started with. A CLI call from a shell whose environment says otherwise (another
``QDRANT_URL``, a preset, an edited ``config.json``) would silently get the owner's answer; the
owner publishes this digest in ``engine.json`` and the CLI compares it with its own, cheaply (a
small file read and a hash: the warm path loads no configuration code).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from .. import environment

# the settings that choose the backends, the model and what is indexed (config.py reads them)
SETTING_VARS = ("PROBE_PRESET", "PROBE_EMBEDDER", "QDRANT_URL", "QDRANT_API_KEY", "TEI_EMBED_URL", "TEI_API_KEY",
                "RERANKER_URL", "PROBE_MAX_FILE_BYTES")
# config.json's keys of the same kind, with WorkspaceConfig's defaults (a key written out with its
# default value, as the first run does, changes nothing; tests/engine checks they agree)
CONFIG_DEFAULTS = {"preset": "embedded", "qdrant_url": None, "qdrant_api_key": None, "tei_url": None,
                   "tei_api_key": None, "reranker_url": None, "max_file_bytes": 1_000_000}


def settings_digest(probe_dir: Path | str, env: dict | None = None) -> str:
    """A digest of this process's backend settings for the workspace whose data dir is ``probe_dir``."""
    env = environment.environ() if env is None else env
    try:
        config = json.loads((Path(probe_dir) / "config.json").read_text("utf-8"))
    except (OSError, ValueError):
        config = {}
    if not isinstance(config, dict):
        config = {}
    chosen = {k: config.get(k, default) for k, default in CONFIG_DEFAULTS.items()}
    blob = json.dumps([[env.get(k, "") for k in SETTING_VARS], chosen], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def differing(probe_dir: Path | str, published: str | None, env: dict | None = None) -> list[str]:
    """Which settings differ from an owner's ``published`` digest: ``[]`` when they agree (or the
    owner published none); else the names set here (values are never shown: they may be keys)."""
    if not published or published == settings_digest(probe_dir, env):
        return []
    env = environment.environ() if env is None else env
    return [k for k in SETTING_VARS if env.get(k)] + ["config.json"]
