"""``probe index`` as the workspace's owner (``engine/foreground.py``): its status, and the command waiting on it."""
from __future__ import annotations

import pytest

from probe_cli.index_verbs import _follow_here
from probe_core.engine.foreground import ForegroundIndex
from probe_core.errors import ProbeError


class _View:
    def update(self, _progress) -> None:
        pass


def test_a_root_moved_away_ends_the_wait_with_its_reason(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    engine = ForegroundIndex(root)  # not started: the test plays the worker's root check itself
    root.rename(tmp_path / "moved")
    assert engine._root_left()  # what the worker asks on every turn; the worker then stops for good
    failure = engine.failure()
    assert isinstance(failure, ProbeError) and "no longer exists" in str(failure)
    with pytest.raises(ProbeError, match="no longer exists"):  # it waited for ever (dense never done)
        _follow_here(engine, _View(), lexical_only=False)


def test_its_status_says_why_nothing_watches(tmp_path, monkeypatch):
    monkeypatch.delenv("PROBE_WATCH", raising=False)
    engine = ForegroundIndex(tmp_path)  # not started: the status of an owner still opening
    st = engine.index_status()
    assert st["owner_kind"] == "index" and st["watcher_running"] is False
    # it said "disabled (PROBE_WATCH=0)", which nobody had set (the app shows it under Watcher)
    assert "PROBE_WATCH" not in st["watcher_error"] and "probe index" in st["watcher_error"]
