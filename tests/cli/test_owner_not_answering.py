"""A CLI call when the workspace's owner accepts a connection and never answers: the error, and status read around it."""
from __future__ import annotations

import os
import socket

import pytest

from probe_cli.owner_verbs import _check_alive
from probe_core.engine.lock import socket_path_for, write_owner_info
from probe_core.errors import OwnerNotAnswering


def test_a_silent_owner_is_named_as_the_user_knows_it(tmp_path, monkeypatch):
    probe_dir = tmp_path / ".probe"
    probe_dir.mkdir()
    path = socket_path_for(probe_dir)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        listener.listen(1)  # connections queue and are never answered: a stopped owner
        write_owner_info(probe_dir, path, kind="index")
        monkeypatch.setenv("PROBE_OWNER_PING_S", "0.2")
        with pytest.raises(OwnerNotAnswering) as err:
            _check_alive(tmp_path, probe_dir)
    finally:
        listener.close()
    # it said "the Probe index process": a blocking `probe index` is what the user ran
    assert str(err.value).startswith(f"the probe index process (pid {os.getpid()})"), err.value
    assert err.value.pid == os.getpid()


def test_status_around_a_silent_owner_reads_the_counts_under_any_folder_name(tmp_path):
    from probe_cli.owner_verbs import status_without_owner
    from probe_core.storage.manifest import Manifest

    root = tmp_path / "C# projects"
    (root / ".probe").mkdir(parents=True)
    Manifest(root / ".probe" / "manifest.sqlite").close()  # the real schema, empty
    out = status_without_owner(root, OwnerNotAnswering("silent", pid=1))
    # the '#' cut the read-only URI: the counts came back None
    assert (out["files_indexed"], out["chunks_indexed"], out["index_generation"]) == (0, 0, 0)


def test_status_around_a_silent_owner_names_its_kind(tmp_path, capsys):
    from probe_cli.owner_verbs import status_without_owner
    from probe_cli.render import print_status

    probe_dir = tmp_path / ".probe"
    probe_dir.mkdir()
    write_owner_info(probe_dir, socket_path_for(probe_dir), kind="daemon")
    print_status(status_without_owner(tmp_path, OwnerNotAnswering("silent", pid=os.getpid())))
    # a stopped daemon was shown as "owner  probe mcp pid N" (no kind: the default name)
    assert f"Probe daemon pid {os.getpid()}" in capsys.readouterr().out
