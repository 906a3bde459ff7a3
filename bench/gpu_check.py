"""What Probe reads on a real GPU machine, checked against ``nvidia-smi`` on the same machine.

  python bench/gpu_check.py [--json out.json] [--save-reading reading.json]

Runs Probe's own NVML reader (``probe_core.hardware.read_nvml``), asks ``nvidia-smi`` for the same
facts, and compares them board by board: name, total memory (MiB), compute capability, driver.
Then it prints what Probe would choose there (preset, TEI image, the doctor's hardware checks for
every preset) and, where the ``docker`` package imports, the whole doctor. Exit status 1 when
Probe's reading and ``nvidia-smi`` disagree or no GPU is seen, so it can gate a device run.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from probe_core.config import PRESETS  # noqa: E402
from probe_core.doctor.hardware_checks import gpu_check, preset_check, tei_image_check  # noqa: E402
from probe_core.hardware import NvmlReading, read_nvml, recommend  # noqa: E402

SMI_FIELDS = "index,name,memory.total,compute_cap,driver_version"


def smi_boards() -> list[dict]:
    """nvidia-smi's view of each board, or [] where it is missing."""
    if not shutil.which("nvidia-smi"):
        return []
    out = subprocess.run(["nvidia-smi", f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    boards = []
    for line in out.strip().splitlines():
        index, name, mib, cc, driver = (part.strip() for part in line.split(","))
        boards.append({"index": int(index), "name": name, "memory_mib": int(mib),
                       "compute_cap": cc, "driver": driver})
    return boards


def disagreements(reading: NvmlReading, boards: list[dict]) -> list[str]:
    """Each fact Probe read that nvidia-smi states otherwise."""
    problems = []
    if len(reading.devices) != len(boards):
        problems.append(f"{len(reading.devices)} boards read by Probe, {len(boards)} by nvidia-smi")
    for device, board in zip(reading.devices, boards):
        ours = {"name": device.name, "memory_mib": device.memory_total_bytes // 1024**2,
                "compute_cap": device.compute_capability, "driver": reading.driver}
        for key, value in ours.items():
            if str(value) != str(board[key]):
                problems.append(f"board {board['index']} {key}: Probe {value!r}, nvidia-smi {board[key]!r}")
    return problems


def whole_doctor(reading: NvmlReading) -> list[dict] | str:
    try:
        from probe_core.doctor import run_doctor
        checks = run_doctor(reading=reading, root=Path.cwd(), timeout_s=1.0)
    except Exception as exc:  # a package missing on a bare GPU machine: the rest still reports
        return f"not run: {type(exc).__name__}: {exc}"
    return [{"name": c.name, "status": c.status, "detail": c.detail} for c in checks]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the whole result here")
    parser.add_argument("--save-reading", type=Path, help="write Probe's NVML reading here (a fixture)")
    args = parser.parse_args()

    reading = read_nvml()
    boards = smi_boards()
    problems = disagreements(reading, boards) if reading.has_gpu else [reading.error or "no GPU"]
    rec = recommend(reading)
    result = {
        "reading": reading.to_json(),
        "nvidia_smi": boards,
        "disagreements": problems,
        "recommendation": {"preset": rec.preset, "tei_image": rec.tei.image, "device_id": rec.device_id,
                           "vram_gib": rec.vram_gib, "reason": rec.reason, "warnings": list(rec.warnings)},
        "hardware_checks": {p: [{"name": c.name, "status": c.status, "detail": c.detail}
                                for c in (gpu_check(reading, p), tei_image_check(rec), preset_check(rec, p))]
                            for p in PRESETS},
        "doctor": whole_doctor(reading),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    if args.save_reading:
        args.save_reading.write_text(reading.dumps())
    print("agree" if not problems else "DISAGREE: " + "; ".join(problems), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
