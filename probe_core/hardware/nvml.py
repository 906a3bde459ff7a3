"""Read NVML (``nvidia-ml-py``, module ``pynvml``) into an :class:`NvmlReading`.

No NVIDIA driver, no library, no permission: a reading with no devices and the reason in
``error``, never an exception. Per-board fields that NVML does not support on a given GPU
(power limit on some consumer cards, MIG mode outside A100/H100-class boards) become None.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from .reading import GpuDevice, MigInstance, NvmlReading

log = logging.getLogger(__name__)
T = TypeVar("T")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _no_driver_reason(nvml: Any, exc: Exception) -> str:
    if isinstance(exc, getattr(nvml, "NVMLError_LibraryNotFound", ())):
        return "no NVIDIA driver: the NVML library (libnvidia-ml.so.1) is not installed"
    if isinstance(exc, getattr(nvml, "NVMLError_DriverNotLoaded", ())):
        return "the NVIDIA driver is installed but not loaded (reboot, or load the kernel module)"
    if isinstance(exc, getattr(nvml, "NVMLError_NoPermission", ())):
        return "no permission to query the NVIDIA driver"
    return f"NVML failed to start: {exc}"


def read_nvml(nvml: Any = None) -> NvmlReading:
    """Everything Probe needs from NVML; ``nvml`` is the ``pynvml`` module (injectable for tests)."""
    if nvml is None:
        try:
            import pynvml as nvml
        except ImportError:
            return NvmlReading.no_gpu("nvidia-ml-py is not installed")
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as exc:
        return NvmlReading.no_gpu(_no_driver_reason(nvml, exc))
    except OSError as exc:  # a broken library install can surface as a loader error
        return NvmlReading.no_gpu(f"NVML could not be loaded: {exc}")
    try:
        return _read(nvml)
    except nvml.NVMLError as exc:
        return NvmlReading.no_gpu(f"NVML failed while listing GPUs: {exc}")
    finally:
        try:
            nvml.nvmlShutdown()
        except nvml.NVMLError:
            pass


def _read(nvml: Any) -> NvmlReading:
    def opt(fn: Callable[[], T]) -> T | None:
        """A field this board may not support: None instead of an error."""
        try:
            return fn()
        except nvml.NVMLError as exc:
            log.debug("NVML field unavailable: %s", exc)
            return None

    driver = opt(lambda: _text(nvml.nvmlSystemGetDriverVersion()))
    cuda = opt(nvml.nvmlSystemGetCudaDriverVersion)
    version = opt(lambda: _text(nvml.nvmlSystemGetNVMLVersion()))
    devices = []
    for i in range(nvml.nvmlDeviceGetCount()):
        h = nvml.nvmlDeviceGetHandleByIndex(i)
        mem = nvml.nvmlDeviceGetMemoryInfo(h)
        mig = opt(lambda h=h: tuple(int(x) for x in nvml.nvmlDeviceGetMigMode(h)))
        devices.append(GpuDevice(
            index=i,
            name=_text(nvml.nvmlDeviceGetName(h)),
            cuda_compute_capability=tuple(int(x) for x in nvml.nvmlDeviceGetCudaComputeCapability(h)),
            memory_total_bytes=int(mem.total),
            memory_free_bytes=int(mem.free),
            memory_used_bytes=int(mem.used),
            uuid=opt(lambda h=h: _text(nvml.nvmlDeviceGetUUID(h))),
            architecture_enum=opt(lambda h=h: int(nvml.nvmlDeviceGetArchitecture(h))),
            brand_enum=opt(lambda h=h: int(nvml.nvmlDeviceGetBrand(h))),
            power_limit_mw=opt(lambda h=h: int(nvml.nvmlDeviceGetPowerManagementLimit(h))),
            mig_mode=mig,
            mig_instances=_mig_instances(nvml, h, opt) if mig and mig[0] == 1 else (),
            temperature_c=opt(lambda h=h: int(nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU))),
        ))
    return NvmlReading(driver=driver, cuda_driver=cuda, nvml=version, devices=tuple(devices), source="nvml")


def _mig_instances(nvml: Any, handle: Any, opt: Callable) -> tuple[MigInstance, ...]:
    out = []
    for j in range(opt(lambda: nvml.nvmlDeviceGetMaxMigDeviceCount(handle)) or 0):
        mh = opt(lambda j=j: nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, j))
        if mh is None:  # an empty slot answers NotFound
            continue
        mem = opt(lambda mh=mh: nvml.nvmlDeviceGetMemoryInfo(mh))
        if mem is None:
            continue
        out.append(MigInstance(index=j, uuid=opt(lambda mh=mh: _text(nvml.nvmlDeviceGetUUID(mh))),
                               memory_total_bytes=int(mem.total)))
    return tuple(out)
