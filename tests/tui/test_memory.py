"""The memory screen on real rule stores: add, edit and remove through the form; bad input is refused."""
from __future__ import annotations

import pytest

from probe_core.memory.rules import RuleStore
from probe_tui.app import ProbeApp
from probe_tui.screens.confirm import ConfirmScreen
from probe_tui.screens.form import FormScreen
from probe_tui.screens.memory import MemoryScreen

from .conftest import fill, wait_for

pytestmark = pytest.mark.asyncio


async def open_memory(pilot) -> MemoryScreen:
    await pilot.press("m")
    screen = pilot.app.screen
    assert isinstance(screen, MemoryScreen)
    await wait_for(pilot, lambda: screen.loaded, what="the rules")
    return screen


async def open_form(pilot, key: str) -> FormScreen:
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, FormScreen), what="the form")
    return pilot.app.screen


def rows(screen: MemoryScreen) -> list[tuple[str, str]]:
    table = screen.query_one("#rules")
    return [(str(table.get_row_at(i)[0]), str(table.get_row_at(i)[1])) for i in range(table.row_count)]


async def test_add_a_rule_through_the_form(configured_repo):
    store = RuleStore(configured_repo)
    store.add("be-terse", "Answer tersely.", "global")
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_memory(pilot)
        assert rows(screen) == [("global", "be-terse")]

        form = await open_form(pilot, "a")
        await fill(pilot, form, "label", "use-uv")
        await fill(pilot, form, "title", "Tooling")
        await fill(pilot, form, "tags", "tooling, python")
        await fill(pilot, form, "content", "Run Python only through uv run.")
        loaded = screen.loaded
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is screen and screen.loaded > loaded, what="the list after saving")

        assert rows(screen) == [("global", "be-terse"), ("project", "use-uv")]
        assert screen.selected().label == "use-uv"  # the cursor lands on the new rule
        assert "Run Python only through uv run." in str(screen.query_one("#rule-detail").render())
        rule = next(r for r in store.list() if r.label == "use-uv")
        assert (rule.scope, rule.title, rule.tags, rule.content) == (
            "project", "Tooling", ["tooling", "python"], "Run Python only through uv run.")


async def test_add_a_global_rule(configured_repo):
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_memory(pilot)
        assert rows(screen) == []
        form = await open_form(pilot, "a")
        form.query_one("#field-scope").value = "global"
        await fill(pilot, form, "label", "no-mocks")
        await fill(pilot, form, "content", "Use real parts in tests.")
        await pilot.click("#form-save")
        await wait_for(pilot, lambda: rows(screen) == [("global", "no-mocks")], what="the new rule")
    assert [(r.scope, r.label) for r in RuleStore(configured_repo).list()] == [("global", "no-mocks")]
    assert RuleStore(None).list()[0].content == "Use real parts in tests."  # the user-level store


@pytest.mark.parametrize("label, content, expected", [
    ("Bad_Label", "text", "invalid"),
    ("much-too-long-label", "text", "at most 15"),
    ("use-uv", "   ", "content must not be empty"),
])
async def test_bad_input_is_shown_in_the_form_and_nothing_is_written(configured_repo, label, content, expected):
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_memory(pilot)
        form = await open_form(pilot, "a")
        await fill(pilot, form, "label", label)
        await fill(pilot, form, "content", content)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: form.error is not None, what="the error")
        assert expected in form.error
        assert expected in str(form.query_one("#form-error").render())
        assert app.screen is form  # still open, the input kept for a fix
        assert form.values()["label"] == label
        assert RuleStore(configured_repo).list() == []

        await pilot.press("escape")
        assert app.screen is screen
        assert rows(screen) == []


async def test_duplicate_label_is_refused(configured_repo):
    store = RuleStore(configured_repo)
    store.add("use-uv", "Run Python only through uv run.")
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_memory(pilot)
        form = await open_form(pilot, "a")
        await fill(pilot, form, "label", "use-uv")
        await fill(pilot, form, "content", "something else")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: form.error is not None, what="the error")
        assert "already exists" in form.error
    assert [r.content for r in store.list()] == ["Run Python only through uv run."]


async def test_edit_keeps_scope_and_label_and_updates_the_rest(configured_repo):
    store = RuleStore(configured_repo)
    store.add("be-terse", "Answer tersely.", "global")
    store.add("use-uv", "Run Python only through uv run.", title="Tooling", tags=["tooling"])
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_memory(pilot)
        await pilot.press("down")
        assert screen.selected().label == "use-uv"
        form = await open_form(pilot, "enter")
        assert form.query_one("#field-label").disabled and form.query_one("#field-scope").disabled
        assert form.values() == {"label": "use-uv", "scope": "project", "title": "Tooling", "tags": "tooling",
                                 "content": "Run Python only through uv run."}
        form.query_one("#field-title").value = ""
        await fill(pilot, form, "tags", ", python", append=True)
        form.query_one("#field-content").text = "Run every Python command through uv run."
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is screen, what="the form to close")
        await wait_for(pilot, lambda: "every Python" in str(screen.query_one("#rule-detail").render()),
                       what="the updated rule")

        # edit with an empty content: refused, the rule unchanged
        form = await open_form(pilot, "e")
        form.query_one("#field-content").text = ""
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: form.error is not None, what="the error")
        assert "content must not be empty" in form.error
        await pilot.press("escape")

    rules = {r.label: r for r in store.list()}
    assert rules["use-uv"].title is None
    assert rules["use-uv"].tags == ["tooling", "python"]
    assert rules["use-uv"].content == "Run every Python command through uv run."
    assert rules["be-terse"].content == "Answer tersely."


async def test_remove_asks_first(configured_repo):
    store = RuleStore(configured_repo)
    store.add("be-terse", "Answer tersely.", "global")
    store.add("use-uv", "Run Python only through uv run.")
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_memory(pilot)
        await pilot.press("down", "delete")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # keep it
        assert app.screen is screen
        assert len(store.list()) == 2

        await pilot.press("delete")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: rows(screen) == [("global", "be-terse")], what="the list after removing")
    assert [r.label for r in store.list()] == ["be-terse"]


async def test_scope_filter_and_refresh(configured_repo):
    store = RuleStore(configured_repo)
    store.add("be-terse", "Answer tersely.", "global")
    store.add("use-uv", "Run Python only through uv run.")
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_memory(pilot)
        assert rows(screen) == [("global", "be-terse"), ("project", "use-uv")]
        await pilot.press("p")
        assert rows(screen) == [("project", "use-uv")]
        await pilot.press("g")
        assert rows(screen) == [("global", "be-terse")]
        await pilot.press("g")  # again: everything
        assert len(rows(screen)) == 2

        store.add("no-mocks", "Use real parts in tests.")  # another process writes
        loaded = screen.loaded
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.loaded > loaded, what="the refresh")
        assert rows(screen)[-1] == ("project", "no-mocks")
        assert "1 global · 2 project" in str(screen.query_one("#memory-summary").render())
