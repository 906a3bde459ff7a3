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
        assert app.status["files_indexed"] >= 6  # the fixture (Probe writes no .gitignore into the tree)


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


async def test_setup_arrows_choose_at_once_and_a_never_reapplies_silently(configured_repo):
    """Down works without Tab first, the highlighted preset is the one `a` applies, and `a` (or `e`)
    on the preset the workspace already uses says so instead of setting it up again."""
    config = configured_repo / ".probe" / "config.json"
    before = config.read_bytes()
    app = ProbeApp(configured_repo, engine_settings=FAST_ENGINE, start_engine=False)
    notes: list[str] = []
    notify = app.notify
    app.notify = lambda message, **kw: (notes.append(message), notify(message, **kw))[1]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s")
        screen = app.screen
        await wait_for(pilot, lambda: screen.recommendation is not None, what="the hardware reading")
        presets = screen.query_one("#presets")
        assert app.focused is presets
        assert screen.chosen() == "embedded"  # the workspace's preset
        await pilot.press("a")
        await pilot.press("e")
        await pilot.pause(0.3)
        assert sum("already uses embedded" in m for m in notes) == 2
        assert not screen.busy and config.read_bytes() == before
        await pilot.press("down")
        assert screen.chosen() == "lite"  # the arrow chose it: no Tab, no enter
        await pilot.press("up")
        assert screen.chosen() == "embedded"


async def test_help_lists_each_key_under_the_screen_where_it_works(configured_repo):
    from probe_tui.screens.help import help_text

    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        text = help_text(app)
        everywhere = text.split("[b]Everywhere[/]")[1].split("\n\n")[0]
        assert "full scan" not in everywhere and "run every check" not in everywhere  # dashboard's, doctor's
        assert "Quit" in everywhere and "Help" in everywhere and "command palette" in everywhere
        sections = {block.split("\n")[0]: block for block in text.split("\n\n")}
        assert "full scan" in sections["[b]Index[/]"] and "run every check" in sections["[b]Doctor[/]"]
        assert "[b]del[/]" in sections["[b]Memory[/]"] and "read the list again" in sections["[b]Libraries[/]"]
        await pilot.press("question_mark")
        assert "run every check again" in str(app.screen.query_one("Static").render())
