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


@pytest.fixture
def rules_app(configured_repo):
    """No engine: the memory and libraries screens read their own stores."""
    from probe_core.memory.rules import RuleStore

    store = RuleStore(configured_repo)
    store.add("be-terse", "Answer tersely; no summaries of what you did.", "global", title="Style", tags="tone")
    store.add("use-uv", "Run Python only through `uv run`; never pip install into the system interpreter.",
              title="Tooling", tags=["tooling", "python"])
    store.add("no-mocks", "Tests use real parts: no mocks of things that can run here.")
    return ProbeApp(configured_repo, masked=True, start_engine=False)


def test_memory_snapshot(rules_app, snap_compare):
    async def run_before(pilot):
        await pilot.press("m")
        await wait_for(pilot, lambda: pilot.app.screen.loaded, what="the rules")
        await pilot.press("down")
        await pilot.pause(0.3)

    assert snap_compare(rules_app, terminal_size=SIZE, run_before=run_before)


def test_memory_form_error_light_snapshot(rules_app, snap_compare):
    async def run_before(pilot):
        await pilot.press("t", "m")
        await wait_for(pilot, lambda: pilot.app.screen.loaded, what="the rules")
        await pilot.press("a")
        await pilot.pause()
        form = pilot.app.screen
        await pilot.press(*"Use_UV")
        form.query_one("#field-content").text = "Run Python only through uv run."
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: form.error is not None, what="the error")
        form.query_one("#form-save").focus()  # as after a click on Save: no blinking text cursor in the picture
        await pilot.pause(0.3)

    assert snap_compare(rules_app, terminal_size=SIZE, run_before=run_before)


def test_libraries_snapshot(configured_repo, snap_compare):
    from probe_core.libraries import add_library, index_library

    add_library(configured_repo / "docs", "guide")
    index_library("guide")
    add_library(configured_repo / "config", "settings", mode="incremental")  # registered, not indexed yet
    app = ProbeApp(configured_repo, masked=True, start_engine=False)

    async def run_before(pilot):
        await pilot.press("l")
        await wait_for(pilot, lambda: pilot.app.screen.loaded, what="the libraries")
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
