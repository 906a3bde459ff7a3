"""Time to first answer on a fresh repository, and CLI search latency cold vs. warm (through the owner).

  uv run python bench/bench_cli.py --repo .venv/lib/python3.11/site-packages/textual [--n 20] [--json OUT]

Every figure is a real `probe` process, as an agent's shell runs it (stdout piped):

1. **first answer**: copy the repository to a scratch folder (no `.probe/`), then
   `probe index --background` → `probe search Q --json`: wall time until the search's answer,
   with the lexical phase on its own;
2. **warm while embedding**: `probe search` through the background owner while it fills dense vectors;
3. **dense**: `probe index --wait` until every vector is made;
4. **warm**: `probe search` (`--json`, and the human rendering) through the idle owner, each query
   different (the owner's answer cache never hits);
5. **owner memory**: the background owner's peak RSS (``VmHWM``) after the whole index;
6. **cold**: `probe stop`, then the same searches with `PROBE_DAEMON=0`, each process loading the
   model and the store itself — the ratio cold/warm is the figure to compare across machines.

Peak RSS of each CLI process is read with `/usr/bin/time` when it is installed.

  python bench/bench_cli.py --repo MONOREPO --queries scale --n 40 --while-embedding-only

stops after step 2 (a monorepo's dense fill takes hours on a few cores) and reports the owner's
peak RSS then: the warm CLI at monorepo size during the fill, ``bench_scale.py``'s 40 questions.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_index import QUERIES, percentile  # noqa: E402  (the same 20 questions about textual)

PROBE = [sys.executable, "-m", "probe_cli"]
TIME = Path("/usr/bin/time").exists()


def run(args: list[str], root: Path, env: dict | None = None) -> tuple[float, int | None, str]:
    """Wall seconds, peak RSS (KiB, if measurable) and stdout of one `probe` process."""
    cmd = [*PROBE, *args, "--root", str(root)]
    rss_file = None
    if TIME:
        rss_file = tempfile.NamedTemporaryFile(delete=False)
        cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file.name, *cmd]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"probe {' '.join(args)} failed: {out.stderr[-800:]}")
    rss = None
    if rss_file is not None:
        try:
            rss = int(Path(rss_file.name).read_text().split()[-1])
        finally:
            os.unlink(rss_file.name)
    return wall, rss, out.stdout


def searches(root: Path, queries: list[str], extra: list[str], env: dict | None = None) -> dict:
    walls, rss, engine = [], [], []
    for q in queries:
        wall, kib, stdout = run(["search", q, *extra], root, env)
        walls.append(wall * 1000)
        if kib:
            rss.append(kib)
        if "--json" in extra:  # the search itself, as the answering engine timed it
            engine.append(json.loads(stdout)["took_ms"])
    out = {"n": len(walls), "p50_ms": round(statistics.median(walls), 1),
           "p95_ms": round(percentile(walls, 95), 1), "rss_mb": round(statistics.median(rss) / 1024) if rss else None}
    if engine:
        out["engine_p50_ms"] = round(statistics.median(engine), 1)
    return out


def owner_peak_rss_mb(root: Path) -> int | None:
    """Peak resident size of the process owning ``root`` (Linux ``VmHWM``), None if unreadable."""
    try:
        pid = json.loads((root / ".probe" / "engine.json").read_text())["pid"]
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024)
    except (OSError, ValueError, KeyError):
        return None
    return None


def count_lines(root: Path) -> int:
    n = 0
    for p in root.rglob("*"):
        if p.is_file() and p.suffix in (".py", ".md", ".tcss", ".toml", ".json", ".yaml", ".txt"):
            with open(p, "rb") as f:
                n += sum(1 for _ in f)
    return n


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "probe-bench-cli")
    ap.add_argument("--n", type=int, default=20, help="searches per figure (distinct queries, cycled)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--queries", choices=("textual", "scale"), default="textual")
    ap.add_argument("--while-embedding-only", action="store_true", help="stop after the searches during the fill")
    args = ap.parse_args()
    questions = QUERIES
    if args.queries == "scale":
        sys.path.insert(0, str(ROOT / "bench"))
        from bench_scale import QUERIES as questions  # the scale trees' own questions
    queries = [questions[i % len(questions)] + ("" if i < len(questions) else f" {i}") for i in range(args.n)]

    shutil.rmtree(args.work, ignore_errors=True)
    shutil.copytree(args.repo, args.work, ignore=shutil.ignore_patterns(".probe", "__pycache__"))
    root = args.work
    env_daemon = {"PROBE_DAEMON": "1"}
    out: dict = {"repo": str(args.repo), "lines": count_lines(root), "cpus": os.cpu_count(),
                 "machine": platform.machine(), "load_before": os.getloadavg()}
    try:
        t0 = time.perf_counter()
        lexical, _, stdout = run(["index", "--background", "--json"], root, env_daemon)
        report = json.loads(stdout)
        first, _, _ = run(["search", questions[0], "--json"], root)
        out["first_answer"] = {"index_background_s": round(lexical, 2), "first_search_s": round(first, 2),
                               "total_s": round(time.perf_counter() - t0, 2), "files": report["files_indexed"],
                               "chunks": report["chunks_indexed"]}
        print(f"first answer: {out['first_answer']}", flush=True)

        out["warm_while_embedding"] = searches(root, queries[:max(5, args.n // 2)], ["--json"])
        print(f"warm while embedding: {out['warm_while_embedding']}", flush=True)
        if args.while_embedding_only:
            out["owner_peak_rss_mb"] = owner_peak_rss_mb(root)
            return finish(out, args.json)

        dense, _, _ = run(["index", "--wait", "--quiet"], root)
        out["dense_wait_s"] = round(dense, 1)
        print(f"dense phase finished {dense:.0f} s after the searches above", flush=True)

        out["warm_json"] = searches(root, queries, ["--json"])
        out["warm_human"] = searches(root, queries, [])
        print(f"warm --json: {out['warm_json']}\nwarm human: {out['warm_human']}", flush=True)

        out["owner_peak_rss_mb"] = owner_peak_rss_mb(root)  # the daemon, after indexing everything
        run(["stop"], root)
        cold_env = {"PROBE_DAEMON": "0"}
        out["cold_json"] = searches(root, queries, ["--json"], cold_env)
        print(f"cold --json: {out['cold_json']}", flush=True)
        out["ratio_cold_over_warm_p50"] = round(out["cold_json"]["p50_ms"] / out["warm_json"]["p50_ms"], 1)
        out["load_after"] = os.getloadavg()
        print(f"cold/warm p50: {out['ratio_cold_over_warm_p50']}x", flush=True)
    finally:
        subprocess.run([*PROBE, "stop", "--root", str(root)], capture_output=True)
    return finish(out, args.json)


def finish(out: dict, path: Path | None) -> int:
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
