"""``probe doctor``: is this machine, and the stack it is configured for, able to serve Probe?

``run_doctor(config)`` returns one :class:`Check` per concern (GPU and driver, TEI image, preset
fit, Docker, GPU runtime, containers, Qdrant, TEI, reranker, a BM25 + fusion round-trip, disk),
each ok / warn / fail / skip with a one-line fix. The CLI prints them; the TUI's doctor screen
shows the same list. On the embedded default every stack check is ``skip`` ("not configured" /
"not running"), which is neutral, never a failure.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..config import WorkspaceConfig
from ..errors import ProbeError
from ..hardware import NvmlReading, read_nvml, recommend
from ..stack.compose import DEFAULT_PROJECT
from ..stack.docker_state import connect
from .endpoints import Endpoint, listener_process, probe_endpoint
from .hardware_checks import gpu_check, preset_check, tei_image_check
from .local_checks import data_dir_check, disk_check, fusion_roundtrip_check, index_files_check
from .model import STATUSES, Check, Status, worst
from .service_checks import (
    containers_check,
    docker_check,
    gpu_runtime_check,
    qdrant_check,
    reranker_check,
    tei_check,
)


def run_doctor(
    config: WorkspaceConfig | None = None,
    *,
    root: Path | str | None = None,
    reading: NvmlReading | None = None,
    project: str = DEFAULT_PROJECT,
    timeout_s: float = 1.5,
) -> list[Check]:
    """Every check, in display order. Never raises for a missing GPU, engine or service.

    ``reading`` replaces this machine's NVML reading (tests feed fixtures); Docker is whatever
    ``DOCKER_HOST`` (or the default socket) names.
    """
    cfg = config or WorkspaceConfig().with_env()
    root = Path(root or os.getcwd())
    reading = reading if reading is not None else read_nvml()
    rec = recommend(reading)
    preset = cfg.preset
    stack_preset = preset != "embedded"
    checks = [gpu_check(reading, preset), tei_image_check(rec), preset_check(rec, preset)]

    try:
        client, docker_error = connect(timeout=timeout_s), None
    except ProbeError as exc:
        client, docker_error = None, str(exc)

    qdrant, collection_dims = qdrant_check(cfg, client, timeout_s)
    tei = tei_check(cfg, client, timeout_s, collection_dims)
    reranker = reranker_check(cfg, client, timeout_s)
    endpoints = [c for c in (qdrant, tei, reranker) if c.status != "skip"]
    # Docker matters only when a stack endpoint is configured and does not answer from elsewhere.
    needs_docker = stack_preset and (not endpoints or any(c.status == "fail" for c in endpoints))
    docker_info = None
    if client is not None:
        try:
            docker_info = client.info()
        except Exception:  # noqa: BLE001 - info is optional detail; ping already answered
            docker_info = None
    checks += [
        docker_check(client, docker_error, needs_docker),
        gpu_runtime_check(client, reading.has_gpu, stack_preset),
        containers_check(client, project, stack_preset),
        qdrant, tei, reranker,
        fusion_roundtrip_check(),
        disk_check(root, preset, (docker_info or {}).get("DockerRootDir")),
        index_files_check(root),
        data_dir_check(),
    ]
    if client is not None:
        client.close()
    return checks


__all__ = ["STATUSES", "Check", "Endpoint", "Status", "listener_process", "probe_endpoint", "run_doctor", "worst"]
