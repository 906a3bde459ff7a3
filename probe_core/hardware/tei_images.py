"""Which Text Embeddings Inference image fits this machine.

TEI publishes one CUDA image per GPU architecture (its kernels are compiled per compute
capability), a CPU image per CPU architecture, and ``cuda-<version>`` holding every CUDA
architecture. :data:`TEI_VERSION` is the one setting to change for a new TEI release.
"""
from __future__ import annotations

import platform
from dataclasses import dataclass

from .reading import GpuDevice, NvmlReading

#: The TEI release every tag below is built from. A new release is this one line.
TEI_VERSION = "1.9"
TEI_IMAGE_REPO = "ghcr.io/huggingface/text-embeddings-inference"

#: TEI's GPU images need CUDA 12.2+ from the driver (NVML integer form).
MIN_CUDA_DRIVER = 12020
#: Below this compute capability (Volta, Pascal, ...) TEI has no GPU image.
MIN_COMPUTE_CAPABILITY = (7, 5)

# compute capability → (architecture, tag template, experimental)
_GPU_TAGS: dict[tuple[int, int], tuple[str, str, bool]] = {
    (7, 5): ("Turing", "turing-{v}", True),
    (8, 0): ("Ampere", "{v}", False),
    (8, 6): ("Ampere", "86-{v}", False),
    (8, 9): ("Ada Lovelace", "89-{v}", False),
    (9, 0): ("Hopper", "hopper-{v}", False),
    (10, 0): ("Blackwell", "100-{v}", False),
    (12, 0): ("Blackwell", "120-{v}", True),
}

_X86 = {"x86_64", "amd64"}
_ARM = {"aarch64", "arm64"}


def architecture_name(cc: tuple[int, int]) -> str:
    """NVIDIA's family name for a compute capability (for messages)."""
    major, minor = cc
    if cc in _GPU_TAGS:
        return _GPU_TAGS[cc][0]
    if major in (10, 11, 12):
        return "Blackwell"
    if major == 9:
        return "Hopper"
    if major == 8:
        return "Ampere"
    if major == 7:
        return "Turing" if minor >= 5 else "Volta"
    return {6: "Pascal", 5: "Maxwell", 3: "Kepler"}.get(major, "unknown")


@dataclass(frozen=True, slots=True)
class TeiImage:
    """A TEI image choice and the reason for it, in words."""

    tag: str
    gpu: bool
    architecture: str  # "Hopper", "CPU (x86_64)", ...
    reason: str
    experimental: bool = False

    @property
    def image(self) -> str:
        return f"{TEI_IMAGE_REPO}:{self.tag}"


def cpu_tag(machine: str | None = None, version: str = TEI_VERSION) -> str:
    """The CPU image for this CPU architecture (x86_64 unless it is ARM64)."""
    machine = (machine or platform.machine()).lower()
    return f"cpu-arm64-{version}" if machine in _ARM else f"cpu-{version}"


def _cpu_image(reason: str, machine: str, version: str) -> TeiImage:
    m = machine.lower()
    if m not in _X86 | _ARM:
        reason += f"; TEI publishes CPU images for x86_64 and arm64 only, not {machine}"
    return TeiImage(cpu_tag(m, version), gpu=False, architecture=f"CPU ({machine})", reason=reason)


def tei_image_for_device(
    device: GpuDevice | None,
    *,
    cuda_driver: int | None = None,
    machine: str | None = None,
    version: str = TEI_VERSION,
) -> TeiImage:
    """The image for one GPU (or the CPU image when ``device`` is None), with the reason."""
    machine = machine or platform.machine()
    if device is None:
        return _cpu_image("no NVIDIA GPU: TEI runs on the CPU", machine, version)
    cc = device.cuda_compute_capability
    arch = architecture_name(cc)
    what = f"{device.name} (compute capability {device.compute_capability}, {arch})"
    if cc < MIN_COMPUTE_CAPABILITY:
        return _cpu_image(
            f"{what} is below compute capability 7.5, the minimum of TEI's GPU images: "
            "TEI runs on the CPU", machine, version)
    if machine.lower() not in _X86:
        return _cpu_image(f"{what}: TEI publishes its CUDA images for x86_64 only", machine, version)
    if cuda_driver is not None and cuda_driver < MIN_CUDA_DRIVER:
        have = f"{cuda_driver // 1000}.{(cuda_driver % 1000) // 10}"
        return _cpu_image(
            f"{what}: the driver supports CUDA {have}, TEI's GPU images need CUDA 12.2+ "
            "(update the NVIDIA driver to use the GPU)", machine, version)
    if cc in _GPU_TAGS:
        _, template, experimental = _GPU_TAGS[cc]
        note = " (experimental in TEI)" if experimental else ""
        return TeiImage(template.format(v=version), gpu=True, architecture=arch,
                        reason=f"{what}: TEI's {arch} {device.compute_capability} image{note}",
                        experimental=experimental)
    return TeiImage(f"cuda-{version}", gpu=True, architecture=arch,
                    reason=f"{what}: no image dedicated to {device.compute_capability}; "
                           "the cuda image holds every CUDA architecture")


def usable_for_tei(device: GpuDevice, cuda_driver: int | None, machine: str | None = None) -> bool:
    """True when TEI's GPU images can run on ``device``."""
    return tei_image_for_device(device, cuda_driver=cuda_driver, machine=machine).gpu


def tei_image_for(reading: NvmlReading, device: GpuDevice | None = None, *, machine: str | None = None) -> TeiImage:
    """The image for the GPU that will run TEI (``device``; else the first usable one), or CPU."""
    if device is None:
        device = next((d for d in reading.devices if usable_for_tei(d, reading.cuda_driver, machine)), None)
        if device is None and reading.devices:
            device = reading.devices[0]  # unusable: its image choice carries the explanation
    return tei_image_for_device(device, cuda_driver=reading.cuda_driver, machine=machine)
