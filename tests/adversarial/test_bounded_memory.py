"""The ``memory`` tool cannot grow without bound: a flood of concurrent ``add`` calls to a real
``probe mcp`` (the MCP SDK's stdio client) stops at the per-scope cap with a clear error, and every
``add`` answer stays the size of one rule however many rules exist (each used to repeat the whole
list: 1.7 MB per answer at 5,900 rules, 20 GB of server memory)."""
from __future__ import annotations

import json

import anyio
import pytest

from probe_core.memory.rules import MAX_RULES, MAX_SCOPE_CHARS

from .conftest import call, probe_mcp, tally

FLOOD = MAX_RULES + 60


@pytest.mark.asyncio
async def test_a_flood_of_concurrent_adds_stops_at_the_cap(repo, tmp_path):
    results: list = []

    async with probe_mcp(repo, PROBE_DATA_DIR=str(tmp_path / "user-data")) as client:
        async def add(i: int) -> None:
            r = await call(client, "memory", {"action": "add", "label": f"r{i}", "content": f"rule number {i} " * 8})
            results.append(r)

        async with anyio.create_task_group() as tg:
            for i in range(FLOOD):
                tg.start_soon(add, i)

        ok = [r for r in results if not r.is_error]
        refused = [r for r in results if r.is_error]
        assert len(ok) == MAX_RULES and len(refused) == FLOOD - MAX_RULES
        assert all("the most it keeps" in r.content[0].text for r in refused), refused[0].content[0].text
        sizes = [len(json.dumps(r.structured_content)) + len(r.content[0].text) for r in ok]
        assert max(sizes) < 2000, max(sizes)  # one rule, never the list
        assert all(r.structured_content["rules"] == [] for r in ok)

        listed = await call(client, "memory", {"action": "list"})
        assert len(listed.structured_content["rules"]) == MAX_RULES
        assert len(listed.content[0].text) < 2 * MAX_SCOPE_CHARS  # the list answer has a ceiling too

        # room by count again, but long rules: the scope's size cap refuses them the same way
        for rule in listed.structured_content["rules"][:30]:  # which adds won the race is arbitrary
            removed = await call(client, "memory", {"action": "remove", "label": rule["label"]})
            assert not removed.is_error, removed.content[0].text
        for n in range(30):
            big = await call(client, "memory", {"action": "add", "label": f"big{n}", "content": "x" * 7990})
            if big.is_error:
                break
        assert big.is_error and f"more than {MAX_SCOPE_CHARS}" in big.content[0].text, big.content[0].text
        # the server still answers everything else
        assert not (await call(client, "index_status")).is_error
    tally("memory adds refused at the cap", len(refused))


def test_store_cannot_create_libraries_without_end(tmp_path, monkeypatch):
    """Each stored library is an index a ``probe mcp`` keeps open (a Qdrant Edge shard); an agent
    inventing a new ``library_name`` per call is stopped at a cap with a clear error (the real
    registry, under its lock)."""
    from probe_core.libraries.manage import MAX_STORED_LIBRARIES, ensure_stored_library
    from probe_core.libraries.registry import LibraryError

    monkeypatch.setenv("PROBE_DATA_DIR", str(tmp_path / "data"))
    for i in range(MAX_STORED_LIBRARIES):
        ensure_stored_library(f"notes-{i}")
    with pytest.raises(LibraryError, match="the most Probe keeps"):
        ensure_stored_library("one-more")
    assert ensure_stored_library("notes-3")[1] is False  # an existing one still takes documents
    tally("stored libraries refused at the cap")
