"""SVG snapshots of every screen at 80×24 on the real fixture repository, once it is fully indexed.

``masked=True`` replaces timings, rates and the temporary root with placeholders, so the pictures
only change when the UI does. Update them with ``uv run pytest tests/tui --snapshot-update``.
The doctor and setup screens show this machine's GPU reading; Docker is pointed at a socket that
does not exist so every machine reads "no engine".
"""
from __future__ import annotations

import pytest

from probe_tui.app import ProbeApp

from .conftest import FAST_ENGINE, index_settled, wait_for

SIZE = (80, 24)


@pytest.fixture
def app(configured_repo, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    return ProbeApp(configured_repo, masked=True, engine_settings=FAST_ENGINE)


async def settled(pilot) -> None:
    await wait_for(pilot, lambda: index_settled(pilot.app), what="the first index")
    await pilot.pause(1.2)  # two more status ticks: the widgets show the settled state


def test_dashboard_snapshot(app, snap_compare):
    assert snap_compare(app, terminal_size=SIZE, run_before=settled)


def test_search_snapshot(app, snap_compare):
    async def run_before(pilot):
        await settled(pilot)
        await pilot.press("slash")
        screen = pilot.app.screen
        await pilot.pause()
        # one file's hits: near-tied dense scores elsewhere may swap places between index builds
        screen.query_one("#lang").value = "python"
        screen.query_one("#kind").value = "test"
        await pilot.press(*"password roundtrip", "enter")
        await wait_for(pilot, lambda: screen.preview_source is not None, what="the preview")
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_file_view_snapshot(app, snap_compare):
    async def run_before(pilot):
        await settled(pilot)
        await pilot.press("slash")
        screen = pilot.app.screen
        screen.query_one("#lang").value = "go"
        await pilot.press(*"mux serve http", "enter")
        await wait_for(pilot, lambda: screen.preview_source is not None, what="the preview")
        await pilot.press("enter")
        await pilot.pause(0.5)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_doctor_snapshot(app, snap_compare):
    async def run_before(pilot):
        await settled(pilot)
        await pilot.press("d")
        await wait_for(pilot, lambda: pilot.app.screen.checks, what="the checks")
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_setup_snapshot(app, snap_compare):
    async def run_before(pilot):
        await settled(pilot)
        await pilot.press("s")
        await wait_for(pilot, lambda: pilot.app.screen.recommendation is not None, what="the hardware")
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help_light_snapshot(app, snap_compare):
    async def run_before(pilot):
        await settled(pilot)
        await pilot.press("t", "question_mark")
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
