"""Real damage to the derived files under ``.probe/``: garbled manifest pages, a manifest cut to
4 KB, a garbled Qdrant Edge payload page, pieces of the shard deleted. Each is reported (status,
doctor's check, search's one-line error naming the fix), and both ``probe index --rebuild`` and a
plain ``probe index`` end with a working index, through real ``probe`` subprocesses.
"""
from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest

from probe_core.doctor.local_checks import index_files_check

from .conftest import REPO_FILES, probe_cli, tally, write_tree

PAGE = 4096


def _garble(path: Path, pages: range, seed: int = 7) -> None:
    rng = random.Random(seed)
    with open(path, "r+b") as f:
        for p in pages:
            f.seek(p * PAGE)
            f.write(bytes(rng.getrandbits(8) for _ in range(PAGE)))


def _segment(root: Path) -> Path:
    return next((root / ".probe" / "store" / "chunks_embedded" / "segments").iterdir())


def _garble_manifest_pages(root: Path) -> None:
    manifest = root / ".probe" / "manifest.sqlite"
    _garble(manifest, range(2, os.path.getsize(manifest) // PAGE))


def _truncate_manifest(root: Path) -> None:
    os.truncate(root / ".probe" / "manifest.sqlite", PAGE)


def _garble_manifest_header(root: Path) -> None:
    _garble(root / ".probe" / "manifest.sqlite", range(0, 1))


def _garble_payload_page(root: Path) -> None:
    _garble(_segment(root) / "payload_storage" / "page_0.dat", range(0, 16))


def _delete_payload_storage(root: Path) -> None:
    shutil.rmtree(_segment(root) / "payload_storage")


def _delete_bm25_vectors(root: Path) -> None:
    shutil.rmtree(_segment(root) / "vector_storage-bm25")


def _delete_segment_state(root: Path) -> None:
    (_segment(root) / "segment.json").unlink()


DAMAGE = {
    "manifest pages garbled": _garble_manifest_pages,
    "manifest truncated to 4 KB": _truncate_manifest,
    "manifest header garbled": _garble_manifest_header,
    "store payload page garbled": _garble_payload_page,
    "store payload storage deleted": _delete_payload_storage,
    "store BM25 vectors deleted": _delete_bm25_vectors,
    "store segment state deleted": _delete_segment_state,
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("damage") / "pristine", REPO_FILES)
    probe_cli("index", "--lexical-only", "-q", root=root)
    return root


def _copy(indexed: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(indexed, root, symlinks=True)
    return root


def _finds_hash_password(root: Path) -> bool:
    out = probe_cli("search", "hash_password", "--json", root=root)
    return any(r["path"] == "src/auth/passwords.py" for r in json.loads(out.stdout)["results"])


def _reported(root: Path) -> str:
    """Damage is said by search (exit 1, one line naming the fix, no traceback) and then by status."""
    found = probe_cli("search", "hash_password", root=root, check=False)
    assert found.returncode == 1, (found.stdout, found.stderr)
    err = found.stderr.strip().splitlines()[-1]
    assert "damaged" in err and "probe index --rebuild" in err and "internal error" not in err, found.stderr
    assert "Traceback" not in found.stderr
    st = json.loads(probe_cli("status", "--json", root=root).stdout)
    assert st["index_damaged"] is True and "--rebuild" in st["last_error"], st
    assert index_files_check(root).status == "fail"
    return err


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damage_is_reported_and_rebuild_repairs_it(indexed, tmp_path, kind):
    root = _copy(indexed, tmp_path)
    DAMAGE[kind](root)
    _reported(root)
    rebuilt = probe_cli("index", "--rebuild", "--lexical-only", "-q", root=root)
    assert len(rebuilt.stderr.splitlines()) <= 3, rebuilt.stderr  # no traceback spill
    assert _finds_hash_password(root)
    st = json.loads(probe_cli("status", "--json", root=root).stdout)
    assert st["index_damaged"] is False and st["files_indexed"] > 0, st
    assert index_files_check(root).status == "ok"
    tally("damaged-store cases repaired by --rebuild")


@pytest.mark.parametrize("kind", ["manifest pages garbled", "manifest truncated to 4 KB",
                                  "store payload page garbled", "store BM25 vectors deleted"])
def test_a_plain_index_run_repairs_damage_by_itself(indexed, tmp_path, kind):
    root = _copy(indexed, tmp_path)
    DAMAGE[kind](root)
    if kind.startswith("store"):  # store damage shows on a read; the manifest's on the open check
        _reported(root)
    out = probe_cli("index", "--lexical-only", root=root)
    assert "rebuilt from the files" in out.stdout, out.stdout + out.stderr
    assert _finds_hash_password(root)
    tally("damaged-store cases repaired by a plain probe index")


def test_rebuild_works_from_any_state_of_the_probe_dir(indexed, tmp_path):
    """Everything derived gone or garbage at once: the manifest is random bytes, its WAL is junk,
    the shard directory is a file."""
    root = _copy(indexed, tmp_path)
    probe = root / ".probe"
    (probe / "manifest.sqlite").write_bytes(os.urandom(3 * PAGE))
    (probe / "manifest.sqlite-wal").write_bytes(os.urandom(100))
    shutil.rmtree(probe / "store" / "chunks_embedded")
    (probe / "store" / "chunks_embedded").write_text("not a directory")
    probe_cli("index", "--rebuild", "--lexical-only", "-q", root=root)
    assert _finds_hash_password(root)
    tally("damaged-store cases repaired by --rebuild")


@pytest.mark.asyncio
async def test_a_running_owner_repairs_damage_it_meets(tmp_path):
    """A payload page garbled under a running ``probe mcp`` (MCP SDK stdio client): the search that
    meets it is a one-line tool error naming the damage, and the owner rebuilds by itself (the damage
    is recorded, the worker's next scan sees it): searches work again without anyone running a command."""
    from .conftest import call, probe_mcp, search, status, wait_indexed, wait_until

    root = write_tree(tmp_path / "repo", REPO_FILES)
    async with probe_mcp(root) as client:
        await wait_indexed(client)
        _garble_payload_page(root)
        r = await call(client, "search", {"query": "hash_password"})
        assert r.is_error and "damaged" in r.content[0].text, r.content[0].text

        async def repaired():
            st = await status(client)
            if st.get("index_damaged") or st.get("indexing_in_progress"):
                return None
            found = await call(client, "search", {"query": "hash_password"})
            return found if not found.is_error else None

        found = await wait_until(repaired, timeout=180, interval=0.5, what="the owner to rebuild the index")
        assert any(x["path"] == "src/auth/passwords.py" for x in found.structured_content["results"])
        assert not (await search(client, "HeaderParser"))["status"] == "degraded"
    tally("damaged-store cases repaired by a running owner")


def test_damage_in_the_symbol_graph_is_recorded_like_the_manifests(indexed, tmp_path):
    """The graph's tables live in the manifest's file but are read through their own connection:
    a garbled graph page met by ``probe callers`` (the file's clean mark still matching, so no
    open-time check runs) is one line naming the fix, recorded for status, and ``--rebuild`` fixes it."""
    import sqlite3

    root = _copy(indexed, tmp_path)
    assert probe_cli("callers", "hash_password", root=root).returncode == 0  # the graph is built
    manifest = root / ".probe" / "manifest.sqlite"
    probe_cli("status", root=root)  # a clean close after the graph was written
    db = sqlite3.connect(f"file:{manifest}?mode=ro", uri=True)
    (page,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name='graph_symbols'").fetchone()
    db.close()
    stat = manifest.stat()
    _garble(manifest, range(page - 1, page))
    os.utime(manifest, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the clean mark still matches
    out = probe_cli("callers", "hash_password", root=root, check=False)
    assert out.returncode == 1 and "Traceback" not in out.stderr, (out.stdout, out.stderr)
    assert "damaged" in out.stderr and "probe index --rebuild" in out.stderr, out.stderr
    st = json.loads(probe_cli("status", "--json", root=root).stdout)
    assert st["index_damaged"] is True, st  # it was said once, then status called the index healthy
    probe_cli("index", "--rebuild", "--lexical-only", "-q", root=root)
    assert probe_cli("callers", "hash_password", root=root).returncode == 0
    tally("damaged-store cases repaired by --rebuild")


def test_a_status_poll_during_a_rebuild_waits_for_the_wipe(tmp_path, monkeypatch):
    """A running owner's repair rebuilds while clients poll ``index_status`` (a CI run saw a repair
    that never ended). A poll that meets no open manifest in the middle of the rebuild must not open
    the old files about to be deleted: the rebuild would then index into a deleted file and the
    index on disk would stay empty. The poll waits for the wipe and opens the new files."""
    import threading

    from probe_core.indexing.indexer import index_workspace, rebuild
    from probe_core.indexing.status import index_status
    from probe_core.storage import damage
    from probe_core.workspace import Workspace

    root = write_tree(tmp_path / "repo", REPO_FILES)
    ws = Workspace.open(root)
    try:
        indexed = index_workspace(ws, dense=False).chunks_indexed
        assert indexed > 0
        real_wipe, answers = damage.wipe_index, []
        poll = threading.Thread(target=lambda: answers.append(index_status(ws, probe_backend=False)))

        def wipe_while_polled(probe_dir, collection):
            poll.start()
            poll.join(timeout=1.0)  # a poll that is not held back opens the old files now
            return real_wipe(probe_dir, collection)

        monkeypatch.setattr(damage, "wipe_index", wipe_while_polled)
        rebuild(ws)
        poll.join(timeout=30)
        assert answers and not answers[0]["index_damaged"], answers
        assert index_workspace(ws, dense=False).chunks_indexed == indexed
    finally:
        ws.close()
    reopened = Workspace.open(root)
    try:  # what is on disk, read by a fresh open: the rebuilt index, not an empty one
        assert reopened.manifest.counts()["chunks"] == indexed
    finally:
        reopened.close()
