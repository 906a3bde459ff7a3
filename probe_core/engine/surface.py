"""The owner's RPC surface: which methods an attached process may call, and how their params travel.

The methods are read off the protocols in ``protocol.py``: ``Engine`` (what every face calls),
less ``close`` (it ends the caller's own engine, never the owner's), and ``OwnerControl`` (what
only an owner answers: ``ping``, ``shutdown``). So a verb added to the protocol is served, and a
request for any other name is refused with the error it always got, whatever the owner object
happens to have. ``client.AttachedEngine`` writes the params read here; most are the method's
keyword arguments by name.
"""
from __future__ import annotations

from collections.abc import Callable

from ..errors import ProbeError
from ..records import SearchRequest
from .protocol import Engine, OwnerControl

LOCAL_ONLY = frozenset({"close"})


def protocol_methods(protocol: type) -> frozenset[str]:
    """The public methods a protocol class declares."""
    return frozenset(name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_"))


RPC_METHODS = (protocol_methods(Engine) - LOCAL_ONLY) | protocol_methods(OwnerControl)

# The params that are not simply the method's keyword arguments.
_ARGUMENTS: dict[str, Callable[[dict], tuple[tuple, dict]]] = {
    "search": lambda p: ((SearchRequest(**p),), {}),  # SearchRequest.params()
    "intel": lambda p: ((p["tool"], p.get("args") or {}), {}),
    "memory": lambda p: ((p["action"], p.get("args") or {}), {}),
    "index_status": lambda _p: ((), {}),
    "ping": lambda _p: ((), {}),
    "shutdown": lambda _p: ((), {}),
}


def serve(engine: object, method: str, params: dict) -> object:
    """Answer one RPC request with ``engine``'s method of that name; a name off the surface is refused."""
    if method not in RPC_METHODS:
        raise ProbeError(f"unknown engine method {method!r}")
    decode = _ARGUMENTS.get(method)
    args, kwargs = decode(params) if decode is not None else ((), dict(params))
    return getattr(engine, method)(*args, **kwargs)
