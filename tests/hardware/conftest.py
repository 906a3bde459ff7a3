"""Readings: the real H100 one from shared/, and ones constructed for other boards."""
from __future__ import annotations

from pathlib import Path

import pytest

from probe_core.hardware.reading import GpuDevice, NvmlReading, load_reading

NVML_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvml"
MIB = 1024**2


def nvml_fixture(name: str) -> NvmlReading:
    return load_reading(NVML_FIXTURES / f"{name}.json")


def gpu_reading(name: str, cc: tuple[int, int], mib: int, *, free_mib: int | None = None,
                cuda_driver: int = 13000, **kw) -> NvmlReading:
    """One-GPU reading, round-tripped through JSON like a fixture file would be."""
    dev = GpuDevice(index=0, name=name, cuda_compute_capability=cc, memory_total_bytes=mib * MIB,
                    memory_free_bytes=(mib - 400 if free_mib is None else free_mib) * MIB,
                    memory_used_bytes=400 * MIB, **kw)
    reading = NvmlReading(driver="580.0", cuda_driver=cuda_driver, nvml="13.580.0", devices=(dev,),
                          source="constructed in a test")
    return NvmlReading.from_json(reading.to_json())


@pytest.fixture
def h100() -> NvmlReading:
    return nvml_fixture("h100-80gb-hbm3")
