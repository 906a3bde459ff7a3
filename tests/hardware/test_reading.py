"""The reading format: NVML → dataclasses → JSON, and the real no-driver path of this machine."""
from __future__ import annotations

import json
import types

import pytest

from probe_core.hardware import read_nvml
from probe_core.hardware.reading import NvmlReading

from .conftest import NVML_FIXTURES, nvml_fixture


def test_real_h100_reading_loads(h100):
    assert h100.driver == "580.159.04"
    assert h100.cuda_driver_version == "13.0"
    (dev,) = h100.devices
    assert dev.name == "NVIDIA H100 80GB HBM3"
    assert dev.cuda_compute_capability == (9, 0)
    assert dev.compute_capability == "9.0"
    assert round(dev.memory_total_gib, 1) == 79.6  # nvidia-smi: 81559 MiB
    assert dev.mig_mode == (0, 0) and not dev.mig_enabled


@pytest.mark.parametrize("path", sorted(NVML_FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_every_fixture_round_trips(path):
    reading = nvml_fixture(path.stem)
    assert NvmlReading.from_json(json.loads(reading.dumps())) == reading
    raw = json.loads(path.read_text())
    assert [d["name"] for d in raw["devices"]] == [d.name for d in reading.devices]


def test_unknown_keys_are_ignored():
    data = nvml_fixture("h100-80gb-hbm3").to_json()
    data["devices"][0]["a_field_from_a_later_probe"] = 1
    assert NvmlReading.from_json(data).devices[0].name == "NVIDIA H100 80GB HBM3"


def test_no_driver_on_this_machine_is_a_clean_reading():
    """This build machine has no NVIDIA driver: pynvml raises, read_nvml must not."""
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        reading = read_nvml()
        assert reading.devices == () and not reading.has_gpu
        assert "no NVIDIA driver" in reading.error
        return
    pynvml.nvmlShutdown()  # a machine with a driver: the real reading must list its GPUs
    assert read_nvml().has_gpu


class _FakeNvml(types.SimpleNamespace):
    """A stand-in for pynvml on a machine without a GPU: only the calls read_nvml makes."""

    class NVMLError(Exception):
        pass

    class NVMLError_NotSupported(NVMLError):
        pass

    class NVMLError_NotFound(NVMLError):
        pass

    NVML_TEMPERATURE_GPU = 0

    def __init__(self):
        super().__init__(shut=False)

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        self.shut = True

    def nvmlSystemGetDriverVersion(self):
        return b"580.159.04"

    def nvmlSystemGetCudaDriverVersion(self):
        return 13000

    def nvmlSystemGetNVMLVersion(self):
        return "13.580.159.04"

    def nvmlDeviceGetCount(self):
        return 2

    def nvmlDeviceGetHandleByIndex(self, i):
        return ("gpu", i)

    def nvmlDeviceGetMemoryInfo(self, h):
        total = {("gpu", 0): 80, ("gpu", 1): 24, ("mig", 0): 40}[h] * 1024**3
        return types.SimpleNamespace(total=total, free=total - 1024**3, used=1024**3)

    def nvmlDeviceGetName(self, h):
        return "NVIDIA A100 80GB PCIe" if h[1] == 0 else "NVIDIA GeForce RTX 4090"

    def nvmlDeviceGetCudaComputeCapability(self, h):
        return (8, 0) if h[1] == 0 else (8, 9)

    def nvmlDeviceGetUUID(self, h):
        return f"{'MIG' if h[0] == 'mig' else 'GPU'}-{h[1]}"

    def nvmlDeviceGetArchitecture(self, h):
        return 7

    def nvmlDeviceGetBrand(self, h):
        raise self.NVMLError_NotSupported("Not Supported")

    def nvmlDeviceGetPowerManagementLimit(self, h):
        raise self.NVMLError_NotSupported("Not Supported")

    def nvmlDeviceGetMigMode(self, h):
        if h[1] == 1:
            raise self.NVMLError_NotSupported("Not Supported")
        return [1, 1]

    def nvmlDeviceGetMaxMigDeviceCount(self, h):
        return 3

    def nvmlDeviceGetMigDeviceHandleByIndex(self, h, j):
        if j != 0:
            raise self.NVMLError_NotFound("Not Found")
        return ("mig", 0)

    def nvmlDeviceGetTemperature(self, h, sensor):
        return 40


def test_read_nvml_maps_fields_and_tolerates_unsupported_ones():
    fake = _FakeNvml()
    reading = read_nvml(fake)
    assert fake.shut
    assert reading.driver == "580.159.04" and reading.cuda_driver == 13000
    a100, rtx = reading.devices
    assert a100.mig_enabled and [m.uuid for m in a100.mig_instances] == ["MIG-0"]
    assert a100.mig_instances[0].memory_total_bytes == 40 * 1024**3
    assert a100.brand_enum is None and a100.power_limit_mw is None
    assert rtx.mig_mode is None and rtx.cuda_compute_capability == (8, 9)
    assert NvmlReading.from_json(reading.to_json()) == reading


def test_read_nvml_init_failure_is_a_reading_not_an_exception():
    fake = _FakeNvml()

    def broken():
        raise fake.NVMLError("Driver Not Loaded")

    fake.nvmlInit = broken
    reading = read_nvml(fake)
    assert reading.devices == () and "Driver Not Loaded" in reading.error
