"""Reference libraries through the real stdio client: `store` then `search(include_libraries)`, folder
libraries picked up, watched and removed while the server runs, and bad input refused with nothing
written."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from probe_core.libraries import add_library, list_libraries, remove_library

from ..libraries.test_library_pdf import make_pdf
from .conftest import call, probe_mcp, search, wait_indexed, wait_until

NOTE = """Zebra crossings in Vienna give pedestrians a green phase of 14 seconds.
The signal timing is recomputed every night from the pedestrian counters."""


def _data_env() -> dict:
    return {"PROBE_DATA_DIR": os.environ["PROBE_DATA_DIR"]}  # the server shares this test's user data dir


def _data_dir() -> Path:
    return Path(os.environ["PROBE_DATA_DIR"])


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.asyncio
async def test_store_then_search_with_include_libraries(repo):
    async with probe_mcp(repo, **_data_env()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools["store"].input_schema["properties"]) == {"content", "library_name", "title", "source", "url"}
        assert tools["store"].output_schema["type"] == "object"
        assert "include_libraries" in tools["search"].input_schema["properties"]
        hit_schema = tools["search"].output_schema["$defs"]["SearchHit"]["properties"]
        assert {"collection", "library_name"} <= set(hit_schema)

        r = await call(client, "store", {"content": NOTE, "library_name": "city-notes", "title": "Vienna crossings",
                                         "url": "https://example.org/crossings"})
        assert not r.is_error, r.content[0].text
        stored = r.structured_content
        assert stored["created"] and stored["library_created"] and stored["chunks_indexed"] >= 1
        assert stored["source"].startswith("library:city-notes/vienna-crossings-")

        # immediately searchable, fused with the project's results
        out = await search(client, "zebra crossing pedestrian green phase seconds", include_libraries=True)
        libs = [x for x in out["results"] if x["collection"] == "libraries"]
        assert libs and libs[0]["library_name"] == "city-notes"
        assert libs[0]["source"].startswith(stored["source"] + "#L")
        assert "14 seconds" in libs[0]["snippet"]
        assert {x["collection"] for x in out["results"]} <= {"project", "libraries"}
        assert all(x["library_name"] is None for x in out["results"] if x["collection"] == "project")
        assert {s["collection"] for s in out["sources"]} == {"project", "libraries"}

        # without libraries: project only; with them: merged by similarity to the query, so the
        # library's only (unrelated) note does not take second place just for being its #1
        await wait_indexed(client)
        plain = await search(client, "hash a password with a salt")
        assert plain["results"] and {x["collection"] for x in plain["results"]} == {"project"}
        both = await search(client, "hash a password with a salt", include_libraries=True, top_k=4)
        assert both["results"][0]["path"] == plain["results"][0]["path"]
        assert [x["collection"] for x in both["results"][:2]] == ["project", "project"]
        scores = [x["score"] for x in both["results"]]
        assert scores == sorted(scores, reverse=True) and "merged by rank" not in (both.get("message") or "")
        # collections=["libraries"]: libraries only
        only = await search(client, "pedestrian counters", filters={"collections": ["libraries"]})
        assert only["results"] and {x["library_name"] for x in only["results"]} == {"city-notes"}

        # the source opens with open_file, from the library's index
        r = await call(client, "open_file", {"path": libs[0]["source"]})
        assert not r.is_error, r.content[0].text
        opened = r.structured_content
        assert opened["collection"] == "libraries" and opened["library_name"] == "city-notes"
        assert "# Vienna crossings" in opened["lines"] and "URL: https://example.org/crossings" in opened["lines"]
        assert any("14 seconds" in line for line in opened["lines"])

        # identical content again: nothing new written
        again = (await call(client, "store", {"content": NOTE, "library_name": "city-notes"})).structured_content
        assert again["created"] is False and again["path"] == stored["path"]
        assert len(list(Path(stored["file"]).parent.glob("*.md"))) == 1

    [lib] = list_libraries()
    assert (lib["name"], lib["kind"], lib["mode"]) == ("city-notes", "stored", "sync")
    assert lib["files"] == 1 and lib["chunks"] >= 1
    assert not (repo / "city-notes").exists() and not list(repo.rglob("vienna-crossings-*"))


@pytest.mark.asyncio
async def test_bad_input_is_a_clear_error_and_nothing_is_written(repo, tmp_path):
    folder = tmp_path / "manual"
    folder.mkdir()
    (folder / "intro.md").write_text("# Intro\n\nThe manual.\n")
    add_library(folder, "manual")
    before = _snapshot(_data_dir())
    async with probe_mcp(repo, **_data_env()) as client:
        cases = [
            ("store", {"content": "", "library_name": "notes"}, "content is empty"),
            ("store", {"content": "   \n\t ", "library_name": "notes"}, "content is empty"),
            ("store", {"content": "text", "library_name": "Bad Name"}, "invalid library name"),
            ("store", {"content": "text", "library_name": "../escape"}, "invalid library name"),
            ("store", {"content": "text", "library_name": ""}, "library name"),
            ("store", {"content": "text", "library_name": "manual"}, "folder library"),
            ("search", {"query": "manual", "filters": {"libraries": ["nope"]}}, "unknown library"),
            ("search", {"query": "manual", "filters": {"collections": []}}, "collections"),
            ("search", {"query": "manual", "filters": {"collections": ["notes"]}}, "libraries"),
            ("open_file", {"path": "library:nope/a.md"}, "unknown library"),
            ("open_file", {"path": "library:manual/missing.md"}, "no such document"),
        ]
        for tool, args, needle in cases:
            r = await call(client, tool, args)
            assert r.is_error, (tool, args)
            text = r.content[0].text
            assert needle in text and "\n" not in text.strip() and "Traceback" not in text, (tool, args, text)
        assert (await search(client, "manual"))["status"] in ("healthy", "uncertain")  # still serving
    after = _snapshot(_data_dir())
    assert json.loads(after["libraries.json"]) == json.loads(before["libraries.json"])
    assert [n for n in after if n.startswith("libraries/") and "/index/" not in n] == []  # no docs written
    assert not (_data_dir() / "libraries" / "notes").exists()
    assert sorted(os.listdir(folder)) == ["intro.md"]  # the folder is only read


@pytest.mark.asyncio
async def test_folder_library_added_while_serving_is_indexed_watched_and_removed(repo, tmp_path):
    folder = tmp_path / "ops-guide"
    (folder / "net").mkdir(parents=True)
    (folder / "backups.md").write_text("# Backups\n\nSnapshots of the volume run at 03:00 with restic.\n")
    (folder / "net" / "dns.html").write_text(
        "<html><head><style>h1{}</style></head><body><h1>Resolvers</h1>"
        "<p>Internal names resolve through unbound on port 5353.</p></body></html>")
    (folder / "tool.py").write_text("def restic_wrapper():\n    pass\n")  # not a document: ignored
    async with probe_mcp(repo, PROBE_LIBRARY_POLL_S="0.2", **_data_env()) as client:
        add_library(folder, "ops", mode="incremental")  # the running server picks it up from the registry

        async def found(query: str, path: str):
            out = await search(client, query, filters={"libraries": ["ops"]})
            return [x for x in out["results"] if x["path"] == f"library:ops/{path}"]

        hits = await wait_until(lambda: found("volume snapshots restic", "backups.md"), timeout=120,
                                what="the new library to be indexed by the server")
        assert hits[0]["collection"] == "libraries" and hits[0]["chunk_kind"] == "doc"
        html = await wait_until(lambda: found("unbound resolver port 5353", "net/dns.html"), timeout=30,
                                what="the HTML page")
        assert html[0]["snippet"].splitlines()[0] == "# Resolvers" and "h1{}" not in html[0]["snippet"]
        out = await search(client, "restic_wrapper", filters={"collections": ["libraries"]})
        assert not [x for x in out["results"] if x["path"].endswith(".py")]

        (folder / "restore.txt").write_text("To restore, mount the snapshot read-only and copy back.\n")
        await wait_until(lambda: found("mount snapshot read-only copy back", "restore.txt"), timeout=60,
                         what="the watcher to index a new document")
        (folder / "runbook.pdf").write_bytes(make_pdf([["Runbook"], ["Failover drains the primary in 90 seconds."]]))
        pdf = await wait_until(lambda: found("failover drains the primary", "runbook.pdf"), timeout=60,
                               what="the watcher to index a new PDF")
        assert "Failover drains the primary in 90 seconds." in pdf[0]["snippet"]
        (folder / "backups.md").unlink()  # incremental: deleted documents stay searchable
        await wait_until(lambda: found("mount snapshot read-only copy back", "restore.txt"), timeout=5)
        status = (await call(client, "index_status")).structured_content
        [lib] = [x for x in status["libraries"] if x["name"] == "ops"]
        assert lib["role"] == "owner" and lib["files"] == 4
        assert await found("volume snapshots restic", "backups.md")
        r = await call(client, "open_file", {"path": "library:ops/backups.md"})
        assert not r.is_error and "no longer in the library folder" in r.structured_content["message"]

        # remove while the server owns it: the server lets go, the index is deleted, the folder stays
        removed = remove_library("ops")
        assert removed["name"] == "ops"
        assert not (_data_dir() / "libraries" / "ops").exists()
        assert sorted(os.listdir(folder)) == ["net", "restore.txt", "runbook.pdf", "tool.py"]
        r = await call(client, "search", {"query": "restic", "filters": {"libraries": ["ops"]}})
        assert r.is_error and "unknown library" in r.content[0].text
