"""The libraries screen on the real registry: add a folder (indexed), remove it, bad paths refused."""
from __future__ import annotations

import pytest

from probe_core.libraries import add_library, list_libraries
from probe_tui.app import ProbeApp
from probe_tui.screens.confirm import ConfirmScreen
from probe_tui.screens.form import FormScreen
from probe_tui.screens.libraries import LibrariesScreen

from .conftest import fill, wait_for

pytestmark = pytest.mark.asyncio


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "team-docs"
    folder.mkdir()
    (folder / "deploy.md").write_text("# Deploying\n\nRoll out with a canary first, then the rest.\n", "utf-8")
    return folder


async def open_libraries(pilot) -> LibrariesScreen:
    await pilot.press("l")
    screen = pilot.app.screen
    assert isinstance(screen, LibrariesScreen)
    await wait_for(pilot, lambda: screen.loaded, what="the libraries")
    return screen


async def open_form(pilot) -> FormScreen:
    await pilot.press("a")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, FormScreen), what="the form")
    return pilot.app.screen


def names(screen: LibrariesScreen) -> list[str]:
    table = screen.query_one("#libraries")
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


async def test_add_a_folder_it_is_listed_and_indexed(configured_repo, docs):
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_libraries(pilot)
        assert names(screen) == []
        form = await open_form(pilot)
        await fill(pilot, form, "path", str(docs))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is screen, what="the form to close")
        assert names(screen) == ["team-docs"]  # the folder's name, by default
        await wait_for(pilot, lambda: screen.indexed, what="the index run")
        await wait_for(pilot, lambda: screen.libraries and screen.libraries[0]["files"] == 1, what="the counts")
        row = screen.query_one("#libraries").get_row_at(0)
        assert [str(c) for c in row[:6]] == ["team-docs", "folder", "sync", "1", "0",
                                             str(screen.libraries[0]["chunks"])]
        assert "1 file · " in str(screen.query_one("#library-detail").render())

    (entry,) = list_libraries()
    assert (entry["name"], entry["kind"], entry["mode"], entry["path"]) == ("team-docs", "folder", "sync", str(docs))
    assert entry["files"] == 1 and entry["chunks"] >= 1


async def test_add_with_a_name_and_incremental_mode(configured_repo):
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_libraries(pilot)
        form = await open_form(pilot)
        await fill(pilot, form, "path", "docs")  # relative: to the repository
        await fill(pilot, form, "name", "guide")
        form.query_one("#field-mode").value = "incremental"
        await pilot.click("#form-save")
        await wait_for(pilot, lambda: app.screen is screen and screen.indexed, what="the new library's index")
    (entry,) = list_libraries()
    assert (entry["name"], entry["mode"], entry["path"]) == ("guide", "incremental", str(configured_repo / "docs"))


@pytest.mark.parametrize("path, name, expected", [
    ("/nonexistent/folder", "", "no such folder"),
    ("docs/guide.md", "guide", "is not a folder"),
    ("docs", "Bad Name", "invalid library name"),
])
async def test_bad_input_is_shown_and_nothing_is_registered(configured_repo, path, name, expected):
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_libraries(pilot)
        form = await open_form(pilot)
        await fill(pilot, form, "path", path)
        form.query_one("#field-name").value = name
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: form.error is not None, what="the error")
        assert expected in form.error
        assert expected in str(form.query_one("#form-error").render())
        assert app.screen is form
        await pilot.press("escape")
        assert app.screen is screen and names(screen) == []
    assert list_libraries() == []


async def test_duplicate_name_is_refused(configured_repo, docs):
    add_library(docs, "team-docs")
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_libraries(pilot)
        form = await open_form(pilot)
        await fill(pilot, form, "path", "docs")
        await fill(pilot, form, "name", "team-docs")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: form.error is not None, what="the error")
        assert "already exists" in form.error
    assert [(e["name"], e["path"]) for e in list_libraries()] == [("team-docs", str(docs))]


async def test_remove_asks_first_and_leaves_the_folder(configured_repo, docs):
    add_library(docs, "team-docs")
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_libraries(pilot)
        assert names(screen) == ["team-docs"]
        assert "not indexed yet" in str(screen.query_one("#library-detail").render())
        await pilot.press("delete")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")  # keep it
        assert app.screen is screen and len(list_libraries()) == 1

        await pilot.press("delete")
        loaded = screen.loaded
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.loaded > loaded and not screen.libraries, what="the list after removing")
        assert names(screen) == []
    assert list_libraries() == []
    assert (docs / "deploy.md").exists()


async def test_rescan_indexes_a_registered_library(configured_repo, docs):
    add_library(docs, "team-docs")
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_libraries(pilot)
        assert screen.libraries[0]["files"] is None
        (docs / "rollback.md").write_text("# Rolling back\n\nRevert the release tag.\n", "utf-8")
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.indexed, what="the index run")
        await wait_for(pilot, lambda: screen.libraries[0]["files"] == 2, what="the counts")


async def test_a_broken_pdf_is_counted_and_explained(configured_repo, docs):
    """The failed column and the reason, as `probe library list` shows them."""
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\ngarbage")
    add_library(docs, "team-docs")
    app = ProbeApp(configured_repo, start_engine=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_libraries(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.indexed, what="the index run")
        await wait_for(pilot, lambda: screen.libraries[0]["files"] == 1, what="the counts")
        row = screen.query_one("#libraries").get_row_at(0)
        assert [str(c) for c in row[3:5]] == ["1", "1"]  # files, failed
        detail = str(screen.query_one("#library-detail").render())
        assert "✖ broken.pdf: pdf: cannot read" in detail
