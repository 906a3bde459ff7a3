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


async def fill(pilot, form, name: str, text: str, *, append: bool = False) -> None:
    """Type ``text`` into the form field ``name`` the way a user would: focus it, then keys.

    Focusing a one-line field selects its text, so typing replaces it; ``append`` types after it."""
    field = form.query_one(f"#field-{name}")
    field.focus()
    await pilot.pause()
    if append:
        await pilot.press("end")
    await pilot.press(*[{" ": "space", ",": "comma", ".": "full_stop"}.get(c, c) for c in text])
