"""Hardware: NVML → a reading → the TEI image tag and the recommended preset.

``detect()`` reads this machine; everything else works on an :class:`NvmlReading`, so a saved
reading (``tests/fixtures/nvml/*.json``) stands in for any GPU.
"""
from __future__ import annotations

from .nvml import read_nvml
from .presets import FOOTPRINTS, HEADROOM, Recommendation, preset_need_gib, recommend
from .reading import GpuDevice, MigInstance, NvmlReading, load_reading
from .tei_images import TEI_IMAGE_REPO, TEI_VERSION, TeiImage, cpu_tag, tei_image_for, tei_image_for_device


def detect() -> tuple[NvmlReading, Recommendation]:
    """Read NVML now and recommend for this machine (never raises for a missing driver)."""
    reading = read_nvml()
    return reading, recommend(reading)


__all__ = [
    "FOOTPRINTS", "HEADROOM", "TEI_IMAGE_REPO", "TEI_VERSION", "GpuDevice", "MigInstance", "NvmlReading",
    "Recommendation", "TeiImage", "cpu_tag", "detect", "load_reading", "preset_need_gib", "read_nvml",
    "recommend", "tei_image_for", "tei_image_for_device",
]
