"""`probe mcp` as an agent sees it: time to initialize, search latency, edit-to-searchable.

  uv run python bench/bench_mcp.py --repo /tmp/probe-dev/chi [--runs 5] [--queries 60]

Spawns `probe mcp --root REPO` with the MCP SDK's stdio client (a copy of the repo, so edits do
not touch the original), times `initialize` over several fresh processes, waits for the index,
runs ≥ 50 distinct queries (p50/p95), then appends a unique line to a file and measures how long
until a search finds it (default 3 s debounce included, and reported separately).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
import uuid
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from report import emit, percentile  # noqa: E402  (bench/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parents[1]


def params(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "probe_cli", "mcp", "--root", str(root)],
                                 env={**os.environ}, cwd=str(ROOT))


async def indexed(client: Client) -> dict:
    """Wait until the server's first scan is done and nothing is being indexed; its last status."""
    while True:
        st = (await client.call_tool("index_status", {})).structured_content
        if st.get("first_scan_done") and not st["indexing_in_progress"]:
            return st
        await anyio.sleep(0.5)


async def run(args) -> dict:
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(args.repo, work)  # keeps an existing .probe/: the index is reused
    out: dict = {"machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
                 "repo": str(args.repo)}
    init = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        async with Client(stdio_client(params(work), errlog=open(os.devnull, "w")), mode="legacy") as c:
            init.append(time.perf_counter() - t0)
            await c.list_tools()
    out["initialize_s"] = {"min": round(min(init), 2), "median": round(statistics.median(init), 2),
                           "max": round(max(init), 2), "runs": len(init)}

    async with Client(stdio_client(params(work), errlog=open(os.devnull, "w")), mode="legacy",
                      read_timeout_seconds=300) as c:
        await indexed(c)
        queries = [json.loads(l)["query"] for l in open(args.queries) if '"kind": "search"' in l][: args.n]
        lat = []
        for q in queries:
            t = time.perf_counter()
            r = await c.call_tool("search", {"query": q, "top_k": 10})
            lat.append((time.perf_counter() - t) * 1000)
            assert not r.is_error, r.content[0].text
        out["search_ms"] = {"p50": round(percentile(lat, 50), 1), "p95": round(percentile(lat, 95), 1), "queries": len(lat)}

        target = next(p for p in sorted(work.rglob(args.edit_glob)) if ".probe" not in p.parts)
        token = "zq" + uuid.uuid4().hex[:10]
        t_edit = time.perf_counter()
        with open(target, "a") as f:
            f.write(f"\n// {token} marker appended by bench_mcp\n")
        while True:
            r = await c.call_tool("search", {"query": token, "top_k": 3})
            res = r.structured_content["results"]
            if res and token in (await c.call_tool("open_file", {"path": res[0]["source"]})).content[0].text:
                break
            await anyio.sleep(0.1)
        total = time.perf_counter() - t_edit
        st = (await c.call_tool("index_status", {})).structured_content
        debounce = float(st.get("debounce_s") or 3.0)
        out["edit_to_searchable_s"] = {"total": round(total, 2), "debounce": debounce,
                                       "after_debounce": round(total - debounce, 2)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--work", default="/tmp/probe-bench-mcp")
    ap.add_argument("--queries", default=str(ROOT.parent / "shared/eval/dev/queries.jsonl"))
    ap.add_argument("--n", type=int, default=84)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--edit-glob", default="*.go")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out = anyio.run(run, args)
    return emit(out, args.json)


if __name__ == "__main__":
    sys.exit(main())
