"""The owner's RPC surface is the ``Engine`` protocol's methods (and ``OwnerControl``'s), read off
``protocol.py``: an attached process reaches those verbs, with the params ``AttachedEngine``
writes, and no other method of the owner object, whatever it has (real socket, real owner)."""
from __future__ import annotations

import pytest

from probe_core.engine.protocol import Engine, OwnerControl
from probe_core.engine.rpc import rpc_call
from probe_core.engine.service import OwnerEngine
from probe_core.engine.settings import EngineSettings
from probe_core.engine.surface import RPC_METHODS, protocol_methods, serve
from probe_core.errors import ProbeError
from probe_core.records import SearchRequest


def test_the_whitelist_is_the_protocols_methods():
    engine_verbs = {"search", "open_file", "index_status", "intel", "memory", "index_paths", "rescan"}
    assert protocol_methods(Engine) == engine_verbs | {"close"}
    assert protocol_methods(OwnerControl) == {"ping", "shutdown"}
    # close ends the caller's own engine: never the owner's, on anyone's request
    assert RPC_METHODS == (protocol_methods(Engine) - {"close"}) | protocol_methods(OwnerControl)
    assert RPC_METHODS - protocol_methods(OwnerControl) == engine_verbs


class Recorder:
    """Has every verb, and other methods besides, as an owner object does."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return lambda *args, **kwargs: self.calls.append((name, args, kwargs)) or name


def test_a_verb_gets_its_arguments_and_anything_else_is_refused():
    engine = Recorder()
    request = SearchRequest("parse headers", top_k=3, filters={"languages": ["python"]})
    assert serve(engine, "search", request.params()) == "search"
    assert engine.calls[-1] == ("search", (request,), {})
    serve(engine, "intel", {"tool": "find_callers", "args": None})
    assert engine.calls[-1] == ("intel", ("find_callers", {}), {})
    serve(engine, "rescan", {"timeout": 5})
    assert engine.calls[-1] == ("rescan", (), {"timeout": 5})
    serve(engine, "index_status", {})
    assert engine.calls[-1] == ("index_status", (), {})
    before = len(engine.calls)
    for name in ("close", "request_scan", "dispatch", "_fail", "__init__", "idle_seconds", "", "search "):
        with pytest.raises(ProbeError, match=f"unknown engine method {name!r}"):
            serve(engine, name, {})
    assert len(engine.calls) == before  # nothing was called


def test_an_owner_answers_its_verbs_and_refuses_other_names(repo, monkeypatch):
    monkeypatch.setenv("PROBE_WATCH", "0")
    engine = OwnerEngine(repo, EngineSettings.from_env(), kind="daemon").start()
    try:
        sock = engine.socket_path
        assert rpc_call(sock, "ping", {}, timeout=30)["kind"] == "daemon"
        for name in ("close", "request_scan", "_fail", "dispatch"):
            with pytest.raises(ProbeError, match=f"unknown engine method {name!r}"):
                rpc_call(sock, name, {}, timeout=30)
        assert not engine._stop.is_set()  # "close" over RPC closed nothing
        status = rpc_call(sock, "index_status", {}, timeout=30)
        assert status["owner_kind"] == "daemon" and status["root"] == str(engine.root)
        assert rpc_call(sock, "shutdown", {}, timeout=30)["stopping"] is True
        assert engine.shutdown_requested.is_set()
    finally:
        engine.close()
