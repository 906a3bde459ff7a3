"""The compose files: profiles, 127.0.0.1-only ports, healthchecks, GPU reservations, variants.

Checked twice: by reading the YAML, and by the real Compose v2 binary (`config`) per profile.
"""
from __future__ import annotations

import re
import shutil
import socket
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from probe_core.config import PRESETS
from probe_core.hardware import TEI_IMAGE_REPO, TEI_VERSION, NvmlReading, load_reading, recommend
from probe_core.stack.settings import plan, write_env_file

from .conftest import COMPOSE_DIR, load_compose

PROFILES = ("lite", "balanced", "pro")
H100 = COMPOSE_DIR.parent / "tests" / "fixtures" / "nvml" / "h100-80gb-hbm3.json"
BASE_ENV = {"TEI_IMAGE_TAG": "hopper-1.9", "TEI_MODEL_ID": "Qwen/Qwen3-Embedding-0.6B"}


@pytest.fixture(scope="module")
def base():
    return load_compose("docker-compose.yml")


def test_profiles(base):
    svc = base["services"]
    assert set(svc) == {"qdrant", "tei", "reranker"}
    assert set(svc["qdrant"]["profiles"]) == set(PROFILES)
    assert set(svc["tei"]["profiles"]) == set(PROFILES)
    assert set(svc["reranker"]["profiles"]) == {"balanced", "pro"}


@pytest.mark.parametrize("name", ["docker-compose.yml", "docker-compose.cpu.yml", "docker-compose.auth.yml"])
def test_every_port_is_bound_to_loopback(name):
    for svc, spec in (load_compose(name).get("services") or {}).items():
        for port in spec.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name}: {svc} publishes {port} beyond 127.0.0.1"


def test_the_lan_override_is_marked_unsafe():
    text = (COMPOSE_DIR / "docker-compose.lan.yml").read_text()
    assert "UNSAFE" in text.splitlines()[0]
    ports = [p for s in load_compose("docker-compose.lan.yml")["services"].values() for p in s["ports"]]
    assert ports and all(p.startswith("0.0.0.0:") for p in ports)
    assert "!override" in text  # replaces the loopback bindings instead of adding to them


def test_healthchecks_everywhere(base):
    for name, spec in base["services"].items():
        hc = spec["healthcheck"]
        assert hc["test"] and hc["interval"] and hc["retries"], name


def test_gpu_reservations(base):
    for name in ("tei", "reranker"):
        (dev,) = base["services"][name]["deploy"]["resources"]["reservations"]["devices"]
        assert dev["driver"] == "nvidia" and dev["capabilities"] == ["gpu"]
        assert dev["device_ids"] == ["${PROBE_GPU_DEVICE:-0}"]
    assert "deploy" not in base["services"]["qdrant"]


def test_qdrant_image_and_volume(base):
    q = base["services"]["qdrant"]
    tag = re.search(r"\$\{QDRANT_IMAGE_TAG:-v([\d.]+)\}", q["image"]).group(1)
    assert tuple(map(int, tag.split("."))) >= (1, 15, 2)
    assert q["image"].startswith("qdrant/qdrant:")
    assert "qdrant_storage:/qdrant/storage" in q["volumes"]
    assert "qdrant_storage" in base["volumes"]


def test_tei_image_model_and_cache(base):
    t = base["services"]["tei"]
    assert t["image"].startswith(f"{TEI_IMAGE_REPO}:${{TEI_IMAGE_TAG:?")
    assert t["environment"]["MODEL_ID"].startswith("${TEI_MODEL_ID:?")
    assert "tei_models:/data" in t["volumes"]
    assert TEI_VERSION not in (COMPOSE_DIR / "docker-compose.yml").read_text()  # the version lives in Python


def test_reranker_builds_the_service(base):
    r = base["services"]["reranker"]
    assert r["build"]["context"] == "../services/reranker"
    assert (COMPOSE_DIR / r["build"]["context"] / "Dockerfile").is_file()


@pytest.mark.parametrize("profile", PROFILES)
def test_compose_v2_accepts_each_profile(compose_config, profile):
    rc, cfg = compose_config(["docker-compose.yml"], profile, BASE_ENV)
    assert rc == 0, cfg
    expected = {"qdrant", "tei"} | ({"reranker"} if profile != "lite" else set())
    assert set(cfg["services"]) == expected
    for name, svc in cfg["services"].items():
        assert svc["ports"] and all(p["host_ip"] == "127.0.0.1" for p in svc["ports"]), name
        assert svc["healthcheck"]["test"], name
    assert cfg["services"]["tei"]["image"] == f"{TEI_IMAGE_REPO}:hopper-1.9"
    assert cfg["services"]["tei"]["deploy"]["resources"]["reservations"]["devices"][0]["driver"] == "nvidia"
    assert {p["published"] for p in cfg["services"]["qdrant"]["ports"]} == {"6333"}
    assert {p["published"] for p in cfg["services"]["tei"]["ports"]} == {"8080"}


def test_compose_refuses_to_run_without_a_tei_tag(compose_config):
    rc, err = compose_config(["docker-compose.yml"], "lite", {})
    assert rc != 0 and "is missing a value" in err and "probe up" in err
    rc, err = compose_config(["docker-compose.yml"], "lite", {"TEI_MODEL_ID": "m"})
    assert rc != 0 and "TEI_IMAGE_TAG" in err and "probe up" in err


def test_cpu_variant_drops_the_gpu(compose_config):
    rc, cfg = compose_config(["docker-compose.yml", "docker-compose.cpu.yml"], "balanced",
                             {**BASE_ENV, "TEI_IMAGE_TAG": "cpu-1.9"})
    assert rc == 0, cfg
    for name in ("tei", "reranker"):
        assert not (cfg["services"][name].get("deploy") or {}).get("resources"), name
    assert cfg["services"]["tei"]["image"].endswith(":cpu-1.9")
    assert cfg["services"]["reranker"]["build"]["args"]["TORCH_INDEX_URL"].endswith("/cpu")


def test_auth_override_needs_and_wires_the_keys(compose_config):
    files = ["docker-compose.yml", "docker-compose.auth.yml"]
    rc, err = compose_config(files, "pro", BASE_ENV)
    assert rc != 0 and "_API_KEY is missing" in err
    keys = {"QDRANT_API_KEY": "qk", "TEI_API_KEY": "tk", "RERANKER_API_KEY": "rk"}
    rc, cfg = compose_config(files, "pro", {**BASE_ENV, **keys})
    assert rc == 0, cfg
    s = cfg["services"]
    assert s["qdrant"]["environment"]["QDRANT__SERVICE__API_KEY"] == "qk"
    assert s["tei"]["command"][-2:] == ["--api-key", "tk"]
    assert "Authorization: Bearer tk" in s["tei"]["healthcheck"]["test"]
    assert s["reranker"]["environment"]["RERANKER_API_KEY"] == "rk"
    assert all(p["host_ip"] == "127.0.0.1" for svc in s.values() for p in svc["ports"])


def test_lan_override_replaces_the_bindings(compose_config):
    keys = {"QDRANT_API_KEY": "q", "TEI_API_KEY": "t", "RERANKER_API_KEY": "r"}
    rc, cfg = compose_config(["docker-compose.yml", "docker-compose.auth.yml", "docker-compose.lan.yml"],
                             "balanced", {**BASE_ENV, **keys})
    assert rc == 0, cfg
    for name, svc in cfg["services"].items():
        assert [p["host_ip"] for p in svc["ports"]] == ["0.0.0.0"], name


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("machine", ["h100", "no-gpu"])
def test_env_files_written_by_probe_up_satisfy_compose(compose_config, tmp_path, profile, machine):
    reading = load_reading(H100) if machine == "h100" else NvmlReading.no_gpu("none")
    settings = plan(profile, recommend(reading, machine="x86_64"), env={})
    env_file = write_env_file(settings, tmp_path / "stack.env")
    rc, cfg = compose_config(list(settings.files), profile, {}, env_file=env_file)
    assert rc == 0, cfg
    s = cfg["services"]
    assert set(s) == set(settings.services)
    assert s["tei"]["environment"]["MODEL_ID"] == PRESETS[profile].embedding_model
    if "reranker" in s:
        assert s["reranker"]["environment"]["RERANKER_MODEL"] == PRESETS[profile].reranker_model
    devices = (s["tei"].get("deploy") or {}).get("resources", {}).get("reservations", {}).get("devices")
    if machine == "h100":
        assert s["tei"]["image"].endswith(":hopper-1.9") and devices[0]["device_ids"] == ["0"]
    else:
        assert s["tei"]["image"].endswith(":cpu-1.9") and not devices


class _Readyz(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        ok = self.path == "/readyz" and self.server.ready
        self.send_response(200 if ok else 503)
        self.end_headers()
        self.wfile.write(b"all shards are ready" if ok else b"not ready")


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is what the Qdrant image runs the check with")
def test_qdrant_healthcheck_command_really_probes_readyz(base):
    """The Qdrant image has no curl: the check speaks HTTP over bash's /dev/tcp. Run it for real."""
    _, script = base["services"]["qdrant"]["healthcheck"]["test"]
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Readyz)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        cmd = script.replace("6333", str(srv.server_address[1]))
        srv.ready = True
        assert subprocess.run(["sh", "-c", cmd], timeout=10, check=False).returncode == 0
        srv.ready = False
        assert subprocess.run(["sh", "-c", cmd], timeout=10, check=False).returncode != 0
    finally:
        srv.shutdown()
        srv.server_close()
    with socket.socket() as s:  # nothing listening → failure, not a hang
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert subprocess.run(["sh", "-c", script.replace("6333", str(free))], timeout=10, check=False).returncode != 0
