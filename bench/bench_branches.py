"""What a branch switch costs: a real repository in git, a feature branch that edits a share of its
files, then checkout → index → checkout back → index → delete the branch → index.

  uv run python bench/bench_branches.py --repo .venv/lib/python3.11/site-packages/textual [--share 0.05]

Reports per step the wall time of the (lexical) index run, files chunked / revived / retagged,
chunks whose vector was reused, and how many chunks were queued for embedding — the cost a switch
adds on top of the scan — against a full index of the same tree. The model is not run: queued
chunks get random unit vectors (stored like real ones, so later steps can reuse them); the queue
length is the embedding work, and it is what the branch logic decides.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@b"}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=GIT_ENV)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/probe-bench-branches"))
    ap.add_argument("--share", type=float, default=0.05, help="share of source files the feature branch edits")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from probe_core import Workspace, index_workspace

    shutil.rmtree(args.work, ignore_errors=True)
    shutil.copytree(args.repo, args.work, ignore=shutil.ignore_patterns(".probe", "__pycache__", ".git"))
    root = args.work
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".probe/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")

    ws = Workspace.open(root)
    rng = np.random.default_rng(7)
    steps: dict[str, dict] = {}

    def step(name: str) -> None:
        t0 = time.perf_counter()
        rep = index_workspace(ws, dense=False)
        secs = time.perf_counter() - t0
        steps[name] = {"seconds": round(secs, 2), "files_indexed": rep.files_indexed,
                       "files_revived": rep.files_revived, "files_retagged": rep.files_retagged,
                       "files_deleted": rep.files_deleted, "chunks_chunked": rep.chunks_indexed,
                       "chunks_reused": rep.chunks_reused,
                       "queued_for_embedding": len(ws.manifest.pending_dense(10**9)),
                       "points": ws.store.count(), **({"branches": rep.branches} if rep.branches else {})}
        # stand-in vectors (random, unit length) instead of running the model: the queue length is the
        # measured cost, and stored vectors let the next step reuse them as real ones would be
        pending = [r[0] for r in ws.manifest.pending_dense(10**9)]
        if pending:
            vecs = rng.standard_normal((len(pending), ws.embedder.dimensions)).astype(np.float32)
            ws.store.set_dense(pending, vecs / np.linalg.norm(vecs, axis=1, keepdims=True))
            ws.manifest.mark_dense_done(pending)
        print(f"{name:<22} {json.dumps(steps[name])}", flush=True)

    step("full index (main)")
    sources = sorted(p for p in root.rglob("*.py") if ".probe" not in p.parts)
    random.seed(7)
    edited = random.sample(sources, max(1, int(len(sources) * args.share)))
    git(root, "checkout", "-qb", "feature")
    for p in edited:
        p.write_text(p.read_text("utf-8") + "\n\ndef feature_branch_helper():\n    return 'feature'\n", "utf-8")
    git(root, "commit", "-qam", "feature")
    step("checkout feature")
    git(root, "checkout", "-q", "main")
    step("checkout main again")
    git(root, "checkout", "-q", "feature")
    step("checkout feature again")
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-qD", "feature")
    step("feature deleted")
    ws.close()

    out = {"machine": f"{platform.machine()} {os.cpu_count()} cpu, {platform.python_version()}",
           "repo": str(args.repo), "source_files": len(sources), "edited_files": len(edited), "steps": steps}
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
