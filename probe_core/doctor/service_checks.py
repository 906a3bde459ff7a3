"""Docker, the stack's containers, and the three endpoints (Qdrant, TEI, reranker).

Nothing configured (the embedded default) → ``skip`` with "not configured"/"not running": the
stack is optional, its absence is not a failure.
"""
from __future__ import annotations

import re

import docker
import httpx

from .. import environment
from ..config import WorkspaceConfig
from ..errors import ProbeError
from ..stack.docker_state import gpu_runtime, service_logs, service_states
from .endpoints import Endpoint, probe_endpoint
from .model import Check

G = "stack"
MIN_QDRANT = (1, 15, 2)


def _version_tuple(text: str) -> tuple[int, ...] | None:
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    return tuple(int(x or 0) for x in m.groups()) if m else None


def docker_check(client: docker.DockerClient | None, error: str | None, needed: bool) -> Check:
    if client is not None:
        try:
            v = client.version()
            what = f"{v.get('Components', [{}])[0].get('Name') or 'engine'} {v.get('Version', '?')}"
        except Exception:  # noqa: BLE001 - version is decoration; ping already succeeded
            what = "engine"
        return Check("docker", "ok", f"{what} reachable at {environment.get('DOCKER_HOST') or 'the default socket'}",
                     group=G)
    if needed:
        return Check("docker", "fail", error or "no Docker engine answers",
                     fix="start Docker (or `podman system service` and set DOCKER_HOST), then `probe up`", group=G)
    return Check("docker", "skip", "not running (not needed: the embedded default or remote endpoints)", group=G)


def gpu_runtime_check(client: docker.DockerClient | None, has_gpu: bool, stack_preset: bool) -> Check:
    if client is None:
        return Check("gpu_runtime", "skip", "no local Docker engine", group=G)
    if not has_gpu:
        return Check("gpu_runtime", "skip", "no local GPU to hand to containers", group=G)
    try:
        ok, detail = gpu_runtime(client)
    except ProbeError as exc:
        return Check("gpu_runtime", "warn", str(exc), group=G)
    if ok:
        return Check("gpu_runtime", "ok", detail, group=G)
    return Check("gpu_runtime", "warn" if stack_preset else "skip", detail,
                 fix="install nvidia-container-toolkit, `sudo nvidia-ctk runtime configure --runtime=docker`, "
                     "restart Docker", group=G)


def containers_check(client: docker.DockerClient | None, project: str, stack_preset: bool) -> Check:
    if client is None:
        return Check("stack", "skip", "not running (no local Docker engine)", group=G)
    try:
        states = service_states(client, project)
    except ProbeError as exc:
        return Check("stack", "warn", str(exc), group=G)
    if not states:
        if stack_preset:
            return Check("stack", "skip", f"not running here (no `{project}` containers)",
                         fix="`probe up` starts it, unless the endpoints are another machine's", group=G)
        return Check("stack", "skip", "not running (the embedded default does not use it)", group=G)
    data = {n: {"status": s.status, "health": s.health, "image": s.image} for n, s in states.items()}
    line = "; ".join(s.describe() for s in states.values())
    failed = [s for s in states.values() if s.failed]
    if failed:
        tail = service_logs(client, project, failed[0].service, tail=3).strip().splitlines()
        last = f"; {failed[0].service} last logged: {tail[-1].strip()[:160]}" if tail else ""
        return Check("stack", "fail", line + last,
                     fix=f"`docker compose -p {project} logs {failed[0].service}`, then `probe up` again", group=G, data=data)
    if not all(s.ready for s in states.values()):
        return Check("stack", "warn", line + " (still starting: the first start downloads models)", group=G, data=data)
    return Check("stack", "ok", line, group=G, data=data)


def _not_configured(name: str, what: str) -> Check:
    return Check(name, "skip", f"not configured ({what})", group=G)


def _unreachable(name: str, ep: Endpoint, env_var: str) -> Check:
    return Check(name, "fail", ep.where, group=G,
                 fix=f"`probe up`, or open the SSH tunnel (docs/stack.md), or fix {env_var}")


def qdrant_check(cfg: WorkspaceConfig, client, timeout_s: float) -> tuple[Check, int | None]:
    """(check, dense size of this preset's collection if the server has it)."""
    url = cfg.qdrant_url
    if not url:
        return _not_configured("qdrant", "the embedded Qdrant Edge store is in use; set QDRANT_URL for a server"), None
    if url.startswith("local:"):
        return Check("qdrant", "ok", f"{url}: qdrant-client local mode (tests only)", group=G), None
    ep = probe_endpoint(url, client, timeout_s)
    if not ep.reachable:
        return _unreachable("qdrant", ep, "QDRANT_URL"), None
    headers = {"api-key": cfg.qdrant_api_key} if cfg.qdrant_api_key else {}
    try:
        with httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout_s * 2) as http:
            root = http.get("/")
            root.raise_for_status()
            version = str(root.json().get("version", ""))
            coll = http.get(f"/collections/chunks_{cfg.preset}")
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return Check("qdrant", "fail", f"{ep.where}, but not as Qdrant: {type(exc).__name__}: {exc}"[:300],
                     fix="check QDRANT_URL (and QDRANT_API_KEY) point at a Qdrant server", group=G), None
    dims = None
    if coll.status_code == 200:
        try:
            vectors = coll.json()["result"]["config"]["params"]["vectors"]
            dims = int(vectors["dense"]["size"]) if isinstance(vectors, dict) and "dense" in vectors else None
        except (ValueError, KeyError, TypeError):
            dims = None
    have = _version_tuple(version)
    data = {"version": version, "origin": ep.origin, "collection_dims": dims}
    if have is None or have < MIN_QDRANT:
        return Check("qdrant", "fail", f"{ep.where}: Qdrant {version or '?'} is older than 1.15.2", group=G,
                     fix="upgrade the Qdrant image (the compose file pins a newer one)", data=data), dims
    coll_note = f"; collection chunks_{cfg.preset} has {dims}-d vectors" if dims else f"; no chunks_{cfg.preset} collection yet"
    return Check("qdrant", "ok", f"{ep.where}: Qdrant {version}{coll_note}", group=G, data=data), dims


def tei_check(cfg: WorkspaceConfig, client, timeout_s: float, collection_dims: int | None) -> Check:
    url = cfg.tei_url
    if not url:
        if cfg.preset != "embedded":
            return Check("tei", "fail", f"not configured, and preset {cfg.preset} embeds only through TEI",
                         fix=f"`probe up --profile {cfg.preset}` and set TEI_EMBED_URL=http://127.0.0.1:8080, "
                             "or `probe init --preset embedded`", group=G)
        return _not_configured("tei", "the in-process embedder is in use; set TEI_EMBED_URL for TEI")
    ep = probe_endpoint(url, client, timeout_s)
    if not ep.reachable:
        return _unreachable("tei", ep, "TEI_EMBED_URL")
    from ..embedding.tei import TeiEmbedder

    spec = cfg.preset_spec
    try:
        with TeiEmbedder(url, model_id=spec.embedding_model, dimensions=None, api_key=cfg.tei_api_key,
                         timeout=max(5.0, timeout_s * 4), retries=0) as tei:
            dims = tei.dimensions
            try:
                served = tei.info().model_id
            except ProbeError:
                served = "?"
    except ProbeError as exc:
        return Check("tei", "fail", f"{ep.where}, but the test embed failed: {exc}"[:300],
                     fix="`docker compose -p probe logs tei` (a model still downloading answers 503)", group=G)
    data = {"model": served, "dimensions": dims, "origin": ep.origin}
    expected = collection_dims or spec.dimensions
    against = "the collection" if collection_dims else f"preset {spec.name}"
    if expected and dims != expected:
        return Check("tei", "fail", f"{ep.where}: {served} gives {dims}-d vectors, {against} expects {expected}-d",
                     fix=f"serve {spec.embedding_model} (`probe up --profile {spec.name}`) or reindex "
                         "with `probe index --rebuild`", group=G, data=data)
    return Check("tei", "ok", f"{ep.where}: {served}, test embed {dims}-d matches {against}", group=G, data=data)


def reranker_check(cfg: WorkspaceConfig, client, timeout_s: float) -> Check:
    url = cfg.reranker_url
    spec = cfg.preset_spec
    if not url:
        if spec.reranker_model:
            return Check("reranker", "warn", f"not configured; preset {spec.name} expects {spec.reranker_model}",
                         fix="set RERANKER_URL (http://127.0.0.1:8081 with `probe up`); until then quality "
                             "mode keeps RRF order", group=G)
        return _not_configured("reranker", f"off for preset {spec.name}")
    ep = probe_endpoint(url, client, timeout_s)
    if not ep.reachable:
        return _unreachable("reranker", ep, "RERANKER_URL")
    from ..rerank import RerankClient

    try:
        with RerankClient(url, timeout_s=max(10.0, timeout_s), api_key=environment.get("RERANKER_API_KEY")) as rr:
            health = rr.health(timeout_s=timeout_s * 2)
            scores = rr.rerank_or_raise("parse an HTTP header", ["def parse_header(line): ...", "import os"])
            latency = rr.last_latency_ms or 0.0
    except ProbeError as exc:
        return Check("reranker", "fail", f"{ep.where}, but: {exc}", group=G,
                     fix="`docker compose -p probe logs reranker` (the first start downloads the model)")
    data = {"model": health.model, "origin": ep.origin, "latency_ms": round(latency, 1)}
    slow = latency > 300
    return Check("reranker", "warn" if slow else "ok",
                 f"{ep.where}: {health.model or 'model ?'}, 2 documents scored in {latency:.0f} ms"
                 + (" (over the 300 ms search budget: quality mode will fall back to RRF)" if slow else "")
                 + f" ({', '.join(f'{s:.2f}' for s in scores)})",
                 group=G, data=data)
