"""`probe doctor`: all green on the embedded default, stack parts neutral; endpoint checks against
real HTTP servers on 127.0.0.1 standing in for Qdrant, TEI and the reranker."""
from __future__ import annotations

import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from probe_core.config import WorkspaceConfig
from probe_core.doctor import Check, probe_endpoint, run_doctor, worst
from probe_core.doctor.local_checks import disk_check, fusion_roundtrip_check
from probe_core.hardware import NvmlReading, load_reading

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvml"
STACK_CHECKS = ("docker", "gpu_runtime", "stack", "qdrant", "tei", "reranker")


@pytest.fixture(autouse=True)
def no_engine(monkeypatch, tmp_path):
    """No Docker engine, as on the build machines (and deterministic where one exists)."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    for var in ("QDRANT_URL", "TEI_EMBED_URL", "RERANKER_URL", "PROBE_PRESET", "RERANKER_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


def test_embedded_default_on_this_machine_is_all_green(tmp_path):
    checks = run_doctor(WorkspaceConfig(), root=tmp_path)  # the real NVML reading: no driver here
    names = [c.name for c in checks]
    assert names == ["gpu", "tei_image", "preset", *STACK_CHECKS, "bm25_fusion", "disk", "index_files", "data_dir"]
    assert worst(checks) == "ok"
    for c in checks:
        assert c.status in ("ok", "skip"), c
    c = by_name(checks)
    for name in STACK_CHECKS:
        assert c[name].status == "skip"
        assert "not running" in c[name].detail or "not configured" in c[name].detail or "no local" in c[name].detail
    assert c["bm25_fusion"].status == "ok" and "order correct" in c["bm25_fusion"].detail
    assert c["gpu"].status == "ok" and c["preset"].status == "ok"


def test_fusion_roundtrip_is_real():
    check = fusion_roundtrip_check()
    assert check.status == "ok" and check.data["ms"] > 0


def test_h100_with_preset_pro_and_nothing_running(tmp_path):
    cfg = WorkspaceConfig(preset="pro")
    c = by_name(run_doctor(cfg, root=tmp_path, reading=load_reading(FIXTURES / "h100-80gb-hbm3.json")))
    assert c["gpu"].status == "ok" and "H100" in c["gpu"].detail and "CUDA 13.0" in c["gpu"].detail
    assert c["tei_image"].detail.startswith("hopper-1.9")
    assert c["preset"].status == "ok"
    assert c["tei"].status == "fail" and "probe up --profile pro" in c["tei"].fix
    assert c["docker"].status == "fail" and c["docker"].fix
    assert c["reranker"].status == "warn"  # quality mode falls back to RRF until it is set


def test_preset_too_big_for_the_gpu_warns_with_the_fitting_one(tmp_path):
    reading = load_reading(FIXTURES / "t4-16gb.json")
    c = by_name(run_doctor(WorkspaceConfig(preset="pro"), root=tmp_path, reading=reading))
    assert c["preset"].status == "warn" and "balanced" in c["preset"].fix
    assert c["tei_image"].status == "warn" and "turing" in c["tei_image"].detail  # experimental image


def test_unsupported_gpu_explains_the_cpu_image(tmp_path):
    c = by_name(run_doctor(WorkspaceConfig(), root=tmp_path, reading=load_reading(FIXTURES / "v100-32gb.json")))
    assert c["tei_image"].detail.startswith("cpu-1.9") and "7.5" in c["tei_image"].detail
    assert c["preset"].status == "ok"


# -- stand-in services on 127.0.0.1 ------------------------------------------------------------

class Stub(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _json(self, body, status=200):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        srv = self.server
        if srv.kind == "qdrant":
            if self.path == "/":
                return self._json({"title": "qdrant - vector search engine", "version": srv.version})
            if self.path.startswith("/collections/") and srv.collection_dims:
                return self._json({"result": {"config": {"params": {"vectors": {"dense": {
                    "size": srv.collection_dims, "distance": "Cosine"}}}}}})
            return self._json({"status": {"error": "Not found"}}, 404)
        if srv.kind == "tei" and self.path == "/info":
            return self._json({"model_id": srv.model, "version": "1.9.0"})
        if srv.kind == "reranker" and self.path == "/health":
            return self._json({"status": "ok", "model": "Qwen/Qwen3-Reranker-0.6B"})
        self._json({}, 404)

    def do_POST(self):
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if srv.kind == "tei" and self.path == "/embed":
            return self._json([[1.0] + [0.0] * (srv.dims - 1) for _ in body["inputs"]])
        if srv.kind == "reranker" and self.path == "/rerank":
            time.sleep(srv.delay)
            return self._json({"scores": [0.9, 0.1][: len(body["documents"])], "indices": [0, 1]})
        self._json({}, 404)


@pytest.fixture
def stub():
    servers = []

    def start(kind, **attrs):
        srv = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
        srv.daemon_threads = True
        srv.kind = kind
        defaults = {"version": "1.19.1", "collection_dims": None, "model": "Qwen/Qwen3-Embedding-0.6B",
                    "dims": 1024, "delay": 0.0}
        for k, v in {**defaults, **attrs}.items():
            setattr(srv, k, v)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def test_stack_endpoints_all_answering(stub, tmp_path):
    cfg = WorkspaceConfig(preset="balanced", qdrant_url=stub("qdrant", collection_dims=2560),
                          tei_url=stub("tei", model="Qwen/Qwen3-Embedding-4B", dims=2560),
                          reranker_url=stub("reranker"))
    c = by_name(run_doctor(cfg, root=tmp_path, reading=load_reading(FIXTURES / "h100-80gb-hbm3.json")))
    assert c["qdrant"].status == "ok" and "Qdrant 1.19.1" in c["qdrant"].detail and "2560-d" in c["qdrant"].detail
    assert c["tei"].status == "ok" and "2560-d matches the collection" in c["tei"].detail
    assert c["reranker"].status == "ok" and "Qwen3-Reranker" in c["reranker"].detail
    # answering on 127.0.0.1 without a local container: the doctor says where it comes from
    for name in ("qdrant", "tei", "reranker"):
        assert "reachable" in c[name].detail and "not a local container" in c[name].detail
    # endpoints answer, so no local Docker is needed (the two-computer setup)
    assert c["docker"].status == "skip"


def test_tei_dimension_mismatch_fails_with_the_fix(stub, tmp_path):
    cfg = WorkspaceConfig(preset="lite", tei_url=stub("tei", model="sentence-transformers/all-MiniLM-L6-v2", dims=384))
    c = by_name(run_doctor(cfg, root=tmp_path, reading=NvmlReading.no_gpu("x")))
    assert c["tei"].status == "fail" and "384-d" in c["tei"].detail and "1024-d" in c["tei"].detail
    assert "probe up --profile lite" in c["tei"].fix


def test_old_qdrant_fails(stub, tmp_path):
    cfg = WorkspaceConfig(qdrant_url=stub("qdrant", version="1.14.1"))
    c = by_name(run_doctor(cfg, root=tmp_path, reading=NvmlReading.no_gpu("x")))
    assert c["qdrant"].status == "fail" and "1.15.2" in c["qdrant"].detail


def test_unreachable_endpoint_fails_with_the_tunnel_hint(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = WorkspaceConfig(preset="lite", qdrant_url=f"http://127.0.0.1:{port}", tei_url=f"http://127.0.0.1:{port}")
    c = by_name(run_doctor(cfg, root=tmp_path, reading=NvmlReading.no_gpu("x")))
    assert c["qdrant"].status == "fail" and "not answering" in c["qdrant"].detail
    assert "SSH tunnel" in c["qdrant"].fix
    assert c["docker"].status == "fail"  # nothing answers and no engine to start it


def test_slow_reranker_warns_about_the_search_budget(stub, tmp_path):
    cfg = WorkspaceConfig(preset="embedded", reranker_url=stub("reranker", delay=0.4))
    c = by_name(run_doctor(cfg, root=tmp_path, reading=NvmlReading.no_gpu("x")))
    assert c["reranker"].status == "warn" and "300 ms" in c["reranker"].detail


def test_probe_endpoint_names_the_listening_process(stub):
    url = stub("tei")
    ep = probe_endpoint(url, client=None)
    assert ep.reachable and ep.port == int(url.rsplit(":", 1)[1])
    me = Path("/proc/self/comm").read_text().strip()
    assert ep.origin == f"process {me} (pid {os.getpid()}), not a local container"


def test_disk_check_thresholds(tmp_path):
    assert disk_check(tmp_path, "embedded", None).status == "ok"
    # the embedded preset needs what its index takes: ~15 bytes per byte of source, measured (it
    # estimated 0.5 GB where 5-15 MB were measured)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "big.py").write_text("x = 1\n" * 50_000)  # 300 KB of source
    small = disk_check(tmp_path, "embedded", None)
    assert 0.004 <= small.data["need_gb"] <= 0.01 and "MB)" in small.detail and "GB)" not in small.detail
    huge = disk_check(tmp_path, "pro", None)
    assert huge.data["need_gb"] == 45 and huge.status in ("ok", "warn", "fail")


def test_check_model():
    with pytest.raises(ValueError):
        Check("x", "green", "nope")
    assert worst([Check("a", "skip", ""), Check("b", "ok", "")]) == "ok"
    assert worst([Check("a", "warn", ""), Check("b", "fail", "")]) == "fail"
    assert Check("a", "ok", "d", data={"k": 1}).to_dict()["data"] == {"k": 1}


# -- the CLI verbs ----------------------------------------------------------------------------

def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    from probe_cli import stack_verbs
    from probe_cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if "doctor" not in sub.choices:  # until main.py registers the verbs itself
        stack_verbs.register(sub)
    args = parser.parse_args(argv)
    rc = args.func(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_doctor_json(tmp_path, capsys):
    rc, out, _ = run_cli(["doctor", "--json", "--root", str(tmp_path)], capsys)
    body = json.loads(out)
    assert rc == 0 and body["status"] == "ok"
    assert {c["name"]: c["status"] for c in body["checks"]}["qdrant"] == "skip"


def test_cli_doctor_text(tmp_path, capsys):
    rc, out, _ = run_cli(["doctor", "--root", str(tmp_path)], capsys)
    assert rc == 0 and "bm25_fusion" in out and "all good" in out and "not configured" in out


def test_cli_up_dry_run_and_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PROBE_STATE_DIR", str(tmp_path / "state"))
    rc, out, _ = run_cli(["up", "--profile", "balanced", "--dry-run"], capsys)
    assert rc == 0 and "PROBE_PRESET=balanced" in out and "--profile balanced up --detach" in out
    from probe_core.errors import ProbeError

    with pytest.raises(ProbeError, match="embedded default"):
        run_cli(["up"], capsys)  # no GPU here: no preset recommended
    with pytest.raises(ProbeError, match="start Docker"):
        run_cli(["up", "--profile", "lite"], capsys)
    with pytest.raises(ProbeError, match="started nothing"):
        run_cli(["down"], capsys)
