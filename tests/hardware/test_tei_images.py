"""Every architecture maps to its TEI image; unsupported hardware gets the CPU image and a reason."""
from __future__ import annotations

import pytest

from probe_core.hardware import TEI_VERSION, tei_image_for, tei_image_for_device
from probe_core.hardware.tei_images import TEI_IMAGE_REPO

from .conftest import gpu_reading, nvml_fixture


def test_version_is_1_9():
    assert TEI_VERSION == "1.9"


@pytest.mark.parametrize(
    ("name", "cc", "tag", "arch", "experimental"),
    [
        ("Tesla T4", (7, 5), "turing-1.9", "Turing", True),
        ("NVIDIA A100-SXM4-40GB", (8, 0), "1.9", "Ampere", False),
        ("NVIDIA A10", (8, 6), "86-1.9", "Ampere", False),
        ("NVIDIA GeForce RTX 4090", (8, 9), "89-1.9", "Ada Lovelace", False),
        ("NVIDIA H100 PCIe", (9, 0), "hopper-1.9", "Hopper", False),
        ("NVIDIA B200", (10, 0), "100-1.9", "Blackwell", False),
        ("NVIDIA GeForce RTX 5090", (12, 0), "120-1.9", "Blackwell", True),
        # no dedicated image: the all-architectures one
        ("NVIDIA Jetson AGX Orin", (8, 7), "cuda-1.9", "Ampere", False),
        ("NVIDIA B300", (10, 3), "cuda-1.9", "Blackwell", False),
        ("NVIDIA GB10", (12, 1), "cuda-1.9", "Blackwell", False),
    ],
)
def test_gpu_architectures(name, cc, tag, arch, experimental):
    image = tei_image_for(gpu_reading(name, cc, 24000), machine="x86_64")
    assert image.gpu
    assert image.tag == tag
    assert image.image == f"{TEI_IMAGE_REPO}:{tag}"
    assert image.architecture == arch
    assert image.experimental is experimental
    assert name in image.reason and ".".join(map(str, cc)) in image.reason


def test_the_real_h100_gets_hopper_never_the_ampere_image(h100):
    image = tei_image_for(h100, machine="x86_64")
    assert image.tag == "hopper-1.9"
    assert image.tag not in ("1.9", "86-1.9")
    assert "Hopper" in image.reason


@pytest.mark.parametrize(("name", "cc", "family"), [
    ("Tesla V100-SXM2-32GB", (7, 0), "Volta"),
    ("Tesla P100-PCIE-16GB", (6, 0), "Pascal"),
    ("GeForce GTX 980", (5, 2), "Maxwell"),
])
def test_below_7_5_gets_the_cpu_image_and_an_explanation(name, cc, family):
    image = tei_image_for(gpu_reading(name, cc, 16000), machine="x86_64")
    assert not image.gpu
    assert image.tag == "cpu-1.9"
    assert "7.5" in image.reason and family in image.reason and name in image.reason


def test_v100_fixture():
    image = tei_image_for(nvml_fixture("v100-32gb"), machine="x86_64")
    assert (image.tag, image.gpu) == ("cpu-1.9", False)


@pytest.mark.parametrize(("machine", "tag"), [("x86_64", "cpu-1.9"), ("AMD64", "cpu-1.9"),
                                              ("aarch64", "cpu-arm64-1.9"), ("arm64", "cpu-arm64-1.9")])
def test_no_gpu_cpu_tag_per_cpu_architecture(machine, tag):
    image = tei_image_for_device(None, machine=machine)
    assert (image.tag, image.gpu) == (tag, False)


def test_unknown_cpu_architecture_says_so():
    image = tei_image_for_device(None, machine="ppc64le")
    assert image.tag == "cpu-1.9" and "ppc64le" in image.reason


def test_gpu_on_an_arm64_host_uses_the_arm_cpu_image():
    # TEI's CUDA images are x86_64 only (a Grace Hopper GH200 host is arm64)
    image = tei_image_for(gpu_reading("NVIDIA GH200 480GB", (9, 0), 97871), machine="aarch64")
    assert (image.tag, image.gpu) == ("cpu-arm64-1.9", False)
    assert "x86_64" in image.reason


def test_a_driver_older_than_cuda_12_2_gets_the_cpu_image():
    image = tei_image_for(gpu_reading("NVIDIA A10", (8, 6), 23028, cuda_driver=11080), machine="x86_64")
    assert (image.tag, image.gpu) == ("cpu-1.9", False)
    assert "11.8" in image.reason and "12.2" in image.reason


def test_the_version_is_one_setting():
    dev = gpu_reading("NVIDIA H100 PCIe", (9, 0), 81559).devices[0]
    assert tei_image_for_device(dev, machine="x86_64", version="2.0").tag == "hopper-2.0"
    assert tei_image_for_device(None, machine="x86_64", version="2.0").tag == "cpu-2.0"
    assert tei_image_for_device(None, machine="arm64", version="2.0").tag == "cpu-arm64-2.0"


def test_mixed_gpus_pick_the_first_usable_for_the_plain_lookup():
    reading = nvml_fixture("2x-mixed-a10-rtx4090")
    assert tei_image_for(reading, machine="x86_64").tag == "86-1.9"
    assert tei_image_for(reading, reading.devices[1], machine="x86_64").tag == "89-1.9"
