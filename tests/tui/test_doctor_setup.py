"""Doctor, setup (first run), help, theme and the command palette."""
from __future__ import annotations

import json

import pytest

from probe_tui.app import ProbeApp
from probe_tui.screens.dashboard import DashboardScreen
from probe_tui.screens.doctor import DoctorScreen
from probe_tui.screens.help import HelpScreen
from probe_tui.screens.setup import SetupScreen

from .conftest import FAST_ENGINE, index_settled, wait_for

pytestmark = pytest.mark.asyncio


async def test_doctor_lists_every_check_and_reruns(configured_repo):
    app = ProbeApp(configured_repo, engine_settings=FAST_ENGINE, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("d")
        screen = app.screen
        assert isinstance(screen, DoctorScreen)
        await wait_for(pilot, lambda: screen.checks, what="the checks")
        names = [c.name for c in screen.checks]
        assert {"gpu", "docker", "disk", "bm25_fusion"} <= set(names)
        rows = list(screen.query(".check"))
        assert len(rows) == len(names)
        assert all(r.has_class(f"check-{c.status}") for r, c in zip(rows, screen.checks))
        summary = str(screen.query_one("#doctor-summary").render())
        assert "ok" in summary and "fail" in summary
        first = screen.checks
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.checks is not first, what="the re-run")


async def test_first_run_opens_setup_and_e_sets_up_embedded(repo):
    app = ProbeApp(repo, engine_settings=FAST_ENGINE)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        await wait_for(pilot, lambda: screen.recommendation is not None, what="the hardware reading")
        hardware = str(screen.query_one("#hardware").render())
        assert "Recommended" in hardware and "TEI image" in hardware
        assert screen.recommendation.tei.tag in hardware
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), what="the dashboard")
        config = json.loads((repo / ".probe" / "config.json").read_text())
        assert config["preset"] == "embedded"
        await wait_for(pilot, lambda: index_settled(app), what="the first index")
        assert app.status["files_indexed"] >= 6  # the fixture, plus the .gitignore setup wrote


async def test_stack_preset_without_docker_explains_why(repo, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    app = ProbeApp(repo, engine_settings=FAST_ENGINE)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.recommendation is not None, what="the hardware reading")
        lite = next(b for b in screen.query("RadioButton") if b.name == "lite")
        lite.value = True
        await pilot.press("a")
        log = screen.query_one("#setup-log")
        await wait_for(pilot, lambda: not screen.busy and log.lines, what="the stack attempt")
        text = "\n".join(line.text for line in log.lines)
        assert "TEI image" in text
        assert "✖" in text  # the controller's own error, shown as it is
        assert not (repo / ".probe" / "config.json").exists()


async def test_help_theme_and_palette(configured_repo):
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        dark = app.current_theme.dark
        await pilot.press("t")
        assert app.current_theme.dark is not dark
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert {"Probe: search", "Probe: doctor", "Probe: setup", "Probe: dashboard", "Probe: memory rules",
                "Probe: libraries"} <= set(titles)
