"""The error a CLI call gives when the workspace's owner accepts a connection and never answers."""
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
