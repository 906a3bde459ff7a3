"""``index_status`` while a repair closes the manifest it is reading (``Workspace.parts_closed``):
it reads the rebuilt one instead of failing with "Cannot operate on a closed database" (seen in CI
as an internal error from a running ``probe mcp`` mid-repair)."""
from __future__ import annotations

from probe_core import Workspace, index_workspace
from probe_core.indexing import status


def test_a_status_read_that_meets_a_closed_manifest_reads_again(tmp_path, monkeypatch):
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.py").write_text("def f():\n    return 1\n")
    ws = Workspace.open(tmp_path / "repo")
    index_workspace(ws, dense=False)
    real, calls = status._index_status, []

    def closed_under_it(ws, **kw):
        calls.append(1)
        if len(calls) == 1:
            held = ws.manifest
            with ws.parts_closed():  # what a repair does meanwhile
                pass
            held.counts()  # the read this status had in hand: its connection is closed now
        return real(ws, **kw)

    monkeypatch.setattr(status, "_index_status", closed_under_it)
    out = status.index_status(ws, probe_backend=False)
    assert len(calls) == 2 and out["files_indexed"] == 1
    ws.close()
