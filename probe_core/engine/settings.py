"""Knobs of the long-running engine (``probe mcp``), parsed and checked in one place.

Every value has a default sized for a developer machine; tests shorten the timers. The variables
(``PROBE_WATCH``, ``PROBE_DEBOUNCE_S``, ... ``PROBE_DAEMON``), their defaults and meanings are listed
with every other setting in ``probe_core/environment.py`` (tests check the defaults agree).
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import environment
from ..errors import ConfigError
from ..indexing.watcher import WatchSettings
from ..memory.seen import RECORD_INTERVAL_S

_WATCH = WatchSettings()  # the watcher's defaults are the single source for the engine's


def _float(env: dict, name: str, default: float, minimum: float = 0.0) -> float:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}")
    return value


@dataclass(frozen=True, slots=True)
class EngineSettings:
    watch: bool = True
    debounce_s: float = _WATCH.debounce_s
    max_wait_s: float = _WATCH.max_wait_s
    stable_s: float = _WATCH.stable_s
    burst_files: int = _WATCH.burst_files
    rescan_s: float = _WATCH.rescan_s
    watcher_max_restarts: int = _WATCH.max_restarts
    dense_batch: int = 16
    max_backoff_s: float = 30.0
    attach_timeout_s: float = 30.0
    rpc_timeout_s: float = 120.0
    takeover_poll_s: float = 0.5
    ready_timeout_s: float = 30.0  # a search waits this long for the index to open (model load, shard open)
    default_max_tokens: int = 6000
    record_interval_s: float = RECORD_INTERVAL_S  # heartbeat; prune's server floor assumes at most this
    daemon_idle_s: float = 600.0
    optimize_idle_s: float = 60.0  # idle this long after the fill, the owner optimizes a much-written store

    def watch_settings(self) -> WatchSettings:
        return WatchSettings(debounce_s=self.debounce_s, max_wait_s=self.max_wait_s, stable_s=self.stable_s,
                             burst_files=self.burst_files, rescan_s=self.rescan_s,
                             max_restarts=self.watcher_max_restarts)

    @classmethod
    def from_env(cls, env: dict | None = None) -> EngineSettings:
        env = environment.environ() if env is None else env
        d = cls()  # the defaults (a slots dataclass has no class-level field values)
        return cls(
            watch=env.get("PROBE_WATCH", "1").strip().lower() not in ("0", "false", "no", "off"),
            debounce_s=_float(env, "PROBE_DEBOUNCE_S", d.debounce_s),
            max_wait_s=_float(env, "PROBE_MAX_WAIT_S", d.max_wait_s, 0.1),
            stable_s=_float(env, "PROBE_STABLE_S", d.stable_s),
            burst_files=int(_float(env, "PROBE_BURST_FILES", d.burst_files, 1)),
            rescan_s=_float(env, "PROBE_RESCAN_S", d.rescan_s, 1.0),
            dense_batch=int(_float(env, "PROBE_DENSE_BATCH", d.dense_batch, 1)),
            attach_timeout_s=_float(env, "PROBE_ATTACH_TIMEOUT_S", d.attach_timeout_s, 0.1),
            rpc_timeout_s=_float(env, "PROBE_RPC_TIMEOUT_S", d.rpc_timeout_s, 0.1),
            takeover_poll_s=_float(env, "PROBE_TAKEOVER_POLL_S", d.takeover_poll_s, 0.05),
            default_max_tokens=int(_float(env, "PROBE_MAX_TOKENS", d.default_max_tokens, 256)),
            daemon_idle_s=_float(env, "PROBE_DAEMON_IDLE_S", d.daemon_idle_s, 1.0),
            optimize_idle_s=_float(env, "PROBE_OPTIMIZE_IDLE_S", d.optimize_idle_s),
            record_interval_s=min(_float(env, "PROBE_RECORD_INTERVAL_S", d.record_interval_s, 0.1), RECORD_INTERVAL_S),
        )
