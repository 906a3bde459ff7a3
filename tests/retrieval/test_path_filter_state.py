"""A path filter (``include_globs``/``exclude_globs``) is turned into the indexed files it keeps once
per index state: a scoped agent repeats it on every search, and matching a monorepo's 11k paths cost
each of them ~18 ms. A file added under the glob is found after the next index run; the dense fill,
which changes no file, does not make it match again (real index, real manifest)."""
from __future__ import annotations

import pytest

from probe_core import Workspace, index_workspace, search
from probe_core.retrieval.search import SearchFilters, file_filter

from ..conftest import write_tree


@pytest.fixture
def ws(tmp_path):
    write_tree(tmp_path, {
        "svc/billing/invoice.py": "def total_due(lines):\n    return sum(lines)\n",
        "svc/billing/tax.py": "def tax_rate(region):\n    return 0.2\n",
        "svc/search/rank.py": "def total_score(hits):\n    return sum(hits)\n",
        "docs/billing.md": "# Billing\n\nHow invoices total up.\n",
    })
    w = Workspace.open(tmp_path)
    index_workspace(w, dense=False)
    yield w
    w.close()


@pytest.fixture
def listings(ws, monkeypatch):
    """How many times the manifest's file list was read."""
    calls = []
    inner = ws.manifest.file_paths

    def counted():
        calls.append(1)
        return inner()
    monkeypatch.setattr(ws.manifest, "file_paths", counted)
    return calls


BILLING = SearchFilters(include_globs=["svc/billing/**"], exclude_globs=["**/tax.py"])


def test_the_same_filter_reads_the_file_list_once_per_index_state(ws, listings):
    assert file_filter(ws, BILLING) == ["svc/billing/invoice.py"]
    assert file_filter(ws, BILLING) == ["svc/billing/invoice.py"]
    assert len(listings) == 1
    assert file_filter(ws, SearchFilters(include_globs=["svc/**"])) == [
        "svc/billing/invoice.py", "svc/billing/tax.py", "svc/search/rank.py"]
    assert len(listings) == 2  # another filter is matched on its own
    ws.touch(lexical=False)  # what the dense fill does after a batch: no file changed
    file_filter(ws, BILLING)
    assert len(listings) == 2


def test_a_file_added_under_the_glob_is_kept_after_the_next_index_run(ws, listings):
    kept = file_filter(ws, BILLING)
    kept.append("elsewhere.py")  # the caller's copy: the state's list is not changed through it
    assert file_filter(ws, BILLING) == ["svc/billing/invoice.py"]
    write_tree(ws.root, {"svc/billing/refund.py": "def refund(invoice):\n    return -invoice\n"})
    index_workspace(ws, dense=False)
    assert file_filter(ws, BILLING) == ["svc/billing/invoice.py", "svc/billing/refund.py"]
    hits = search(ws, "refund invoice", top_k=5, filters={"include_globs": ["svc/billing/**"]}).results
    assert hits and {h.path for h in hits} <= {"svc/billing/invoice.py", "svc/billing/refund.py", "svc/billing/tax.py"}
    assert "svc/billing/refund.py" in {h.path for h in hits}
