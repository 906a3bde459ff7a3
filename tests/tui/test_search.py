"""The search screen on a real indexed repository: type, see results, move, the preview follows."""
from __future__ import annotations

import pytest

from probe_tui.app import ProbeApp
from probe_tui.screens.file_view import FileViewScreen
from probe_tui.screens.search import SearchScreen

from .conftest import FAST_ENGINE, index_settled, wait_for

pytestmark = pytest.mark.asyncio


async def test_type_query_results_move_and_preview(configured_repo):
    app = ProbeApp(configured_repo, engine_settings=FAST_ENGINE)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: index_settled(app), what="the first index")
        await pilot.press("slash")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await pilot.press(*"hash a password with salt")
        await wait_for(pilot, lambda: screen.results, what="results")
        assert screen.results[0]["path"] == "src/auth/passwords.py"
        await wait_for(pilot, lambda: screen.preview_source is not None, what="the preview")
        first = screen.preview_source
        assert first.startswith("src/auth/passwords.py#L")
        info = str(screen.query_one("#search-info").render())
        assert "results" in info and "ms" in info

        await pilot.press("enter")  # from the query box: to the results list
        await pilot.press("j")
        await wait_for(pilot, lambda: screen.preview_source != first, what="the preview to follow the cursor")
        second = screen.results[1]
        assert screen.preview_source == f"{second['path']}#L{second['start_line']}-L{second['end_line']}"
        await pilot.press("k")
        await wait_for(pilot, lambda: screen.preview_source == first, what="the preview to come back")

        await pilot.press("enter")  # open the whole range
        await wait_for(pilot, lambda: isinstance(app.screen, FileViewScreen), what="the file view")
        view = app.screen
        await wait_for(pilot, lambda: "of " in str(view.query_one("#file-title").render()), what="file lines")
        await pilot.press("escape")
        assert app.screen is screen


async def test_mode_toggle_and_filters(configured_repo):
    app = ProbeApp(configured_repo, engine_settings=FAST_ENGINE)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: index_settled(app), what="the first index")
        await pilot.press("slash")
        screen = app.screen
        await pilot.press(*"router handler", "enter")
        await wait_for(pilot, lambda: screen.last_answer is not None, what="an answer")
        assert screen.mode == "auto"
        await pilot.press("o")
        assert screen.mode == "fast"
        await wait_for(pilot, lambda: screen.last_answer.get("mode") == "fast", what="a fast answer")
        screen.query_one("#lang").value = "go"
        await wait_for(pilot, lambda: screen.results and all(r["language"] == "go" for r in screen.results),
                       what="go-only results")
        screen.query_one("#lang").clear()
        screen.query_one("#kind").value = "doc"
        await wait_for(pilot, lambda: screen.results and all(r["chunk_kind"] == "doc" for r in screen.results),
                       what="doc-only results")


async def test_a_query_over_the_limit_is_a_one_line_error_not_an_answer(configured_repo):
    """A pasted file as the query: the same bound as the CLI and MCP (probe_core.limits.QUERY),
    said in the info line, and the previous query's results are not left standing under it."""
    from probe_core.limits import QUERY

    app = ProbeApp(configured_repo, engine_settings=FAST_ENGINE)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: index_settled(app), what="the first index")
        await pilot.press("slash")
        screen = app.screen
        await pilot.press(*"hash a password", "enter")
        await wait_for(pilot, lambda: screen.results, what="results")
        screen.query_one("#query").value = "password" * 12_500  # 100,000 characters
        await pilot.press("enter")
        info = screen.query_one("#search-info")
        await wait_for(pilot, lambda: "at most" in str(info.render()), what="the error")
        assert f"query is 100,000 characters; at most {QUERY.high:,} are accepted" in str(info.render())
        assert screen.results == [] and screen.preview_source is None


async def test_the_mode_label_names_the_key_that_cycles_the_mode(configured_repo):
    """The label said "(m)" after the mode key moved to `o` (m is the memory screen's key)."""
    app = ProbeApp(configured_repo, engine_settings=FAST_ENGINE)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: index_settled(app), what="the first index")
        await pilot.press("slash")
        screen = app.screen
        label = str(screen.query_one("#mode").render())
        key = label.rsplit("(", 1)[1].rstrip(")")
        assert label.startswith("mode auto")
        await pilot.press("escape", key)  # to the results list, then the key the label names
        await pilot.pause()
        assert isinstance(app.screen, SearchScreen) and screen.mode == "fast", (label, screen.mode)
