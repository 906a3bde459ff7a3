"""`probe status` answered by an owner that has not opened the index yet says so, instead of a
column of "None" (the owner knows its root and its schedule, nothing of the index yet)."""
from __future__ import annotations

from probe_cli.render import print_status
from probe_core.engine.service import OwnerEngine
from probe_core.engine.settings import EngineSettings


def test_status_of_an_owner_still_opening_names_its_state(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PROBE_WATCH", "0")
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    engine = OwnerEngine(tmp_path, EngineSettings.from_env(), serve_rpc=False)  # not started: not open
    try:
        status = engine.index_status()
    finally:
        engine.close()
    assert "index_generation" not in status and status["owner_pid"]
    print_status(status)
    out = capsys.readouterr().out
    assert "opening the index" in out
    assert "None" not in out
    assert str(tmp_path) in out
