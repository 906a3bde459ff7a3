"""What NVML says about this machine, as plain data.

Detection is "read NVML into these dataclasses"; a test fixture is the same dataclasses serialised
as JSON (``tests/fixtures/nvml/*.json``). Everything downstream (TEI image tag, preset) reads a
:class:`NvmlReading`, never NVML itself, so every architecture can be tested on a machine without
a GPU.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

GIB = 1024**3


@dataclass(frozen=True, slots=True)
class MigInstance:
    """One MIG slice of a GPU: what a container gets when it is handed this instance."""

    index: int
    uuid: str | None
    memory_total_bytes: int


@dataclass(frozen=True, slots=True)
class GpuDevice:
    """One NVIDIA GPU. Fields NVML refuses for this board (``NotSupported``) are None."""

    index: int
    name: str
    cuda_compute_capability: tuple[int, int]
    memory_total_bytes: int
    memory_free_bytes: int | None = None
    memory_used_bytes: int | None = None
    uuid: str | None = None
    architecture_enum: int | None = None
    brand_enum: int | None = None
    power_limit_mw: int | None = None
    mig_mode: tuple[int, int] | None = None  # (current, pending); 1 = enabled
    mig_instances: tuple[MigInstance, ...] = ()
    temperature_c: int | None = None

    @property
    def compute_capability(self) -> str:
        major, minor = self.cuda_compute_capability
        return f"{major}.{minor}"

    @property
    def memory_total_gib(self) -> float:
        return self.memory_total_bytes / GIB

    @property
    def memory_free_gib(self) -> float | None:
        return None if self.memory_free_bytes is None else self.memory_free_bytes / GIB

    @property
    def mig_enabled(self) -> bool:
        return bool(self.mig_mode and self.mig_mode[0] == 1)

    def to_json(self) -> dict:
        data = asdict(self)
        data["cuda_compute_capability"] = list(self.cuda_compute_capability)
        data["mig_mode"] = None if self.mig_mode is None else list(self.mig_mode)
        data["mig_instances"] = [asdict(m) for m in self.mig_instances]
        return data

    @classmethod
    def from_json(cls, data: dict) -> GpuDevice:
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in data.items() if k in known}
        kw["cuda_compute_capability"] = tuple(int(x) for x in data["cuda_compute_capability"])
        if kw.get("mig_mode") is not None:
            kw["mig_mode"] = tuple(int(x) for x in kw["mig_mode"])
        kw["mig_instances"] = tuple(MigInstance(**m) for m in data.get("mig_instances") or ())
        return cls(**kw)


@dataclass(frozen=True, slots=True)
class NvmlReading:
    """Driver-level facts plus every GPU. ``error`` says why there are no devices, if NVML failed."""

    driver: str | None = None
    cuda_driver: int | None = None  # NVML's integer form: 12020 = CUDA 12.2
    nvml: str | None = None
    devices: tuple[GpuDevice, ...] = ()
    error: str | None = None
    source: str = ""

    @property
    def has_gpu(self) -> bool:
        return bool(self.devices)

    @property
    def cuda_driver_version(self) -> str | None:
        """``13000`` → ``"13.0"``."""
        if self.cuda_driver is None:
            return None
        return f"{self.cuda_driver // 1000}.{(self.cuda_driver % 1000) // 10}"

    @classmethod
    def no_gpu(cls, reason: str, source: str = "nvml") -> NvmlReading:
        return cls(error=reason, source=source)

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "driver": self.driver,
            "cuda_driver": self.cuda_driver,
            "nvml": self.nvml,
            "error": self.error,
            "devices": [d.to_json() for d in self.devices],
        }

    @classmethod
    def from_json(cls, data: dict) -> NvmlReading:
        return cls(
            driver=data.get("driver"),
            cuda_driver=data.get("cuda_driver"),
            nvml=data.get("nvml"),
            devices=tuple(GpuDevice.from_json(d) for d in data.get("devices") or ()),
            error=data.get("error"),
            source=data.get("source", ""),
        )

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1) + "\n"


def load_reading(path: str | Path) -> NvmlReading:
    """A reading saved as JSON (a fixture, or ``probe doctor --json``'s hardware section)."""
    return NvmlReading.from_json(json.loads(Path(path).read_text("utf-8")))


__all__ = ["GIB", "GpuDevice", "MigInstance", "NvmlReading", "load_reading"]
