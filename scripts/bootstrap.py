#!/usr/bin/env python3
"""Install Probe from a clone with nothing but Python >= 3.11: find uv, then `uv sync --frozen`.

    python3 scripts/bootstrap.py              # uv, then the project into .venv/ (the lock's versions)
    python3 scripts/bootstrap.py --print-uv   # only make sure uv exists; print its path (for .ci/run)

Standard library only, and it never writes to the interpreter's site-packages: it works the same
on a PEP 668 "externally managed" system Python (Debian 12, Ubuntu 23.04+), on a plain one, and
inside an active virtualenv, without `--break-system-packages`. uv is taken, in this order, from:

1. `uv` on PATH;
2. `python3 -m uv` (a uv installed as a package of this interpreter or its venv);
3. a private copy under the user data dir (`$PROBE_DATA_DIR/bootstrap`, else
   `$XDG_DATA_HOME/probe/bootstrap`, else `~/.local/share/probe/bootstrap`), made once:
   a. `python3 -m venv` there, then that venv's pip installs uv from PyPI;
   b. where `venv` cannot make a venv with pip (Debian without the python3-venv package has no
      `ensurepip`), the uv wheel is fetched from PyPI's JSON simple API (PEP 691) with urllib, its
      sha256 checked against the index, and its `uv` binary unpacked. This keeps the quick start one
      command on a stock system instead of asking for `sudo apt install python3-venv`.

Certificates: urllib verifies TLS with OpenSSL's defaults, which honour `SSL_CERT_FILE` and
`SSL_CERT_DIR`; pip is handed `--cert $SSL_CERT_FILE` (it may use its own bundle otherwise); uv
honours `SSL_CERT_FILE` too (or `UV_SYSTEM_CERTS=true` for the system store).
`PIP_INDEX_URL` points both this script and pip at a mirror.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INDEX = "https://pypi.org/simple/"
PEP691_JSON = "application/vnd.pypi.simple.v1+json"
MIN_PYTHON = (3, 11)


class BootstrapError(Exception):
    """A step failed; the message says what to do."""


def say(msg: str) -> None:
    print(f"bootstrap: {msg}", file=sys.stderr, flush=True)


def private_dir(env: dict | None = None) -> Path:
    """Where the private uv lives (the user data dir Probe uses for everything user-level)."""
    env = os.environ if env is None else env
    if env.get("PROBE_DATA_DIR"):
        return Path(env["PROBE_DATA_DIR"]).expanduser() / "bootstrap"
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]).expanduser() / "probe" / "bootstrap"
    return Path.home() / ".local" / "share" / "probe" / "bootstrap"


def _works(cmd: list[str]) -> bool:
    try:
        return subprocess.run([*cmd, "--version"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def existing_uv(env: dict | None = None) -> list[str] | None:
    """uv already reachable: on PATH, as `python -m uv`, or the private copy. None if none works."""
    env = os.environ if env is None else env
    on_path = shutil.which("uv", path=env.get("PATH"))
    if on_path and _works([on_path]):
        return [on_path]
    if _works([sys.executable, "-m", "uv"]):
        return [sys.executable, "-m", "uv"]
    for candidate in (private_dir(env) / "venv" / "bin" / "uv", private_dir(env) / "bin" / "uv"):
        if candidate.exists() and _works([str(candidate)]):
            return [str(candidate)]
    return None


def pip_cert_args(env: dict | None = None) -> list[str]:
    """``--cert SSL_CERT_FILE`` for pip: without it, a pip that verifies with its own certifi bundle
    ignores ``SSL_CERT_FILE`` (a proxy's CA is then unknown to it). ``PIP_CERT`` set wins."""
    env = os.environ if env is None else env
    cert = env.get("SSL_CERT_FILE")
    return ["--cert", cert] if cert and not env.get("PIP_CERT") and os.path.isfile(cert) else []


def without_userinfo(url: str) -> str:
    """``url`` fit to print: a mirror's ``user:password@`` is left out."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def install_with_venv(target: Path) -> list[str]:
    """A private venv with pip, and uv installed into it by pip."""
    venv = target / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        raise BootstrapError(f"python -m venv failed: {(made.stderr or made.stdout).strip().splitlines()[-1:]}")
    say(f"installing uv with pip into {venv}")
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                          "--disable-pip-version-check", *pip_cert_args(), "uv"])
    if pip.returncode != 0:
        raise BootstrapError("pip could not install uv (network? see Troubleshooting in README.md)")
    return [str(venv / "bin" / "uv")]


# -- the wheel route -------------------------------------------------------------------------------
def platform_tags(system: str | None = None, machine: str | None = None, libc: str | None = None) -> list[str]:
    """Wheel platform tag fragments that fit this machine, best first (uv's wheels are py3-none-PLAT)."""
    system = system or sys.platform
    machine = (machine or platform.machine()).lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if system.startswith("linux"):
        libc = platform.libc_ver()[0] if libc is None else libc
        return [f"musllinux_1_1_{arch}"] if libc != "glibc" else [f"manylinux_2_17_{arch}", f"manylinux2014_{arch}"]
    if system == "darwin":
        return ["macosx_11_0_arm64"] if machine in ("arm64", "aarch64") else ["macosx_10_12_x86_64"]
    raise BootstrapError(f"no uv wheel for {system}; install uv yourself (https://docs.astral.sh/uv/)")


def _version(filename: str) -> tuple[int, ...] | None:
    m = re.match(r"uv-(\d+(?:\.\d+)*)-", filename)  # final releases only: a1/rc/dev fail the match
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def pick_wheel(index: dict, tags: list[str]) -> dict:
    """The newest non-yanked uv wheel for these platform tags, from a PEP 691 project page."""
    best: tuple[tuple[int, ...], int, dict] | None = None
    for f in index.get("files", []):
        name = f.get("filename", "")
        version = _version(name)
        if not name.endswith(".whl") or version is None or f.get("yanked"):
            continue
        plat = name[:-4].split("-")[-1].split(".")
        rank = next((i for i, tag in enumerate(tags) if tag in plat), None)
        if rank is None or not (f.get("hashes") or {}).get("sha256"):
            continue
        key = (version, -rank, f)
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None:
        raise BootstrapError(f"PyPI lists no uv wheel for {', '.join(tags)}")
    return best[2]


def unpack_uv(wheel: Path, sha256: str, dest_bin: Path) -> Path:
    """Check the wheel against the index's sha256, then take its ``uv`` executable out of it."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != sha256:
        raise BootstrapError(f"{wheel.name}: sha256 {digest} does not match the index's {sha256}")
    with zipfile.ZipFile(wheel) as zf:
        members = [n for n in zf.namelist() if re.fullmatch(r"[^/]+\.data/scripts/uv", n)]
        if not members:
            raise BootstrapError(f"{wheel.name} holds no uv executable")
        dest_bin.mkdir(parents=True, exist_ok=True)
        target = dest_bin / "uv"
        tmp = dest_bin / ".uv.tmp"
        with zf.open(members[0]) as src, open(tmp, "wb") as out:
            shutil.copyfileobj(src, out)
    tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(tmp, target)
    return target


def _get(url: str, accept: str | None = None) -> bytes:
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=120) as resp:  # TLS: OpenSSL defaults (SSL_CERT_FILE honoured)
        return resp.read()


def install_from_wheel(target: Path) -> list[str]:
    index_url = os.environ.get("PIP_INDEX_URL", DEFAULT_INDEX).rstrip("/") + "/uv/"
    say(f"fetching the uv wheel listed at {without_userinfo(index_url)}")
    try:
        page = json.loads(_get(index_url, PEP691_JSON))
        chosen = pick_wheel(page, platform_tags())
        with tempfile.TemporaryDirectory() as tmp:
            wheel = Path(tmp) / chosen["filename"]
            wheel.write_bytes(_get(chosen["url"]))
            return [str(unpack_uv(wheel, chosen["hashes"]["sha256"], target / "bin"))]
    except OSError as exc:  # urllib's URLError is an OSError: the network or TLS said no
        raise BootstrapError(f"could not download uv: {exc} (behind a TLS-inspecting proxy? set SSL_CERT_FILE "
                             "to its CA bundle; see Troubleshooting in README.md)") from exc
    except (ValueError, KeyError, TypeError, AttributeError, zipfile.BadZipFile) as exc:  # not JSON, not the PEP 691 shape, a bad wheel
        raise BootstrapError(f"{without_userinfo(index_url)} did not answer with a usable uv wheel "
                             f"({type(exc).__name__}: {exc}); is PIP_INDEX_URL a PEP 691 simple index?") from exc


def ensure_uv(via: str = "auto") -> list[str]:
    """A working uv command: one already there, or a private copy made now."""
    if via == "auto":
        found = existing_uv()
        if found:
            return found
    target = private_dir()
    target.mkdir(parents=True, exist_ok=True)
    if via in ("auto", "venv"):
        try:
            return install_with_venv(target)
        except BootstrapError as exc:
            if via == "venv":
                raise
            say(f"{exc}; falling back to the uv wheel from PyPI")
    return install_from_wheel(target)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--print-uv", action="store_true", help="only make sure uv exists and print its command")
    ap.add_argument("--via", choices=["auto", "venv", "wheel"], default=os.environ.get("PROBE_BOOTSTRAP_VIA", "auto"),
                    help="auto: an existing uv first; venv/wheel: make the private copy that way (for tests)")
    args = ap.parse_args(argv)
    try:
        if sys.version_info < MIN_PYTHON:
            raise BootstrapError(f"Probe needs Python >= {'.'.join(map(str, MIN_PYTHON))}; this is "
                                 f"{platform.python_version()} ({sys.executable})")
        uv = ensure_uv(args.via)
        if args.print_uv:
            print(" ".join(uv))
            return 0
        say(f"uv: {' '.join(uv)}; installing the project into {PROJECT_ROOT / '.venv'}")
        # an active virtualenv is not the project's: keep uv from warning about it
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        synced = subprocess.run([*uv, "sync", "--frozen", "--python", sys.executable], cwd=PROJECT_ROOT, env=env)
        if synced.returncode != 0:
            raise BootstrapError("`uv sync --frozen` failed (see above)")
    except BootstrapError as exc:
        print(f"bootstrap: error: {exc}", file=sys.stderr)
        return 1
    say(f"done: {PROJECT_ROOT / '.venv' / 'bin' / 'probe'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
