"""The test engine itself: it must not depend on the caller's PATH (a fresh login's
``PATH=/usr/bin:/bin`` has no sbin, where netavark's iptables and runc live)."""
from __future__ import annotations

from .podman_engine import STANDIN_IMAGE, PodmanEngine, missing_tools


def test_a_container_runs_on_a_network_when_the_callers_path_has_no_sbin(podman, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert missing_tools() == []
    engine = PodmanEngine(tmp_path)  # a second client of the same storage: the stand-in image is there
    out = engine.podman("run", "--rm", "--network", "bridge", STANDIN_IMAGE, "/bin/sh", "-c", "echo up", check=False)
    assert out.returncode == 0 and out.stdout.strip() == "up", out.stderr
