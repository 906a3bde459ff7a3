"""`probe mcp` as agents see it: a subprocess spoken to over stdio by the MCP SDK's own client."""
from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from .conftest import call, probe_mcp, search, server_params, status, wait_indexed, wait_until


@pytest.mark.asyncio
async def test_tools_schemas_and_initialize_time(repo):
    t0 = time.perf_counter()
    async with probe_mcp(repo) as client:
        init_s = time.perf_counter() - t0
        tools = {t.name: t for t in (await client.list_tools()).tools}
        listed_s = time.perf_counter() - t0
        print(f"\nprobe mcp: initialize answered after {init_s:.2f} s (process start included), "
              f"tools/list after {listed_s:.2f} s")
        assert init_s < 10  # generous sanity bound; the target (1.5 s) is measured by benchmarks

        assert set(tools) == {"search", "open_file", "index_status", "map_code", "find_callers", "find_callees",
                              "find_references", "find_implementations", "impact_analysis", "memory", "store"}
        assert "grep" in client.instructions and "open_file" in client.instructions
        from probe_core import package_version

        assert client.server_info.name == "probe" and client.server_info.version == package_version() != ""
        for tool in tools.values():
            assert tool.description and len(tool.description) > 60
            assert tool.output_schema and tool.output_schema.get("type") == "object"
            assert tool.annotations.read_only_hint is (tool.name not in ("memory", "store"))
            for name, prop in tool.input_schema.get("properties", {}).items():
                assert prop.get("description"), f"{tool.name}.{name} has no description"
        s = tools["search"]
        props = s.input_schema["properties"]
        assert set(props) == {"query", "top_k", "mode", "instruction", "filters", "max_tokens", "include_libraries"}
        assert props["top_k"]["default"] == 12 and props["mode"]["default"] == "auto"
        assert s.input_schema["required"] == ["query"]
        assert "grep" in s.description and "source" in s.description and "open_file" in s.description
        out_props = s.output_schema["properties"]
        assert {"results", "status", "message", "truncated"} <= set(out_props)
        signals = s.output_schema["$defs"]["Signals"]["properties"]
        assert {"dense_rank", "bm25_rank", "literal_rank", "identifier_rank", "graph_rank"} <= set(signals)
        assert set(tools["open_file"].input_schema["properties"]) == {"path", "start_line", "end_line"}
        assert {"lines", "file_hash", "mtime"} <= set(tools["open_file"].output_schema["properties"])

        st = await status(client)  # answers at once, whatever the indexer is doing
        assert st["role"] == "owner" and st["pid"] == st["owner_pid"]
        assert {"phase", "files_scanned", "files_total", "chunks_embedded", "chunks_total"} <= set(st["progress"])


@pytest.mark.asyncio
async def test_search_open_file_and_live_changes(repo):
    async with probe_mcp(repo) as client:
        st = await wait_indexed(client)
        assert st["dense_coverage"] == 1.0 and st["watcher_running"] is True and st["backend_reachable"] is True

        t0 = time.perf_counter()
        r = await call(client, "search", {"query": "hash a password with a salt", "top_k": 3})
        latency_ms = (time.perf_counter() - t0) * 1000
        out = r.structured_content
        assert not r.is_error and out["status"] == "healthy"
        top = out["results"][0]
        assert top["path"] == "src/auth/passwords.py"
        assert top["source"] == f"{top['path']}#L{top['start_line']}-L{top['end_line']}"
        assert top["source"] in r.content[0].text  # the text rendering cites it too
        # the exact-match signal travels through the tool's output schema
        quoted = (await search(client, 'where does "random salt using PBKDF2" come from', top_k=3))["results"][0]
        assert quoted["path"] == "src/auth/passwords.py" and quoted["signals"]["literal_rank"] == 1
        lat = []
        for q in ("parse raw HTTP header lines", "route a request to its handler", "limit concurrent requests"):
            t = time.perf_counter()
            await search(client, q)
            lat.append((time.perf_counter() - t) * 1000)
        print(f"\nsearch through MCP (stdio round trip): first {latency_ms:.0f} ms, then "
              f"{', '.join(f'{x:.0f}' for x in lat)} ms")

        # the result, opened: exact lines from disk
        o = await call(client, "open_file", {"path": top["source"]})
        assert not o.is_error, o.content[0].text
        opened = o.structured_content
        disk = (repo / top["path"]).read_text().splitlines()
        assert opened["lines"] == disk[top["start_line"] - 1:top["end_line"]]
        assert (opened["start_line"], opened["end_line"]) == (top["start_line"], top["end_line"])
        assert opened["mtime"] == pytest.approx((repo / top["path"]).stat().st_mtime)
        assert len(opened["file_hash"]) == 16 and opened["index_state"] == "current"
        assert f"{top['start_line']:>6}\t{disk[top['start_line'] - 1]}" in o.content[0].text
        o2 = await call(client, "open_file", {"path": "router/mux.go", "start_line": 5, "end_line": 9999})
        assert o2.structured_content["lines"] == (repo / "router/mux.go").read_text().splitlines()[4:]
        assert "clamped" in o2.structured_content["message"]

        # edit: searchable after the debounce, with the new lines
        headers = repo / "src/http/headers.py"
        headers.write_text(headers.read_text() + "\n\ndef parse_cookie_jar(header):\n"
                           "    \"\"\"Split a Cookie header into name/value pairs.\"\"\"\n"
                           "    return [p.strip() for p in header.split(';')]\n")
        t_edit = time.monotonic()

        async def edited_visible():
            out = await search(client, "parse_cookie_jar", top_k=3)
            hits = [h for h in out["results"]
                    if h["path"] == "src/http/headers.py" and "parse_cookie_jar" in h["snippet"]]
            return hits and not hits[0]["stale"] and hits[0]

        hit = await wait_until(edited_visible, timeout=60, what="the edit to be searchable")
        print(f"edit searchable {time.monotonic() - t_edit:.1f} s after the write (debounce 0.5 s)")
        lines = headers.read_text().splitlines()
        assert lines[hit["start_line"] - 1:hit["end_line"]][0].startswith("def parse_cookie_jar") or \
            any("parse_cookie_jar" in ln for ln in lines[hit["start_line"] - 1:hit["end_line"]])

        # delete: gone from results
        (repo / "router/mux.go").unlink()

        async def deleted_gone():
            out = await search(client, "ServeHTTP Mux routes handler", top_k=10)
            return all(h["path"] != "router/mux.go" for h in out["results"])

        await wait_until(deleted_gone, timeout=60, what="the deleted file to leave the index")
        gone = await call(client, "open_file", {"path": "router/mux.go"})
        assert gone.is_error and "no such file" in gone.content[0].text
        st = await wait_indexed(client)
        assert st["files_indexed"] == 5 and st["scans_completed"] >= 2  # six, one deleted


@pytest.mark.asyncio
async def test_stale_snippet_flagged_without_watcher(repo):
    async with probe_mcp(repo, PROBE_WATCH="0") as client:
        st = await wait_indexed(client)
        assert st["watcher_running"] is False and "PROBE_WATCH" in st["watcher_error"]
        out = await search(client, "compare a password against a stored salted hash", top_k=5)
        hit = next(h for h in out["results"] if h["path"] == "src/auth/passwords.py")
        assert hit["stale"] is False
        path = repo / hit["path"]
        lines = path.read_text().splitlines()
        lines[hit["start_line"] - 1] += "  # changed after indexing"
        path.write_text("\n".join(lines) + "\n")
        out = await search(client, "compare a password against a stored salted hash", top_k=5)
        again = next(h for h in out["results"] if h["path"] == "src/auth/passwords.py")
        assert again["stale"] is True and "STALE" in (await call(client, "search", {
            "query": "compare a password against a stored salted hash", "top_k": 5})).content[0].text
        opened = (await call(client, "open_file", {"path": hit["path"]})).structured_content
        assert opened["index_state"] == "stale" and opened["lines"] == path.read_text().splitlines()


@pytest.mark.asyncio
async def test_bad_arguments_and_path_refusals(repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    (repo / "linked").symlink_to(outside, target_is_directory=True)
    (repo / "alias.py").symlink_to(repo / "src/auth/passwords.py")

    async with probe_mcp(repo) as client:
        async def refused(tool, args, *needles):
            r = await call(client, tool, args)
            text = r.content[0].text
            assert r.is_error, f"{tool}({args}) was not refused: {text[:200]}"
            for needle in needles:
                assert needle.lower() in text.lower(), text
            return text

        await refused("search", {"query": ""}, "query")
        await refused("search", {"query": "x", "top_k": 0}, "top_k")
        await refused("search", {"query": "x", "mode": "turbo"}, "mode")
        await refused("search", {"query": "x", "filters": {"colour": ["red"]}}, "colour")
        await refused("search", {"query": "x", "max_tokens": 10}, "max_tokens")
        await refused("open_file", {"path": "../outside/secret.txt"}, "outside")
        await refused("open_file", {"path": "/etc/passwd"}, "outside")
        await refused("open_file", {"path": str(outside / "secret.txt")}, "outside")
        await refused("open_file", {"path": "linked/secret.txt"}, "outside")
        await refused("open_file", {"path": "src/../../outside/secret.txt"}, "outside")
        await refused("open_file", {"path": "src/auth/passwords.py", "start_line": 0}, "start_line")
        await refused("open_file", {"path": "src/auth/passwords.py", "start_line": 500}, "past the end")
        await refused("open_file", {"path": "src/auth/passwords.py", "start_line": 9, "end_line": 3}, "before")
        await refused("open_file", {"path": "src/nope.py"}, "no such file")
        await refused("open_file", {"path": "src"}, "directory")
        await refused("open_file", {}, "path")
        await refused("no_such_tool", {}, "no_such_tool")

        # a symlink to a file inside the root is fine, and so is an absolute path inside it
        ok = await call(client, "open_file", {"path": "alias.py", "start_line": 1, "end_line": 2})
        assert not ok.is_error and ok.structured_content["lines"][0] == '"""Password hashing."""'
        ok = await call(client, "open_file", {"path": str(repo / "docs/guide.md")})
        assert not ok.is_error and ok.structured_content["path"] == "docs/guide.md"

        # still serving after every refusal; and the token budget trims, never silently
        await wait_indexed(client)
        full = await search(client, "password router header guide settings", top_k=20, max_tokens=100_000)
        small = await search(client, "password router header guide settings", top_k=20, max_tokens=256)
        cut = small["truncated"]
        assert full["truncated"]["results_dropped"] == 0
        assert cut["results_dropped"] + cut["snippets_shortened"] > 0
        assert len(small["results"]) <= len(full["results"]) and len(small["results"]) >= 1
        assert "max_tokens" in small["message"] and cut["estimated_tokens"] <= 300
        assert any(h["snippet_truncated"] for h in small["results"])


@pytest.mark.asyncio
async def test_backend_unreachable_stays_up_and_says_why(repo):
    # a Qdrant server URL where nothing listens: the store cannot be reached from the start
    async with probe_mcp(repo, QDRANT_URL="http://127.0.0.1:9") as client:
        async def unreachable():
            st = await status(client)
            return st if st["backend_reachable"] is False else None

        st = await wait_until(unreachable, timeout=90, what="backend_reachable false")
        assert "unreachable" in st["last_error"].lower() or "unavailable" in st["last_error"].lower()
        assert st["indexing_in_progress"] is True and st["progress"]["phase"] == "error"
        r = await call(client, "search", {"query": "password"})
        assert r.is_error and "127.0.0.1:9" in r.content[0].text
        ok = await call(client, "open_file", {"path": "docs/guide.md"})  # reads from disk need no backend
        assert not ok.is_error
        assert (await status(client))["role"] == "owner"


def test_stdout_carries_protocol_messages_only(repo, tmp_path):
    """A library that prints (Python-level and straight to fd 1) once the engine runs cannot
    corrupt the protocol stream: every stdout line is a JSON-RPC message."""
    noisy = tmp_path / "noisy"
    noisy.mkdir()
    (noisy / "sitecustomize.py").write_text(
        "import os, sys, threading, time\n"
        "def _chatter():\n"
        "    while 'probe_core.engine.service' not in sys.modules:\n"
        "        time.sleep(0.01)\n"
        "    for _ in range(100):\n"
        "        print('noise from a library')\n"
        "        os.write(1, b'noise written to fd 1\\n')\n"
        "        time.sleep(0.02)\n"
        "threading.Thread(target=_chatter, daemon=True).start()\n")
    params = server_params(repo)
    env = {**os.environ, **params.env, "PYTHONPATH": str(noisy)}
    proc = subprocess.Popen([params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=params.cwd)
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "index_status", "arguments": {}}},
    ]
    for m in msgs:
        proc.stdin.write((json.dumps(m) + "\n").encode())
        proc.stdin.flush()
    time.sleep(4)  # the chatter runs meanwhile
    proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "open_file", "arguments": {"path": "docs/guide.md"}}}) + "\n").encode())
    proc.stdin.flush()
    parsed = []  # (the chatter writes stderr meanwhile; it stays far below a pipe's buffer)
    while 4 not in {p.get("id") for p in parsed}:  # read answers until the last one is in
        line = proc.stdout.readline()
        assert line, "server closed stdout early"
        parsed.append(json.loads(line))  # raises on any stray output
    out, err = proc.communicate(timeout=60)  # closes stdin: the server exits
    parsed += [json.loads(ln) for ln in out.decode().splitlines() if ln.strip()]
    assert all(p.get("jsonrpc") == "2.0" for p in parsed)
    assert {p.get("id") for p in parsed} >= {1, 2, 3, 4}
    assert b"noise from a library" in err and b"noise written to fd 1" in err
    log = (repo / ".probe" / "logs" / "probe-mcp.log").read_text()
    assert "probe mcp starting" in log
    assert proc.returncode == 0


@pytest.mark.asyncio
async def test_search_during_first_index_is_uncertain(tmp_path):
    """A repository big enough that the first index takes a while: search answers meanwhile."""
    root = tmp_path / "big"
    for i in range(120):
        p = root / f"pkg{i % 6}" / f"mod_{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f'"""Module {i}."""\n\n\ndef compute_{i}(value):\n    return value * {i}\n\n\n'
                     f"class Worker{i}:\n    def run(self, job):\n        return compute_{i}(job)\n")
    (root / "special.py").write_text("def rebalance_the_flux_capacitor():\n    return 88\n")
    async with probe_mcp(root) as client:
        async def early_answer():
            st = await status(client)
            out = await search(client, "rebalance_the_flux_capacitor")
            if st["first_scan_done"] and not st["indexing_in_progress"]:
                pytest.skip("indexing finished before a search could run during it")
            return out if out["results"] and st["indexing_in_progress"] else None

        out = await wait_until(early_answer, timeout=120, interval=0.1, what="a search during the first index")
        assert out["status"] == "uncertain" and out["message"] and out["indexing_in_progress"] is True
        assert out["results"][0]["path"] == "special.py"
        st = await status(client)
        assert st["progress"]["chunks_total"] > 0
        assert st["progress"]["phase"] in {"scanning", "chunking", "sparse", "dense"}


@pytest.mark.asyncio
async def test_index_built_with_another_model_is_an_error_not_garbage(repo):
    from probe_core import Workspace

    ws = Workspace.open(repo)
    ws.manifest.set_meta("embedding_model_id", "someone/else-embed")
    ws.manifest.set_meta("embedding_dimensions", "1024")
    ws.close()
    async with probe_mcp(repo) as client:
        async def mismatch():
            st = await status(client)
            return st if st.get("index_config_mismatch") else None

        st = await wait_until(mismatch, timeout=60, what="index_config_mismatch")
        assert "probe index --rebuild" in st["last_error"]
        r = await call(client, "search", {"query": "password"})
        assert r.is_error and "probe index --rebuild" in r.content[0].text


@pytest.mark.asyncio
async def test_embedder_unreachable_lexical_search_still_answers(repo):
    # a TEI embedder where nothing listens: lexical indexing and search work, dense waits
    async with probe_mcp(repo, PROBE_PRESET="lite", TEI_EMBED_URL="http://127.0.0.1:9") as client:
        async def paused():
            st = await status(client)
            return st if st["backend_reachable"] is False and st.get("first_scan_done") else None

        st = await wait_until(paused, timeout=90, what="dense indexing to report the embedder down")
        assert "127.0.0.1:9" in st["last_error"] and st["files_indexed"] == 6 and st["chunks_embedded"] == 0
        out = await search(client, "hash_password")
        assert out["status"] == "degraded" and "127.0.0.1:9" in out["message"]
        assert out["results"][0]["path"] in {"src/auth/passwords.py", "tests/test_passwords.py"}
