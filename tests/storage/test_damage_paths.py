"""The damage check of ``storage/damage.py`` on a repository whose path holds URI characters."""
from __future__ import annotations

import sqlite3

import pytest

from probe_core.storage.damage import quick_check


@pytest.mark.parametrize("folder", ["C#", "what?", "100%"])
def test_a_garbled_manifest_is_found_whatever_the_folder_is_called(tmp_path, folder):
    path = tmp_path / folder / "manifest.sqlite"
    path.parent.mkdir()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with open(path, "r+b") as f:
        f.write(b"\0" * 100)  # the header gone: not a database any more
    # the check opened "file:.../C" (the rest read as a URI fragment), failed to open it, and
    # took the failure for a busy file: the damage went unseen
    assert quick_check(path) is not None
