"""GPU, driver, TEI image and preset fit: from an NVML reading, so they run anywhere."""
from __future__ import annotations

from ..config import PRESETS
from ..hardware import NvmlReading, Recommendation, preset_need_gib
from .model import Check

G = "hardware"


def gpu_check(reading: NvmlReading, preset: str) -> Check:
    if not reading.devices:
        detail = f"no NVIDIA GPU ({reading.error or 'none found'})"
        if preset == "embedded":
            return Check("gpu", "ok", detail + "; the embedded default runs on the CPU", group=G)
        return Check("gpu", "warn", detail + f"; preset {preset} will run TEI on the CPU image (slow)",
                     fix="install the NVIDIA driver, or use the embedded default (`probe init --preset embedded`)",
                     group=G)
    parts = []
    for d in reading.devices:
        free = f", {d.memory_free_gib:.1f} free" if d.memory_free_gib is not None else ""
        mig = ", MIG on" if d.mig_enabled else ""
        parts.append(f"GPU {d.index} {d.name} (CC {d.compute_capability}, {d.memory_total_gib:.1f} GiB{free}{mig})")
    cuda = f" (CUDA {reading.cuda_driver_version})" if reading.cuda_driver_version else ""
    return Check("gpu", "ok", "; ".join(parts) + f"; driver {reading.driver or '?'}{cuda}", group=G,
                 data={"reading": reading.to_json()})


def tei_image_check(rec: Recommendation) -> Check:
    tei = rec.tei
    data = {"tag": tei.tag, "image": tei.image, "gpu": tei.gpu, "architecture": tei.architecture}
    if tei.experimental:
        return Check("tei_image", "warn", f"{tei.tag}: {tei.reason}",
                     fix="if TEI misbehaves on this GPU, `probe up --cpu` uses the CPU image", group=G, data=data)
    return Check("tei_image", "ok", f"{tei.tag}: {tei.reason}", group=G, data=data)


def preset_check(rec: Recommendation, preset: str) -> Check:
    data = {"configured": preset, "recommended": rec.preset, "warnings": list(rec.warnings)}
    notes = ("; " + "; ".join(rec.warnings)) if rec.warnings else ""
    if preset == "embedded":
        hint = "" if rec.preset == "embedded" else f" (this GPU could run `{rec.preset}`: {rec.reason})"
        return Check("preset", "ok", f"embedded (CPU, no Docker){hint}", group=G, data=data)
    need = preset_need_gib(preset)
    if rec.vram_gib is None or not rec.gpu:
        return Check("preset", "warn", f"{preset} on the CPU: {rec.reason}",
                     fix="expect slow embedding; `probe init --preset embedded` is the CPU-friendly choice",
                     group=G, data=data)
    if rec.vram_gib < need:
        return Check("preset", "warn",
                     f"{preset} needs ≈ {need:.1f} GiB of GPU memory; {rec.vram_gib:.1f} GiB available{notes}",
                     fix=f"use `{rec.preset}` (`probe init --preset {rec.preset}` and `probe up --profile {rec.preset}`)",
                     group=G, data=data)
    status = "warn" if rec.warnings else "ok"
    return Check("preset", status, f"{preset} fits ({PRESETS[preset].description}); {rec.reason}{notes}",
                 group=G, data=data)
