"""VRAM → preset, with headroom for embedder + reranker together, and the reason in words."""
from __future__ import annotations

import pytest

from probe_core.config import PRESETS
from probe_core.hardware import NvmlReading, preset_need_gib, recommend
from probe_core.hardware.presets import FOOTPRINTS, HEADROOM

from .conftest import MIB, gpu_reading, nvml_fixture


def test_every_preset_model_has_a_footprint():
    for preset in ("lite", "balanced", "pro"):
        spec = PRESETS[preset]
        assert spec.embedding_model in FOOTPRINTS
        if spec.reranker_model:
            assert spec.reranker_model in FOOTPRINTS


def test_needs_grow_and_include_the_reranker():
    lite, balanced, pro = (preset_need_gib(p) for p in ("lite", "balanced", "pro"))
    assert lite < balanced < pro
    emb = FOOTPRINTS[PRESETS["pro"].embedding_model].total_gib
    rr = FOOTPRINTS[PRESETS["pro"].reranker_model].total_gib
    assert pro == pytest.approx((emb + rr) * (1 + HEADROOM))


def test_the_real_h100_recommends_pro_on_hopper(h100):
    rec = recommend(h100, machine="x86_64")
    assert rec.preset == "pro"
    assert rec.tei.tag == "hopper-1.9"
    assert rec.device.index == 0 and rec.device_id == "0"
    assert "79.6 GiB" in rec.reason and "pro" in rec.reason and "headroom" in rec.reason
    assert rec.warnings == ()


def test_probes_own_reader_on_a_real_h100_matches_the_shared_reading(h100):
    """Read by read_nvml itself on a real H100 (2026-11-27); the shared fixture came from elsewhere."""
    ours = nvml_fixture("h100-80gb-hbm3-probe")
    (dev,), (theirs,) = ours.devices, h100.devices
    same = ("name", "cuda_compute_capability", "memory_total_bytes", "architecture_enum", "power_limit_mw", "mig_mode")
    assert {k: getattr(dev, k) for k in same} == {k: getattr(theirs, k) for k in same}
    assert (ours.driver, ours.cuda_driver) == (h100.driver, h100.cuda_driver)
    rec = recommend(ours, machine="x86_64")
    assert rec.preset == "pro" and rec.tei.tag == "hopper-1.9"
    assert rec.device_id == dev.uuid and dev.uuid.startswith("GPU-")  # compose reserves the board by UUID


def test_the_real_h200_recommends_pro_on_hopper():
    """Read by NVML on a real H200 (2026-11-26): 143,771 MiB by nvidia-smi, 9.0, no MIG."""
    reading = nvml_fixture("h200-141gb")
    (dev,) = reading.devices
    assert dev.name == "NVIDIA H200" and dev.compute_capability == "9.0"
    assert round(dev.memory_total_gib, 1) == 140.4  # nvidia-smi: 143771 MiB
    rec = recommend(reading, machine="x86_64")
    assert rec.preset == "pro" and rec.tei.tag == "hopper-1.9" and rec.tei.gpu
    assert "140.4 GiB" in rec.reason and rec.warnings == ()


@pytest.mark.parametrize("preset", ["lite", "balanced", "pro"])
def test_thresholds_on_both_sides(preset):
    need_mib = int(preset_need_gib(preset) * 1024)
    at = recommend(gpu_reading("NVIDIA L40S", (8, 9), need_mib + 1), machine="x86_64")
    below = recommend(gpu_reading("NVIDIA L40S", (8, 9), need_mib - 1), machine="x86_64")
    assert at.preset == preset
    order = ["embedded", "lite", "balanced", "pro"]
    assert order.index(below.preset) == order.index(preset) - 1
    assert f"{preset_need_gib(preset):.1f} GiB" in below.reason or below.preset == "embedded"


@pytest.mark.parametrize(("name", "cc", "mib", "preset", "tag"), [
    ("NVIDIA GeForce GTX 1650", (7, 5), 4096, "lite", "turing-1.9"),
    ("NVIDIA GeForce RTX 3060", (8, 6), 12288, "lite", "86-1.9"),
    ("Tesla T4", (7, 5), 15360, "balanced", "turing-1.9"),
    ("NVIDIA A10", (8, 6), 23028, "balanced", "86-1.9"),
    ("NVIDIA GeForce RTX 4090", (8, 9), 24564, "balanced", "89-1.9"),
    ("NVIDIA GeForce RTX 5090", (12, 0), 32607, "pro", "120-1.9"),
    ("NVIDIA A100-SXM4-40GB", (8, 0), 40960, "pro", "1.9"),
    ("NVIDIA B200", (10, 0), 183359, "pro", "100-1.9"),
    ("NVIDIA GeForce MX450", (7, 5), 2048, "embedded", "turing-1.9"),
])
def test_real_boards(name, cc, mib, preset, tag):
    rec = recommend(gpu_reading(name, cc, mib), machine="x86_64")
    assert (rec.preset, rec.tei.tag) == (preset, tag)
    assert name in rec.reason


def test_no_gpu_recommends_embedded_and_the_cpu_image():
    rec = recommend(NvmlReading.no_gpu("no NVIDIA driver: the NVML library is not installed"), machine="x86_64")
    assert rec.preset == "embedded" and rec.device is None
    assert rec.tei.tag == "cpu-1.9" and not rec.gpu
    assert "no NVIDIA driver" in rec.reason and "embedded" in rec.reason


def test_unsupported_gpu_recommends_embedded_with_the_explanation():
    rec = recommend(nvml_fixture("v100-32gb"), machine="x86_64")
    assert rec.preset == "embedded" and rec.tei.tag == "cpu-1.9"
    assert "7.5" in rec.reason and "V100" in rec.reason


def test_turing_warns_that_its_image_is_experimental():
    rec = recommend(nvml_fixture("t4-16gb"), machine="x86_64")
    assert rec.preset == "balanced"
    assert any("experimental" in w for w in rec.warnings)


def test_mixed_gpus_use_the_largest_and_its_own_image():
    rec = recommend(nvml_fixture("2x-mixed-a10-rtx4090"), machine="x86_64")
    assert rec.device.name == "NVIDIA GeForce RTX 4090"
    assert rec.tei.tag == "89-1.9"  # the image matches the GPU the stack is pinned to
    assert rec.device_id == "GPU-66666666-7777-8888-9999-000000000000"
    assert any("other GPU" in w for w in rec.warnings)


def test_mig_sizes_by_the_largest_instance():
    rec = recommend(nvml_fixture("a100-80gb-mig"), machine="x86_64")
    # 80 GB would be pro; the 40 GB instance is still pro, the 10 GB one would not be
    assert rec.preset == "pro"
    assert rec.device_id == "MIG-0f0f0f0f-1111-2222-3333-444444444444"
    assert rec.vram_gib == pytest.approx(40192 / 1024)
    assert any("MIG" in w for w in rec.warnings)


def test_mig_on_without_instances_is_unusable():
    reading = gpu_reading("NVIDIA A100 80GB PCIe", (8, 0), 81920, mig_mode=(1, 1))
    rec = recommend(reading, machine="x86_64")
    assert rec.preset == "embedded"
    assert any("no MIG instance" in w for w in rec.warnings)


def test_busy_gpu_warns_about_free_memory():
    rec = recommend(gpu_reading("NVIDIA GeForce RTX 4090", (8, 9), 24564, free_mib=6000), machine="x86_64")
    assert rec.preset == "balanced"
    assert any("free right now" in w for w in rec.warnings)


def test_recommendation_names_the_next_preset_up():
    rec = recommend(gpu_reading("NVIDIA A10", (8, 6), 23028), machine="x86_64")
    assert f"pro would need ≈ {preset_need_gib('pro'):.1f} GiB" in rec.reason
    assert rec.vram_gib == pytest.approx(23028 * MIB / 1024**3)
