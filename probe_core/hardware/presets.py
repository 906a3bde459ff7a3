"""Recommend a preset from the GPU's memory, with the reason in words.

A preset runs its embedder (TEI) and, from ``balanced`` up, a reranker on the *same* GPU, so the
budget is both together: bf16 weights + working memory for a full batch + one CUDA context per
process, plus :data:`HEADROOM`. The figures are estimates from parameter counts (2 bytes per
parameter) and batch sizes, not measurements; they are deliberately generous, because the first
run running out of memory is the worst first impression.
"""
from __future__ import annotations

import platform
from dataclasses import dataclass, field

from ..config import PRESETS
from .reading import GIB, GpuDevice, NvmlReading
from .tei_images import TeiImage, tei_image_for_device, usable_for_tei


@dataclass(frozen=True, slots=True)
class ModelFootprint:
    """GPU memory one served model needs, in GiB."""

    weights_gib: float  # parameters × 2 bytes (bf16/fp16)
    runtime_gib: float  # activations of a full batch, allocator and library workspaces
    context_gib: float = 0.5  # the CUDA context of the serving process

    @property
    def total_gib(self) -> float:
        return self.weights_gib + self.runtime_gib + self.context_gib


FOOTPRINTS: dict[str, ModelFootprint] = {
    # TEI batches up to 16k tokens; activations grow with the hidden size.
    "Qwen/Qwen3-Embedding-0.6B": ModelFootprint(1.1, 1.0),
    "Qwen/Qwen3-Embedding-4B": ModelFootprint(7.5, 1.5),
    "Qwen/Qwen3-Embedding-8B": ModelFootprint(14.1, 2.0),
    # the reranker scores ~25 candidates per query, only the last position's logits are kept
    "Qwen/Qwen3-Reranker-0.6B": ModelFootprint(1.1, 1.0, 0.8),
    "zeroentropy/zerank-2": ModelFootprint(7.5, 2.0, 0.8),
}

#: Extra room over the estimate (fragmentation, a desktop session, another small process).
HEADROOM = 0.15
#: Largest first: the first preset that fits is recommended.
GPU_PRESETS = ("pro", "balanced", "lite")


def preset_need_gib(preset: str) -> float:
    """GPU memory (GiB, headroom included) the preset's embedder and reranker need together."""
    spec = PRESETS[preset]
    models = [spec.embedding_model] + ([spec.reranker_model] if spec.reranker_model else [])
    return sum(FOOTPRINTS[m].total_gib for m in models) * (1 + HEADROOM)


def _preset_models(preset: str) -> str:
    spec = PRESETS[preset]
    parts = [f"{spec.embedding_model.split('/')[-1]} ≈ {FOOTPRINTS[spec.embedding_model].weights_gib:g} GiB"]
    if spec.reranker_model:
        parts.append(f"{spec.reranker_model.split('/')[-1]} ≈ {FOOTPRINTS[spec.reranker_model].weights_gib:g} GiB")
    return " + ".join(parts) + " of weights, plus batches and CUDA contexts"


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The preset and TEI image for this machine, what they run on, and why."""

    preset: str  # embedded | lite | balanced | pro
    tei: TeiImage
    device: GpuDevice | None  # the GPU the stack should use
    device_id: str | None  # what compose's GPU reservation names (GPU/MIG UUID, else index)
    vram_gib: float | None  # memory the stack can use on that device
    reason: str
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def gpu(self) -> bool:
        return self.tei.gpu


def _usable_memory(device: GpuDevice) -> tuple[float, str | None, str | None]:
    """(GiB the stack may use, device id for compose, note). MIG: the largest instance."""
    if device.mig_enabled:
        if not device.mig_instances:
            return 0.0, None, (f"{device.name} has MIG mode on but no MIG instance: create one "
                               "(nvidia-smi mig -cgi ... -C) or turn MIG off")
        best = max(device.mig_instances, key=lambda m: m.memory_total_bytes)
        gib = best.memory_total_bytes / GIB
        return gib, best.uuid or f"{device.index}:{best.index}", (
            f"MIG is on: sized for its largest instance ({gib:.1f} GiB), not the whole GPU")
    return device.memory_total_gib, device.uuid or str(device.index), None


def recommend(reading: NvmlReading, *, machine: str | None = None) -> Recommendation:
    """The preset this machine should run, the TEI image, and the reason in words.

    Among GPUs TEI can use (compute capability ≥ 7.5, CUDA 12.2+ driver, x86_64 host), the one
    with the most memory runs the stack. No usable GPU → ``embedded`` and the CPU image.
    """
    machine = machine or platform.machine()
    lite_need = preset_need_gib("lite")
    if not reading.devices:
        tei = tei_image_for_device(None, machine=machine)
        why = reading.error or "no NVIDIA GPU found"
        return Recommendation("embedded", tei, None, None, None,
                              f"{why}: the embedded default (CPU, no Docker) is the right fit; "
                              f"a stack preset would run TEI on the CPU image {tei.tag}")
    usable = [d for d in reading.devices if usable_for_tei(d, reading.cuda_driver, machine)]
    if not usable:
        d = reading.devices[0]
        tei = tei_image_for_device(d, cuda_driver=reading.cuda_driver, machine=machine)
        return Recommendation("embedded", tei, None, None, None,
                              f"{tei.reason}; the embedded default is recommended")
    sized = [(d, *_usable_memory(d)) for d in usable]
    device, vram, device_id, note = max(sized, key=lambda s: (s[1], -s[0].index))
    tei = tei_image_for_device(device, cuda_driver=reading.cuda_driver, machine=machine)
    warnings: list[str] = [note] if note else []
    if tei.experimental:
        warnings.append(f"TEI marks its {tei.tag} image experimental")
    others = [d for d in reading.devices if d is not device]
    if others:
        warnings.append(f"{len(others)} other GPU(s) left free; the stack uses GPU {device.index} ({device.name})")
    what = f"{device.name}: {vram:.1f} GiB"
    for preset in GPU_PRESETS:
        need = preset_need_gib(preset)
        if vram >= need:
            free = device.memory_free_gib if not device.mig_enabled else None
            if free is not None and free < need:
                warnings.append(f"only {free:.1f} GiB free right now; {preset} needs ≈ {need:.1f} GiB: "
                                "stop other GPU work before `probe up`")
            bigger = GPU_PRESETS[GPU_PRESETS.index(preset) - 1] if preset != "pro" else None
            beyond = (f"; {bigger} would need ≈ {preset_need_gib(bigger):.1f} GiB" if bigger else "")
            reason = (f"{what} fits {preset}, which needs ≈ {need:.1f} GiB with {HEADROOM:.0%} headroom "
                      f"({_preset_models(preset)}){beyond}")
            return Recommendation(preset, tei, device, device_id, vram, reason, tuple(warnings))
    reason = (f"{what} is less than lite needs (≈ {lite_need:.1f} GiB with headroom): "
              "the embedded default (CPU) is recommended")
    return Recommendation("embedded", tei, device, device_id, vram, reason, tuple(warnings))
