"""``without_dense`` (search's per-candidate check while dense vectors fill) reads the candidates'
rows by key: its work must not follow the number of chunks still waiting for a vector. SQLite's
planner took the ``has_dense`` index instead, which walks every chunk without a vector (~60 ms a
search on the monorepo mid-fill). Work is counted in SQLite VM steps, not wall time."""
from probe_core.storage.manifest import ChunkRow, FileRow, Manifest


def _manifest(path, files: int) -> Manifest:
    m = Manifest(path)
    for f in range(files):
        name = f"f{f}.py"
        chunks = [ChunkRow(f"{name}-{k}", name, k, k * 10 + 1, k * 10 + 9, f"h{f}-{k}", None, None, None, False)
                  for k in range(20)]
        m.replace_file(FileRow(name, 1, 10, f"fh{f}", None), "python", "code", chunks, ["t"] * 20)
    m.mark_dense_done(["f0.py-0", "f0.py-1"])
    return m


def _steps_of(m: Manifest, call) -> int:
    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    m._db.set_progress_handler(tick, 100)
    try:
        call()
        return steps
    finally:
        m._db.set_progress_handler(None, 0)


def _steps(m: Manifest, ids: list[str]) -> tuple[set[str], int]:
    found: set[str] = set()
    steps = _steps_of(m, lambda: found.update(m.without_dense(ids)))
    return found, steps


def test_without_dense_reads_candidates_by_key(tmp_path):
    ids = ["f0.py-0", "f0.py-1", "f0.py-2", "f1.py-3", "nope"]
    small, big = _manifest(tmp_path / "small.sqlite", 5), _manifest(tmp_path / "big.sqlite", 250)
    found_small, steps_small = _steps(small, ids)
    found_big, steps_big = _steps(big, ids)
    assert found_small == found_big == {"f0.py-2", "f1.py-3"}
    # 100 chunks against 5,000: by key the work is the same; a walk of the index is ~50x
    assert steps_big <= 2 * steps_small + 2, (steps_small, steps_big)


def test_a_files_embedded_chunks_and_its_requeue_read_that_file_only(tmp_path):
    """``dense_donors`` (an edited file's reusable vectors) and the requeue of ``update_stat`` (a
    touched file) looked rows up through ``chunks(has_dense)``: every embedded, or every unembedded,
    chunk of the repository for one file (~25 ms a file on the monorepo)."""
    small, big = _manifest(tmp_path / "small.sqlite", 5), _manifest(tmp_path / "big.sqlite", 250)
    for m in (small, big):
        m.mark_dense_done([f"f{f}.py-{k}" for f in range(1, len(m.file_paths())) for k in range(10)])
    assert [r[0] for r in big.dense_donors("f1.py")] == [f"f1.py-{k}" for k in range(10)]
    donors = [_steps_of(m, lambda m=m: m.dense_donors("f1.py")) for m in (small, big)]
    requeue = [_steps_of(m, lambda m=m: m.update_stat(FileRow("f1.py", 2, 10, "fh1", None))) for m in (small, big)]
    assert donors[1] <= 2 * donors[0] + 2 and requeue[1] <= 2 * requeue[0] + 2, (donors, requeue)
