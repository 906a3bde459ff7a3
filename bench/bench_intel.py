"""Code-intelligence speed on a real repository: graph build, map_code, and the graph tools.

  uv run python bench/bench_intel.py --repo /tmp/probe-bench-index

Uses an already indexed repository (e.g. the copy `bench_index.py` leaves behind); builds the
symbol graph if it is missing, then times map_code and each find_* / impact_analysis over the
repository's most-referenced symbols.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--symbols", type=int, default=20)
    args = ap.parse_args()

    from probe_core import Workspace
    from probe_core import intel

    ws = Workspace.open(args.repo, create=False)
    t0 = time.perf_counter()
    intel.ensure_graph(ws)
    build_s = time.perf_counter() - t0
    lines = sum(len((args.repo / p).read_bytes().splitlines()) for p in ws.manifest.file_paths())
    con = intel.graph_store(ws)._db if hasattr(intel.graph_store(ws), "_db") else None
    names = []
    if con is not None:
        names = [r[0] for r in con.execute(
            "SELECT name FROM graph_refs GROUP BY name ORDER BY COUNT(*) DESC LIMIT ?", (args.symbols * 3,))]
    out = {"repo": str(args.repo), "lines": lines, "graph_build_s": round(build_s, 2)}
    t = time.perf_counter()
    intel.map_code(ws, ".", depth=2, detail="signatures")
    out["map_code_ms"] = round((time.perf_counter() - t) * 1000, 1)
    for tool in ("find_callers", "find_callees", "find_references", "find_implementations", "impact_analysis"):
        lat = []
        for name in names:
            t = time.perf_counter()
            try:
                getattr(intel, tool)(ws, name)
            except intel.IntelError:
                continue
            lat.append((time.perf_counter() - t) * 1000)
            if len(lat) >= args.symbols:
                break
        out[tool] = {"n": len(lat), "p50_ms": round(statistics.median(lat), 1) if lat else None,
                     "max_ms": round(max(lat), 1) if lat else None}
    ws.close()
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
