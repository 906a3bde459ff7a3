"""What the app's frame promises holds on every screen (issue 19): each screen key works everywhere,
one-line status texts are cut with "…" at 80 columns, and the dashboard names the process it is
attached to. Textual Pilot on the real app."""
from __future__ import annotations

import pytest
from textual.geometry import Region

from probe_tui.app import ProbeApp
from probe_tui.screens.doctor import DoctorScreen
from probe_tui.screens.memory import MemoryScreen
from probe_tui.screens.search import SearchScreen
from probe_tui.widgets.topbar import SCREENS, TopBar

from .conftest import FAST_ENGINE, wait_for

pytestmark = pytest.mark.asyncio


def line_of(widget) -> str:
    """The widget's first line as drawn (its own width, cut as the app cuts it)."""
    return widget.render_lines(Region(0, 0, widget.size.width, 1))[0].text


async def test_every_screen_key_works_on_every_screen(configured_repo):
    """On search `m` was the mode (memory had no key there); on memory and libraries `d` removed
    (the doctor had none): now no screen binds another screen's key, and the top line shows them all."""
    app = ProbeApp(configured_repo, start_engine=False)
    screen_keys = {key for _, key, _, _ in SCREENS}
    for mode, factory in app.MODES.items():
        own = {key for m, key, _, _ in SCREENS if m == mode}
        keys = {k.strip() for b in factory.BINDINGS for k in b.key.split(",")}
        assert not (keys & screen_keys) - own, (mode, keys & screen_keys)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash")
        assert isinstance(app.screen, SearchScreen)
        assert not app.screen.query_one(TopBar).shadowed
        await pilot.press("escape", "m")  # from the query box to the results, then memory
        await wait_for(pilot, lambda: isinstance(app.screen, MemoryScreen), what="the memory screen")
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DoctorScreen), what="the doctor from memory")
        await pilot.press("l", "d")
        await wait_for(pilot, lambda: isinstance(app.screen, DoctorScreen), what="the doctor from libraries")


async def test_one_line_status_texts_end_with_an_ellipsis_at_80_columns(configured_repo):
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("l")
        summary = app.screen.query_one("#libraries-summary")
        await wait_for(pilot, lambda: "no libraries yet" in line_of(summary), what="the libraries hint")
        assert line_of(summary).rstrip().endswith("…")  # was "…reStructuredText, " with no sign of the cut
        await pilot.press("slash")
        screen = app.screen
        screen._show_answer({"status": "uncertain", "results": [], "took_ms": 5.0, "mode": "auto",
                             "index_generation": 1, "message": "dense vectors cover 56% of chunks; the others "
                             "are found by lexical (BM25) matching until embedding finishes"})
        await pilot.pause()
        info = line_of(screen.query_one("#search-info"))
        assert "dense vectors cover 56% of" in info and info.rstrip().endswith("…")


async def test_the_dashboard_names_the_owner_it_is_attached_to(configured_repo):
    """The label said "attached to the running probe mcp" whatever owned the index."""
    from probe_core.engine.lock import EngineLock
    from probe_core.engine.service import OwnerEngine

    lock = EngineLock(configured_repo / ".probe")
    assert lock.try_acquire()
    owner = OwnerEngine(configured_repo, FAST_ENGINE, kind="daemon").start()
    try:
        app = ProbeApp(configured_repo, engine_settings=FAST_ENGINE)
        async with app.run_test(size=(80, 24)) as pilot:
            phase = app.screen.query_one("#phase")
            await wait_for(pilot, lambda: "attached" in str(phase.render()), what="the attached dashboard")
            assert f"attached to the running Probe daemon (pid {owner_pid()})" in str(phase.render())
    finally:
        owner.close()
        lock.release()


def owner_pid() -> int:
    import os

    return os.getpid()  # the owner runs in this test's process
