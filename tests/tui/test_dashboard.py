"""The dashboard on a real repository: the first index shows up, and an edit on disk is reflected."""
from __future__ import annotations

import pytest

from probe_tui.app import ProbeApp
from probe_tui.screens.dashboard import DashboardScreen

from .conftest import FAST_ENGINE, index_settled, wait_for

pytestmark = pytest.mark.asyncio


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def test_dashboard_shows_index_and_follows_edits(configured_repo):
    app = ProbeApp(configured_repo, engine_settings=FAST_ENGINE)
    async with app.run_test(size=(80, 24)) as pilot:
        assert isinstance(app.screen, DashboardScreen)
        await wait_for(pilot, lambda: index_settled(app), what="the first index")
        await pilot.pause(0.6)  # one more status tick reaches the widgets
        screen = app.screen
        assert "up to date" in text_of(screen, "#phase")
        files = app.status["files_indexed"]
        assert f"files {files}" in text_of(screen, "#phase")
        assert "reachable" in text_of(screen, "#backend")
        assert "watching" in text_of(screen, "#watcher")
        assert app.engine_role == "owner"
        generation = app.status["index_generation"]

        (configured_repo / "src" / "throttle.py").write_text(
            "def limit_concurrency(n):\n    \"\"\"Run at most n tasks at once.\"\"\"\n    return n\n", "utf-8")
        await wait_for(pilot, lambda: app.status.get("files_indexed") == files + 1, what="the new file to be indexed")
        await wait_for(pilot, lambda: f"files {files + 1}" in text_of(screen, "#phase"), what="the dashboard to show it")
        # the scan that indexed it ends by raising the generation (a scan that changes nothing keeps it)
        await wait_for(pilot, lambda: app.status["index_generation"] > generation, what="a new generation")

        (configured_repo / "docs" / "guide.md").unlink()
        await wait_for(pilot, lambda: f"files {files}" in text_of(screen, "#phase"), what="the deletion")


async def test_rescan_binding_and_errors_panel(configured_repo):
    (configured_repo / "bad.py").write_bytes(b"def f(:\n  pass\n")  # still chunked (text fallback)
    app = ProbeApp(configured_repo, engine_settings=FAST_ENGINE)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: index_settled(app), what="the first index")
        scans = app.status.get("scans_completed", 0)
        await pilot.press("x")
        await wait_for(pilot, lambda: app.status.get("scans_completed", 0) > scans, what="the rescan")
        assert "none" in text_of(app.screen, "#errors")
