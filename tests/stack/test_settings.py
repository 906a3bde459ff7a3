"""Planning the stack from the hardware, and the env file compose reads."""
from __future__ import annotations

from pathlib import Path

import pytest

from probe_core.errors import ConfigError
from probe_core.hardware import NvmlReading, load_reading, recommend
from probe_core.stack import StackConfigError, StackController, StackSettings, plan, read_env_file, write_env_file
from probe_core.stack.settings import AUTH_FILE, BASE_FILE, CPU_FILE, LAN_FILE, env_file_path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvml"
KEYS = {"QDRANT_API_KEY": "q", "TEI_API_KEY": "t", "RERANKER_API_KEY": "r"}


def rec(name: str | None):
    reading = load_reading(FIXTURES / f"{name}.json") if name else NvmlReading.no_gpu("no driver")
    return recommend(reading, machine="x86_64")


def test_h100_pro_gets_hopper_on_the_gpu():
    s = plan("pro", rec("h100-80gb-hbm3"), env={})
    assert (s.tei_image_tag, s.gpu, s.gpu_device, s.files) == ("hopper-1.9", True, "0", (BASE_FILE,))
    assert s.tei_model_id == "Qwen/Qwen3-Embedding-8B" and s.reranker_model == "zeroentropy/zerank-2"
    assert s.services == ("qdrant", "tei", "reranker")


def test_lite_has_no_reranker():
    s = plan("lite", rec("h100-80gb-hbm3"), env={})
    assert s.reranker_model is None and s.services == ("qdrant", "tei")
    assert "RERANKER_MODEL" not in s.env()


def test_no_gpu_plans_the_cpu_variant():
    s = plan("lite", rec(None), env={})
    assert (s.gpu, s.gpu_device) == (False, None)
    assert s.tei_image_tag.startswith("cpu-") and s.files == (BASE_FILE, CPU_FILE)


def test_unsupported_gpu_plans_the_cpu_variant():
    s = plan("balanced", rec("v100-32gb"), env={})
    assert (s.gpu, s.tei_image_tag) == (False, "cpu-1.9")


def test_cpu_flag_forces_the_cpu_variant():
    s = plan("balanced", rec("h100-80gb-hbm3"), cpu=True, env={})
    assert not s.gpu and s.tei_image_tag == "cpu-1.9" and CPU_FILE in s.files


def test_pinned_gpu_follows_the_recommendation():
    s = plan("balanced", rec("2x-mixed-a10-rtx4090"), env={})
    assert (s.tei_image_tag, s.gpu_device) == ("89-1.9", "GPU-66666666-7777-8888-9999-000000000000")


@pytest.mark.parametrize(("tag", "gpu"), [("cuda-1.9", True), ("cpu-1.9", False)])
def test_tag_override(tag, gpu):
    s = plan("lite", rec(None), tei_image_tag=tag, env={})
    assert (s.tei_image_tag, s.gpu) == (tag, gpu)
    assert plan("lite", rec(None), env={"TEI_IMAGE_TAG": tag}).tei_image_tag == tag


def test_bad_tag_is_refused():
    with pytest.raises(StackConfigError):
        plan("lite", rec(None), tei_image_tag="1.9; rm -rf /", env={})


def test_api_keys_and_lan():
    with pytest.raises(StackConfigError, match="QDRANT_API_KEY"):
        plan("lite", rec(None), api_keys=True, env={})
    with pytest.raises(StackConfigError, match="LAN mode"):
        plan("lite", rec(None), lan_unsafe=True, env={"QDRANT_API_KEY": "q"})
    s = plan("lite", rec("h100-80gb-hbm3"), lan_unsafe=True, env=KEYS)
    assert s.files == (BASE_FILE, AUTH_FILE, LAN_FILE)


@pytest.mark.parametrize("profile", ["embedded", "huge"])
def test_unknown_profiles(profile):
    with pytest.raises(StackConfigError) as exc:
        plan(profile, rec(None), env={})
    assert isinstance(exc.value, ConfigError)
    if profile == "embedded":
        assert "needs no stack" in str(exc.value)


def test_env_file_round_trip(tmp_path):
    s = plan("balanced", rec("a100-80gb-mig"), env={})
    path = write_env_file(s, tmp_path / "state" / "stack.env")
    env = read_env_file(path)
    assert env["TEI_IMAGE_TAG"] == "1.9" and env["PROBE_GPU_DEVICE"].startswith("MIG-")
    assert StackSettings.from_env(env) == s
    assert read_env_file(tmp_path / "missing.env") is None
    with pytest.raises(StackConfigError, match="probe up"):
        StackSettings.from_env({"PROBE_PRESET": "lite"})


def test_state_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBE_STATE_DIR", str(tmp_path / "s"))
    assert env_file_path() == tmp_path / "s" / "stack.env"
    monkeypatch.delenv("PROBE_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "x"))
    assert env_file_path() == tmp_path / "x" / "probe" / "stack.env"


def test_controller_plan_defaults_to_the_recommendation():
    ctl = StackController(env_file=Path("/nonexistent/stack.env"))
    assert ctl.plan(reading=load_reading(FIXTURES / "t4-16gb.json")).profile == "balanced"
    with pytest.raises(StackConfigError, match="--profile lite"):
        ctl.plan(reading=NvmlReading.no_gpu("no driver"))
    assert ctl.configured() is None
