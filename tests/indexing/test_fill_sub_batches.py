"""The dense fill stops inside a batch, between the embedder's sub-batches, when asked to: a search
that arrives mid-batch waits on one sub-batch's CPU, not the batch's (real Qdrant Edge, real ONNX
embedder). What was embedded is stored; the rest stays queued for the next round."""
from __future__ import annotations

from probe_core import Workspace, index_workspace
from probe_core.indexing.dense import fill_dense
from probe_core.indexing.scheduler import IndexSchedule

from .polling import polling
from .test_crash_recovery import make_repo


def test_a_stop_asked_mid_batch_keeps_the_sub_batches_done_and_queues_the_rest(tmp_path):
    root = make_repo(tmp_path / "repo", 12)
    ws = Workspace.open(root)
    try:
        index_workspace(ws, dense=False)
        queued = len(ws.manifest.pending_dense(10_000))
        sub = ws.embedder.batch_size
        assert queued > 4 * sub
        calls = []
        real = ws.embedder.embed_documents

        def counting(texts):
            calls.append(len(texts))
            return real(texts)
        ws.embedder.embed_documents = counting
        done = fill_dense(ws, batch=4 * sub, should_stop=lambda: bool(calls))  # asked right after the first
        assert calls == [sub] and done == sub
        assert ws.manifest.counts()["chunks_dense"] == sub
        assert len(ws.manifest.pending_dense(10_000)) == queued - sub
        embedded = set(ws.manifest.chunk_ids()) - {pid for pid, _, _ in ws.manifest.pending_dense(10_000)}
        assert len(ws.store.dense_vectors(list(embedded))) == sub
        ws.embedder.embed_documents = real
        assert fill_dense(ws) == queued - sub  # the rest, on the next round
        assert ws.manifest.pending_dense(10) == []
    finally:
        ws.close()


def _schedule() -> IndexSchedule:
    import threading

    sched = IndexSchedule("/nowhere", stop=threading.Event(), dense_batch=16,
                          healthy=lambda: None, progressed=lambda p=None: None, heartbeat=lambda: None)
    sched._full = False  # as after the startup scan: no scan waits, only the fill
    sched.first_scan_done.set()
    return sched


def _long_texts(n: int) -> list[str]:
    return [("def handler_%d(request):\n    return render(request, 'page.html', {'n': %d})\n" % (i, i)) * 12
            for i in range(n)]


def test_interrupt_stops_a_document_embedding_in_flight_and_leaves_queries_alone():
    """``interrupt`` (onnxruntime's ``RunOptions.terminate``) ends the document embedding in flight with
    ``EmbeddingInterrupted``, not ``EmbeddingError`` (nothing failed); the next call and queries work."""
    import pytest

    from probe_core.embedding.onnx_minilm import OnnxMiniLMEmbedder
    from probe_core.errors import EmbeddingError, EmbeddingInterrupted

    emb = OnnxMiniLMEmbedder()
    emb.embed_query("load the model")

    def interrupt_when_running() -> bool:
        if emb._documents_run is None:
            return False
        emb.interrupt()
        return True
    with polling(interrupt_when_running), pytest.raises(EmbeddingInterrupted):
        emb.embed_documents(_long_texts(64))  # seconds of work: the interrupt lands inside it
    assert not issubclass(EmbeddingInterrupted, EmbeddingError)
    assert emb.embed_documents(_long_texts(2)).shape == (2, 384)
    assert emb.embed_query("cookie parsing").shape == (384,)
    emb.interrupt()  # nothing in flight: nothing to stop, and the next call is not affected
    assert emb.embed_documents(_long_texts(1)).shape == (1, 384)


def test_a_search_starting_interrupts_the_fills_embedding(tmp_path):
    """The owner's schedule: a search that starts while the fill embeds stops that embedding (the
    sub-batch stays queued), so the search's own work does not share the cores with it."""
    import threading

    from probe_core.errors import EmbeddingInterrupted

    root = make_repo(tmp_path / "repo", 30)
    ws = Workspace.open(root)
    try:
        index_workspace(ws, dense=False)
        queued = len(ws.manifest.pending_dense(10_000))
        emb = ws.embedder
        emb.batch_size = 64  # one long sub-batch: without the interrupt the search would wait it out
        outcomes = []
        real = emb.embed_documents

        def recording(texts):
            try:
                out = real(texts)
            except EmbeddingInterrupted:
                outcomes.append("interrupted")
                raise
            outcomes.append("done")
            return out
        emb.embed_documents = recording
        sched = _schedule()
        filler = threading.Thread(target=sched.fill_dense, args=(ws,))
        filler.start()
        while emb._documents_run is None and filler.is_alive():
            threading.Event().wait(0.001)
        with sched.searching():
            while not outcomes and filler.is_alive():  # the embedding in flight ends ...
                threading.Event().wait(0.001)
            assert outcomes == ["interrupted"]  # ... stopped, not finished
            sched._stop.set()  # the owner closing: the fill ends here, before the search would
        filler.join(timeout=120)
        assert ws.manifest.counts()["chunks_dense"] == 0
        assert len(ws.manifest.pending_dense(10_000)) == queued  # nothing lost: all still queued
    finally:
        ws.close()


def test_searches_do_not_interrupt_the_fill_twice_without_a_vector_stored_between():
    """Searches closer together than one sub-batch's time would stop every sub-batch before it ended
    (the fill then made 0.3 chunks/s under one search per 0.5 s on a loaded machine): after an
    interrupt, the fill's next sub-batch runs to its end, whatever searches come."""
    sched = _schedule()
    calls = []
    sched._interrupt = lambda: (calls.append(1), True)[1]  # an embedding in flight, stopped
    with sched.searching():
        pass
    with sched.searching():
        pass
    assert calls == [1]  # the second search left the sub-batch that followed alone
    sched._stored(sched.progress)  # a batch with no vector (stopped before any) re-arms nothing
    with sched.searching():
        pass
    assert calls == [1]
    sched.progress.chunks_embedded += 4
    sched._stored(sched.progress)  # a sub-batch finished and was stored
    with sched.searching():
        pass
    assert calls == [1, 1]

    idle = _schedule()
    misses = []
    idle._interrupt = lambda: (misses.append(1), False)[1]  # nothing in flight: nothing spent
    for _ in range(2):
        with idle.searching():
            pass
    assert misses == [1, 1]


def test_a_refused_chunk_is_isolated_within_its_sub_batch(tmp_path):
    """An embedder that refuses a text (``EmbeddingError``) fails its sub-batch; the chunks of that
    sub-batch are tried one by one: the refused one leaves the queue with its file marked failed,
    every other chunk gets its vector."""
    from probe_core.errors import EmbeddingError

    root = make_repo(tmp_path / "repo", 12)
    ws = Workspace.open(root)
    try:
        index_workspace(ws, dense=False)
        chunks = ws.manifest.counts()["chunks"]
        real = ws.embedder.embed_documents

        def refusing(texts):
            if any("def compute_3(" in t for t in texts):
                raise EmbeddingError("refused")
            return real(texts)
        ws.embedder.embed_documents = refusing
        done = fill_dense(ws, batch=16)
        assert [(p, e) for p, e in ws.manifest.errors()] == [("pkg3/mod_3.py", "embedding failed: refused")]
        assert ws.manifest.pending_dense(10) == []
        assert done == ws.manifest.counts()["chunks_dense"] == chunks - 1
    finally:
        ws.close()
