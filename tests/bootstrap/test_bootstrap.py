"""scripts/bootstrap.py's offline pieces: wheel choice, checked unpacking, where uv comes from.
(The whole quick start, with the network, PEP 668 Python included, is bench/quickstart_fresh.sh.)"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bootstrap.py"
spec = importlib.util.spec_from_file_location("probe_bootstrap", SCRIPT)
bootstrap = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bootstrap)


def entry(name: str, *, yanked=False, sha="ab" * 32) -> dict:
    return {"filename": name, "url": f"https://files.example/{name}", "hashes": {"sha256": sha}, "yanked": yanked}


INDEX = {"files": [
    entry("uv-0.13.8-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
    entry("uv-0.13.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
    entry("uv-0.13.10-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", yanked="broken"),
    entry("uv-0.14.0a1-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
    entry("uv-0.13.9-py3-none-musllinux_1_1_x86_64.whl"),
    entry("uv-0.13.9-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"),
    entry("uv-0.13.9-py3-none-macosx_11_0_arm64.whl"),
    entry("uv-0.13.9-py3-none-win_amd64.whl"),
    entry("uv-0.13.9.tar.gz"),
]}


@pytest.mark.parametrize(("system", "machine", "libc", "expected"), [
    ("linux", "x86_64", "glibc", "uv-0.13.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
    ("linux", "x86_64", "", "uv-0.13.9-py3-none-musllinux_1_1_x86_64.whl"),
    ("linux", "aarch64", "glibc", "uv-0.13.9-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"),
    ("darwin", "arm64", None, "uv-0.13.9-py3-none-macosx_11_0_arm64.whl"),
])
def test_newest_final_unyanked_wheel_for_the_platform(system, machine, libc, expected):
    tags = bootstrap.platform_tags(system, machine, libc)
    assert bootstrap.pick_wheel(INDEX, tags)["filename"] == expected


def test_no_wheel_for_the_platform_is_a_clear_error():
    with pytest.raises(bootstrap.BootstrapError, match="no uv wheel"):
        bootstrap.pick_wheel(INDEX, bootstrap.platform_tags("linux", "riscv64", "glibc"))


def make_wheel(path: Path, payload: bytes) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("uv-0.13.9.dist-info/METADATA", "Name: uv\n")
        zf.writestr("uv-0.13.9.data/scripts/uv", payload)
        zf.writestr("uv-0.13.9.data/scripts/uvx", b"not this one")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_unpack_checks_the_hash_and_extracts_an_executable(tmp_path):
    wheel = tmp_path / "uv-0.13.9-py3-none-any.whl"
    sha = make_wheel(wheel, b"#!/bin/sh\necho 'uv 0.13.9'\n")
    with pytest.raises(bootstrap.BootstrapError, match="does not match"):
        bootstrap.unpack_uv(wheel, "0" * 64, tmp_path / "bin")
    assert not (tmp_path / "bin" / "uv").exists()
    uv = bootstrap.unpack_uv(wheel, sha, tmp_path / "bin")
    assert subprocess.run([str(uv), "--version"], capture_output=True, text=True).stdout == "uv 0.13.9\n"


def test_private_dir_follows_the_user_data_dir(tmp_path):
    assert bootstrap.private_dir({"PROBE_DATA_DIR": str(tmp_path)}) == tmp_path / "bootstrap"
    assert bootstrap.private_dir({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "probe" / "bootstrap"


def fake_uv(folder: Path, version: str) -> Path:
    """An executable named uv that answers --version (only the finder's choice is under test)."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "uv"
    exe.write_text(f"#!/bin/sh\necho 'uv {version}'\n")
    exe.chmod(0o755)
    return exe


def test_uv_on_path_wins_then_the_private_copy(tmp_path, monkeypatch):
    # whether this interpreter has the uv package depends on the machine: leave that branch out here
    monkeypatch.setattr(bootstrap, "_works", lambda cmd: cmd[:2] != [sys.executable, "-m"]
                        and subprocess.run([*cmd, "--version"], capture_output=True).returncode == 0)
    private = tmp_path / "data"
    env = {"PATH": str(tmp_path / "empty"), "PROBE_DATA_DIR": str(private)}
    assert bootstrap.existing_uv(env) is None
    copy = fake_uv(private / "bootstrap" / "bin", "0.1")
    assert bootstrap.existing_uv(env) == [str(copy)]
    on_path = fake_uv(tmp_path / "path", "0.2")
    env["PATH"] = f"{on_path.parent}{os.pathsep}{env['PATH']}"
    assert bootstrap.existing_uv(env) == [str(on_path)]


def test_too_old_python_is_refused_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(bootstrap.sys, "version_info", (3, 10, 12))
    assert bootstrap.main(["--print-uv"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs Python >= 3.11" in err[0]


def test_pip_is_handed_the_certificate_bundle_the_user_named(tmp_path):
    bundle = tmp_path / "proxy-ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    assert bootstrap.pip_cert_args({"SSL_CERT_FILE": str(bundle)}) == ["--cert", str(bundle)]
    assert bootstrap.pip_cert_args({"SSL_CERT_FILE": str(bundle), "PIP_CERT": "/other.pem"}) == []  # pip's own wins
    assert bootstrap.pip_cert_args({"SSL_CERT_FILE": str(tmp_path / "missing.pem")}) == []
    assert bootstrap.pip_cert_args({}) == []


def test_a_mirror_password_is_never_printed():
    url = "https://alice:s3cret@mirror.example.com/simple/uv/"
    assert bootstrap.without_userinfo(url) == "https://mirror.example.com/simple/uv/"
    assert bootstrap.without_userinfo("https://pypi.org/simple/uv/") == "https://pypi.org/simple/uv/"


@pytest.mark.parametrize("answer", [b"<html>not json</html>", b'{"files": "nope"}', b"[]"])
def test_an_index_that_is_not_pep_691_is_one_clear_error(tmp_path, monkeypatch, answer):
    monkeypatch.setenv("PIP_INDEX_URL", "https://alice:s3cret@mirror.example.com/simple")
    monkeypatch.setattr(bootstrap, "_get", lambda url, accept=None: answer)
    with pytest.raises(bootstrap.BootstrapError) as err:
        bootstrap.install_from_wheel(tmp_path)
    assert "s3cret" not in str(err.value)
    assert "mirror.example.com" in str(err.value) or "no uv wheel" in str(err.value)


def test_a_wheel_that_is_not_a_zip_is_one_clear_error(tmp_path, monkeypatch):
    body = b"not a zip"
    page = {"files": [{"filename": "uv-9.9.9-py3-none-manylinux_2_17_x86_64.whl", "url": "https://m/uv.whl",
                       "hashes": {"sha256": hashlib.sha256(body).hexdigest()}}]}
    import json

    monkeypatch.setattr(bootstrap, "platform_tags", lambda: ["manylinux_2_17_x86_64"])
    monkeypatch.setattr(bootstrap, "_get", lambda url, accept=None: json.dumps(page).encode() if accept else body)
    with pytest.raises(bootstrap.BootstrapError, match="usable uv wheel"):
        bootstrap.install_from_wheel(tmp_path)
