"""Fixtures for the terminal app: a real indexed repository and a Pilot helper that waits on state."""
from __future__ import annotations

import time

import pytest

from probe_core.engine import EngineSettings

# short timers: an edit is picked up a moment after it is written
FAST_ENGINE = EngineSettings(debounce_s=0.2, max_wait_s=2.0, stable_s=0.05, takeover_poll_s=0.1)


async def wait_for(pilot, condition, timeout: float = 60.0, what: str = "condition") -> None:
    """Let the app run until ``condition()`` is true (workers post their messages meanwhile)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.1)


def index_settled(app) -> bool:
    """The first scan is done and every chunk has its dense vector."""
    st = app.status or {}
    return bool(st.get("first_scan_done")) and not st.get("indexing_in_progress") \
        and st.get("chunks_indexed", 0) > 0 and st.get("chunks_embedded") == st.get("chunks_indexed")


@pytest.fixture
def configured_repo(repo):
    """The shared fixture repository with ``.probe/config.json`` (embedded preset) written."""
    from probe_core.config import init_workspace

    init_workspace(repo, preset="embedded")
    return repo
