"""The same questions as an agent asks them: the dev set's searches through `probe mcp`, alone and in a monorepo.

``bench_same_questions.py`` times the engine's ``search`` call in process. This bench asks the same
queries of the same prepared copies through the MCP SDK's stdio client, each tree served by a fresh
`probe mcp` (and the owner it starts): the wall time an agent waits for a tool call, and the
``took_ms`` the owner reports. Only the filled copies are asked (``prepare --dense``): a lexical-only
copy would start its dense fill under the measurement.

  python bench/bench_same_questions.py prepare --work /tmp/h-ratio --dense
  python bench/bench_same_questions_mcp.py --work /tmp/h-ratio [--rounds 3] [--code /work/main] [--json out.json]

The owner's answer cache holds a query it answered, so each round is a fresh process per tree and
every query is asked once in it (after two warm-up searches). p50 is over the queries' best round.
The watcher and the idle store optimization are off (``PROBE_WATCH=0``, ``PROBE_OPTIMIZE_IDLE_S``):
nothing but the searches runs.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from bench_mcp import indexed  # noqa: E402
from bench_same_questions import CORPORA, QUERIES  # noqa: E402
from report import percentile  # noqa: E402

PLACES = ("alone", "tree", "scoped")


async def ask(root: Path, queries: list[dict], scoped: bool, code: Path) -> dict[str, tuple[float, float]]:
    """query id → (wall ms, took_ms) from one fresh `probe mcp --root root`."""
    env = {**os.environ, "PROBE_WATCH": "0", "PROBE_OPTIMIZE_IDLE_S": "1000000", "PYTHONPATH": str(code)}
    server = StdioServerParameters(command=sys.executable, args=["-m", "probe_cli", "mcp", "--root", str(root)],
                                   env=env, cwd=str(code))
    async with Client(stdio_client(server, errlog=open(os.devnull, "w")), mode="legacy",
                      read_timeout_seconds=600) as client:
        st = await indexed(client)
        if st.get("dense_coverage", 0) < 1:
            raise SystemExit(f"{root}: dense coverage {st.get('dense_coverage')}: prepare it with --dense")
        for warm in ("warm up the caches", "warm_up the_caches"):
            await client.call_tool("search", {"query": warm, "top_k": 10})
        out = {}
        for q in queries:
            args = {"query": q["query"], "top_k": 10}
            if scoped:
                args["filters"] = {"include_globs": [f"dev/{q['corpus']}/**"]}
            t = time.perf_counter()
            r = await client.call_tool("search", args)
            wall = (time.perf_counter() - t) * 1000
            if r.is_error:
                raise SystemExit(f"{root}: {q['id']}: {r.content[0].text}")
            out[q["id"]] = (wall, float(r.structured_content["took_ms"]))
        return out


async def measure(work: Path, rounds: int, queries: list[dict], code: Path) -> dict:
    asked: dict[str, dict[str, list]] = {p: {} for p in PLACES}
    out: dict = {"code": str(code), "rounds": []}
    for r in range(rounds):
        loads = [os.getloadavg()[0]]
        for corpus in CORPORA:
            got = await ask(work / "alone-dense" / corpus, [q for q in queries if q["corpus"] == corpus], False, code)
            for k, v in got.items():
                asked["alone"].setdefault(k, []).append(v)
        for place, scoped in (("tree", False), ("scoped", True)):
            got = await ask(work / "mono-dense", queries, scoped, code)
            for k, v in got.items():
                asked[place].setdefault(k, []).append(v)
        loads.append(os.getloadavg()[0])
        row = {"load": [min(loads), max(loads)]}
        for place in PLACES:
            wall = [min(v[0] for v in runs) for runs in asked[place].values()]
            took = [min(v[1] for v in runs) for runs in asked[place].values()]
            row[place] = {"n": len(wall), "wall_p50": statistics.median(wall), "wall_p95": percentile(wall, 95),
                          "took_p50": statistics.median(took), "took_p95": percentile(took, 95)}
        out["rounds"].append(row)
        a = row["alone"]
        cells = [f"{p} {row[p]['wall_p50']:.1f} / {row[p]['wall_p95']:.1f} ({row[p]['took_p50']:.1f})" for p in PLACES]
        ratios = [f"{p}/alone {row[p]['wall_p50'] / a['wall_p50']:.2f} ({row[p]['took_p50'] / a['took_p50']:.2f})"
                  for p in PLACES[1:]]
        print(f"after round {r + 1}, load {row['load'][0]:.1f}-{row['load'][1]:.1f}: wall p50 / p95 (took_ms p50) | "
              + " | ".join(cells + ratios), flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, required=True, help="bench_same_questions.py prepare --dense's folder")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--queries", type=Path, default=QUERIES)
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose probe to run")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    queries = [q for q in map(json.loads, args.queries.read_text().splitlines()) if q.get("kind") == "search"]
    out = anyio.run(measure, args.work, args.rounds, queries, args.code.resolve())
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
