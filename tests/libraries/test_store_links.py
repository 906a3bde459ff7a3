"""Storing a document on a filesystem without hard links (FAT, some network and FUSE mounts):
``os.link`` fails there with EPERM/ENOTSUP, and the document is written in place instead, still
without replacing anything or following a planted link."""
from __future__ import annotations

import errno
import os

import pytest

from probe_core.libraries import store_doc


@pytest.fixture
def no_hard_links(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(store_doc.os, "link", refuse)


def test_a_document_is_written_where_hard_links_are_refused(tmp_path, no_hard_links):
    store_doc._write_new(tmp_path, "note-abc.md", "# Note\nbody\n")
    assert (tmp_path / "note-abc.md").read_text() == "# Note\nbody\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["note-abc.md"]  # no temp file left behind


def test_the_fallback_neither_replaces_a_file_nor_follows_a_link(tmp_path, no_hard_links):
    (tmp_path / "taken.md").write_text("the user's own\n")
    with pytest.raises(FileExistsError):
        store_doc._write_new(tmp_path, "taken.md", "new\n")
    assert (tmp_path / "taken.md").read_text() == "the user's own\n"
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    os.symlink(outside, tmp_path / "planted.md")
    with pytest.raises(OSError):
        store_doc._write_new(tmp_path, "planted.md", "new\n")
    assert not outside.exists()


def test_other_link_errors_are_not_swallowed(tmp_path, monkeypatch):
    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_doc.os, "link", full)
    with pytest.raises(OSError) as err:
        store_doc._write_new(tmp_path, "note.md", "body\n")
    assert err.value.errno == errno.ENOSPC and list(tmp_path.iterdir()) == []
