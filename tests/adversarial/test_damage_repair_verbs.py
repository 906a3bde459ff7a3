"""Damaged index files met by any verb of a running ``probe mcp`` lead to the same repair as a
search that meets them: the answer says a repair is pending, and the owner rebuilds by itself
(real ``probe mcp`` over stdio, MCP SDK client; the periodic rescan is set an hour away, so only
the verb's own report can start the repair)."""
from __future__ import annotations

import random
import sqlite3

import pytest

from .conftest import REPO_FILES, tally, write_tree
from ..mcp.conftest import call, probe_mcp, status, wait_indexed, wait_until


def _garble_table(root, table: str) -> None:
    """Overwrite the root page of ``table`` in the manifest's file (after folding the WAL in), as a
    disk error or a stray write would."""
    manifest = root / ".probe" / "manifest.sqlite"
    db = sqlite3.connect(manifest)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (page,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name=?", (table,)).fetchone()
    db.close()
    rng = random.Random(7)
    with open(manifest, "r+b") as f:
        f.seek((page - 1) * 4096)
        f.write(bytes(rng.getrandbits(8) for _ in range(4096)))


CALLERS = ("find_callers", {"symbol": "hash_password"})
OPEN = ("open_file", {"path": "src/auth/passwords.py", "start_line": 1, "end_line": 3})


async def _said_pending(client, verb: str) -> None:
    if verb == "open_file":
        r = await call(client, *OPEN)
        assert not r.is_error, r.content[0].text  # the lines are still the answer
        out = r.structured_content
        assert out["index_state"] == "damaged" and "repair pending" in out["message"], out
    elif verb == "find_callers":
        r = await call(client, *CALLERS)
        assert r.is_error and "damaged" in r.content[0].text and "repair pending" in r.content[0].text, \
            r.content[0].text
    else:
        st = await status(client)
        assert st["index_damaged"] is True and "repair pending" in st["last_error"], st


@pytest.mark.asyncio
@pytest.mark.parametrize("verb,table", [("open_file", "files"), ("find_callers", "graph_symbols"),
                                        ("index_status", "files")])
async def test_damage_met_by_any_verb_is_repaired_by_the_owner(tmp_path, verb, table):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    async with probe_mcp(root, PROBE_RESCAN_S="3600") as client:
        await wait_indexed(client)
        assert not (await call(client, *CALLERS)).is_error  # the graph is built
        _garble_table(root, table)
        await _said_pending(client, verb)

        async def repaired():
            st = await status(client)
            if st.get("index_damaged") or st.get("indexing_in_progress"):
                return None
            opened, callers = await call(client, *OPEN), await call(client, *CALLERS)
            if callers.is_error or opened.structured_content["index_state"] != "current":
                return None
            return callers.structured_content

        found = await wait_until(repaired, timeout=90, interval=0.5, what="the owner to rebuild the index")
        assert any(x["path"] == "tests/test_passwords.py" for x in found["items"]), found
    tally("damaged-index cases repaired by a running owner")
