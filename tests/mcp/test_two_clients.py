"""Two agents, one repository: both `probe mcp` processes answer, exactly one indexes."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import asynccontextmanager

import anyio
import pytest

from .conftest import assert_index_exact, call, probe_mcp, search, status, wait_indexed, wait_until

QUERY = "hash a password with a salt"


@asynccontextmanager
async def two_servers(repo, **env):
    """Start two `probe mcp` processes on ``repo`` at the same moment; yield their clients."""
    clients: dict[str, object] = {}
    ready = {name: anyio.Event() for name in ("a", "b")}
    stop = anyio.Event()

    async def session(name):
        try:
            async with probe_mcp(repo, **env) as client:
                clients[name] = client
                ready[name].set()
                await stop.wait()
        except Exception:  # a server we killed on purpose ends its transport abruptly
            if name in clients:
                clients[name] = None
            ready[name].set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(session, "a")
        tg.start_soon(session, "b")
        with anyio.fail_after(60):
            for ev in ready.values():
                await ev.wait()
        try:
            yield clients["a"], clients["b"]
        finally:
            stop.set()


def owner_first(pair, statuses):
    (ca, sa), (cb, sb) = zip(pair, statuses, strict=True)
    return ((ca, sa), (cb, sb)) if sa["role"] == "owner" else ((cb, sb), (ca, sa))


@pytest.mark.asyncio
async def test_two_servers_one_indexer_both_correct(repo):
    async with two_servers(repo) as (a, b):
        sa, sb = await status(a), await status(b)
        assert {sa["role"], sb["role"]} == {"owner", "attached"}
        assert sa["owner_pid"] == sb["owner_pid"] and sa["pid"] != sb["pid"]
        (owner, so), (attached, st) = owner_first((a, b), (sa, sb))
        assert so["pid"] == so["owner_pid"] and st["pid"] != st["owner_pid"]
        await wait_indexed(owner)
        assert (await status(attached))["indexing_in_progress"] is False

        errors: list[str] = []
        searches = {"owner": 0, "attached": 0}

        async def hammer(name, client, until):
            while not until.is_set():
                r = await call(client, "search", {"query": QUERY, "top_k": 3})
                if r.is_error:
                    errors.append(r.content[0].text)
                elif r.structured_content["results"][0]["path"] != "src/auth/passwords.py":
                    errors.append(f"{name}: wrong top result {r.structured_content['results'][0]['path']}")
                searches[name] += 1
                await anyio.sleep(0.05)

        headers = repo / "src/http/headers.py"
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(hammer, "owner", owner, done)
            tg.start_soon(hammer, "attached", attached, done)
            await anyio.sleep(0.5)
            headers.write_text(headers.read_text() + "\n\ndef parse_cookie_jar(header):\n"
                               "    return [p.strip() for p in header.split(';')]\n")

            for client in (owner, attached):
                async def visible(client=client):
                    out = await search(client, "parse_cookie_jar", top_k=3)
                    return any(h["path"] == "src/http/headers.py" and "parse_cookie_jar" in h["snippet"]
                               for h in out["results"])

                await wait_until(visible, timeout=60, what="the edit on both servers")
            done.set()
        assert not errors, errors[:3]
        assert searches["owner"] > 3 and searches["attached"] > 3

        same = [await search(c, "route a request to the registered handler", top_k=5) for c in (owner, attached)]
        assert [h["source"] for h in same[0]["results"]] == [h["source"] for h in same[1]["results"]]
        opened = [(await call(c, "open_file", {"path": "src/http/headers.py"})).structured_content
                  for c in (owner, attached)]
        assert opened[0] == opened[1]

        so, st = await status(owner), await status(attached)
        assert so["role"] == "owner" and st["role"] == "attached" and so["scans_completed"] >= 2
        owner_pid = so["pid"]

    # exactly one process indexed: every scan in the shared log came from the owner
    log_lines = (repo / ".probe" / "logs" / "probe-mcp.log").read_text().splitlines()
    scans = [ln for ln in log_lines if " probe.engine: scan (" in ln]
    assert scans and all(f" {owner_pid} " in ln for ln in scans), scans
    assert not any("IndexLocked" in ln or "WouldBlock" in ln for ln in log_lines)
    assert_index_exact(repo)


@pytest.mark.asyncio
async def test_owner_killed_attached_takes_over(repo):
    async with two_servers(repo) as (a, b):
        sa, sb = await status(a), await status(b)
        (owner, so), (attached, st) = owner_first((a, b), (sa, sb))
        await wait_indexed(owner)
        attached_pid = st["pid"]

        os.kill(so["pid"], signal.SIGKILL)
        t0 = time.monotonic()
        out = await search(attached, QUERY, top_k=3)  # no error: it waits for, or becomes, the owner
        print(f"\nsearch answered {time.monotonic() - t0:.1f} s after the owner was killed")
        assert out["results"][0]["path"] == "src/auth/passwords.py"
        now = await status(attached)
        assert now["role"] == "owner" and now["pid"] == attached_pid == now["owner_pid"]

        # the new owner watches and indexes
        (repo / "docs/ops.md").write_text("# Operations\n\nRotate the frobnicator keys every quarter.\n")

        async def visible():
            res = await search(attached, "rotate frobnicator keys", top_k=3)
            return res["results"] and res["results"][0]["path"] == "docs/ops.md"

        await wait_until(visible, timeout=60, what="a change indexed by the new owner")
        await wait_indexed(attached)
    assert_index_exact(repo)


@pytest.mark.asyncio
async def test_cli_attaches_to_a_running_server(repo):
    probe = [sys.executable, "-m", "probe_cli"]

    def run(*args):
        return subprocess.run([*probe, *args, "--root", str(repo)], capture_output=True, text=True, timeout=120)

    async with probe_mcp(repo) as client:
        await wait_indexed(client)
        owner_pid = (await status(client))["pid"]
        cli = await anyio.to_thread.run_sync(run, "search", QUERY, "--json", "--top-k", "5", "--max-tokens", "6000")
        assert cli.returncode == 0, cli.stderr
        import json

        data = json.loads(cli.stdout)
        mcp = await search(client, QUERY, top_k=5)
        assert [h["source"] for h in data["results"]] == [h["source"] for h in mcp["results"]]
        assert data["results"][0]["snippet"] == mcp["results"][0]["snippet"]
        st = await anyio.to_thread.run_sync(run, "status", "--json")
        assert st.returncode == 0, st.stderr
        st = json.loads(st.stdout)
        assert st["role"] == "attached" and st["owner_pid"] == owner_pid and st["files_indexed"] == 6
        human = await anyio.to_thread.run_sync(run, "search", QUERY)
        assert human.returncode == 0 and "src/auth/passwords.py#L" in human.stdout
    # with no server running the CLI answers by itself, the same way
    cli = run("search", QUERY, "--json", "--top-k", "5", "--max-tokens", "6000")
    assert cli.returncode == 0, cli.stderr
    import json

    assert [h["source"] for h in json.loads(cli.stdout)["results"]] == [h["source"] for h in mcp["results"]]
    assert json.loads(run("status", "--json").stdout)["role"] == "direct"


@pytest.mark.asyncio
async def test_cli_index_asks_the_running_server_to_rescan(repo):
    """`probe index` while `probe mcp` owns the index: the owner scans (here with its watcher off,
    so only that request can pick the new file up); `--rebuild` is refused, the index untouched."""
    import json

    probe = [sys.executable, "-m", "probe_cli"]

    def run(*args):
        return subprocess.run([*probe, *args, "--root", str(repo)], capture_output=True, text=True, timeout=180)

    async with probe_mcp(repo, PROBE_WATCH="0") as client:
        await wait_indexed(client)
        owner_pid = (await status(client))["pid"]
        (repo / "src" / "ledger.py").write_text("def reconcile_ledger_entries(entries):\n    return sorted(entries)\n")
        out = await anyio.to_thread.run_sync(run, "index", "--json")
        assert out.returncode == 0, out.stderr
        report = json.loads(out.stdout)
        assert report["owner_pid"] == owner_pid and report["files_indexed"] == 1 and report["files_unchanged"] == 6
        hits = await search(client, "reconcile ledger entries", top_k=3)
        assert hits["results"][0]["path"] == "src/ledger.py"

        human = await anyio.to_thread.run_sync(run, "index")
        assert human.returncode == 0 and f"pid {owner_pid}" in human.stdout and "indexed 0 files" in human.stdout

        rebuilt = await anyio.to_thread.run_sync(run, "index", "--rebuild")
        assert rebuilt.returncode != 0 and "--rebuild needs the index to itself" in rebuilt.stderr
        assert f"probe mcp` (pid {owner_pid}" in rebuilt.stderr  # names the editor's server, not a guess
        assert (await search(client, "reconcile ledger entries", top_k=3))["results"][0]["path"] == "src/ledger.py"
    assert_index_exact(repo)


def _many_files(root, n):
    for i in range(n):
        p = root / f"pkg{i % 10}" / f"mod_{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f'"""Module {i}."""\n\n\ndef compute_{i}(value):\n    return value * {i}\n\n\n'
                     f"class Worker{i}:\n    def run(self, job):\n        return compute_{i}(job)\n")
    return root


def _manifest_files(db) -> int:
    import sqlite3

    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2)
        try:
            return con.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


@pytest.mark.asyncio
async def test_clients_while_a_blocking_index_runs_are_served_by_it(tmp_path):
    """A blocking `probe index` is the workspace's owner and serves the others while it indexes:
    `probe status` from another process shows its progress, `probe search` answers (lexically
    meanwhile), a second `probe index` follows it to the end, and a `probe mcp` started meanwhile
    attaches to it, then takes the index over once it exits. (Before, each of them was told
    "probe index (pid N) is indexing this workspace; try again when it finishes".)"""
    import json

    root = _many_files(tmp_path / "repo", 600)
    probe = [sys.executable, "-m", "probe_cli"]

    def run(*args):
        return subprocess.run([*probe, *args, "--root", str(root)], capture_output=True, text=True, timeout=120)

    indexer = subprocess.Popen([*probe, "index", "--root", str(root), "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    second = None
    try:
        deadline = time.monotonic() + 60
        while _manifest_files(root / ".probe" / "manifest.sqlite") < 10:
            assert indexer.poll() is None, indexer.stderr.read().decode()[-500:]
            assert time.monotonic() < deadline, "the indexer never started writing"
            time.sleep(0.01)
        out = await anyio.to_thread.run_sync(run, "status", "--json")
        assert out.returncode == 0, out.stderr
        st = json.loads(out.stdout)
        assert st["owner_pid"] == indexer.pid and st["owner_kind"] == "index" and st["indexing_in_progress"]
        assert st["progress"]["files_total"] == 600
        human = await anyio.to_thread.run_sync(run, "status")
        assert f"probe index pid {indexer.pid}" in human.stdout and "progress" in human.stdout
        found = await anyio.to_thread.run_sync(run, "search", "class Worker17 run job", "--json")
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"]
        second = subprocess.Popen([*probe, "index", "--root", str(root), "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        async with probe_mcp(root, PROBE_ATTACH_TIMEOUT_S="1") as client:
            r = await call(client, "index_status")
            assert not r.is_error, r.content[0].text
            assert r.structured_content["role"] == "attached" and r.structured_content["owner_pid"] == indexer.pid
            assert not (await call(client, "search", {"query": "compute value"})).is_error
            assert indexer.poll() is None, "the indexer finished too early for this test to mean anything"
            assert await anyio.to_thread.run_sync(lambda: indexer.wait(timeout=300)) == 0
            assert await anyio.to_thread.run_sync(lambda: second.wait(timeout=300)) == 0, second.stderr.read()

            async def owner():  # the lock is free: the waiting server takes the index over
                r = await call(client, "index_status")
                return not r.is_error and r.structured_content["role"] == "owner"

            await wait_until(owner, timeout=60, what="the server to become the owner")
            st = await wait_indexed(client)
            assert st["files_indexed"] == 600
            hits = await search(client, "class Worker17 run job", top_k=3)
            assert any(h["path"] == "pkg7/mod_17.py" for h in hits["results"])
    finally:
        for proc in (indexer, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert_index_exact(root)
