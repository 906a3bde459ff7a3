"""The settings digest an owner publishes: what changes it, and what must not."""
from __future__ import annotations

import json

from probe_core.config import WorkspaceConfig
from probe_core.engine.settings_digest import CONFIG_DEFAULTS, differing, settings_digest


def test_defaults_agree_with_the_config_class():
    cfg = WorkspaceConfig()
    assert {k: getattr(cfg, k) for k in CONFIG_DEFAULTS} == CONFIG_DEFAULTS


def test_backend_settings_change_the_digest_and_other_keys_do_not(tmp_path):
    env = {"PATH": "/bin"}
    bare = settings_digest(tmp_path, env)
    # a first run writes config.json with every key at its default, plus identity: nothing changed
    (tmp_path / "config.json").write_text(json.dumps({**WorkspaceConfig().to_json(), "project_id": "x"}))
    assert settings_digest(tmp_path, env) == bare
    assert differing(tmp_path, bare, env) == [] and differing(tmp_path, None, {"QDRANT_URL": "u"}) == []
    assert differing(tmp_path, bare, {**env, "QDRANT_URL": "http://h:6333"}) == ["QDRANT_URL", "config.json"]
    assert settings_digest(tmp_path, {**env, "PROBE_LSP": "1", "PROBE_DAEMON_IDLE_S": "5"}) == bare
    (tmp_path / "config.json").write_text(json.dumps({"preset": "lite"}))
    assert settings_digest(tmp_path, env) != bare
