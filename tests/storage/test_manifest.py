from probe_core.storage.manifest import ChunkRow, FileRow, Manifest


def _chunks(path, n):
    return [ChunkRow(f"{path}-{k}", path, k, k * 10 + 1, k * 10 + 9, f"h{k}", f"f{k}", "function", None, False)
            for k in range(n)]


def test_replace_file_queues_dense_and_is_atomic(tmp_path):
    m = Manifest(tmp_path / "m.sqlite")
    m.replace_file(FileRow("a.py", 1, 10, "abc", None), "python", "code", _chunks("a.py", 3), ["t0", "t1", "t2"])
    assert m.counts() == {"files": 1, "files_failed": 0, "chunks": 3, "chunks_dense": 0}
    assert [r[0] for r in m.pending_dense(10)] == ["a.py-0", "a.py-1", "a.py-2"]
    m.mark_dense_done(["a.py-0"])
    assert m.counts()["chunks_dense"] == 1
    # a new version replaces chunks and the queue
    m.replace_file(FileRow("a.py", 2, 11, "abd", None), "python", "code", _chunks("a.py", 1), ["new"])
    assert m.counts()["chunks"] == 1 and m.counts()["chunks_dense"] == 0
    assert m.pending_dense(10) == [("a.py-0", "a.py", "new")]
    m.remove_file("a.py")
    assert m.counts()["chunks"] == 0 and m.pending_dense(10) == []


def test_generation_and_meta_persist(tmp_path):
    m = Manifest(tmp_path / "m.sqlite")
    assert m.generation == 0
    assert m.bump_generation() == 1
    m.set_meta("embedding_model_id", "x")
    m.close()
    m2 = Manifest(tmp_path / "m.sqlite")
    assert m2.generation == 1 and m2.get_meta("embedding_model_id") == "x"


def test_mark_error_and_forget(tmp_path):
    m = Manifest(tmp_path / "m.sqlite")
    m.mark_error(FileRow("bad.py", 5, 6, "", None), "embedding failed: boom")
    assert m.counts()["files_failed"] == 1
    assert m.errors() == [("bad.py", "embedding failed: boom")]
    m.replace_file(FileRow("a.py", 1, 10, "abc", None), "python", "code", _chunks("a.py", 1), ["t"])
    m.forget_file_version("a.py")
    assert m.files()["a.py"].mtime_ns == -1
