"""A real Docker-compatible engine for the stack tests: podman's API service, with stand-in images.

No registry is reachable from the build machines, so the stand-in image is a busybox rootfs
imported with ``podman import``: ``httpd`` serves each service's health/info files, ``wget`` runs
the healthchecks. Podman schedules healthchecks with systemd timers, which a container-less build
machine does not have, so :meth:`PodmanEngine.run_healthchecks` runs them the way Docker's own
scheduler would (``podman healthcheck run``) while a test waits.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tarfile
import threading
import time
from pathlib import Path

STANDIN_IMAGE = "localhost/probe-standin:test"
QDRANT_VERSION = "1.19.1"
APT_HINT = "apt-get install -y podman busybox-static runc"
# System tools live in sbin too: runc, and the iptables that podman's netavark runs to wire a
# container's network. The caller's PATH may have no sbin (PATH=/usr/bin:/bin on a fresh login), so
# the engine gets a PATH of its own, and the tools are looked up in it.
SBIN_DIRS = ("/usr/local/sbin", "/usr/sbin", "/sbin")


def system_path(path: str | None = None) -> str:
    """``path`` (default: this process's PATH) with the sbin directories it lacks added at the end."""
    dirs = [d for d in (os.environ.get("PATH", "/usr/bin:/bin") if path is None else path).split(os.pathsep) if d]
    return os.pathsep.join(dirs + [d for d in SBIN_DIRS if d not in dirs])


def missing_tools() -> list[str]:
    return [t for t in ("podman", "busybox", "runc") if shutil.which(t, path=system_path()) is None]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PodmanEngine:
    """``podman system service`` on a private socket, plus the stand-in image."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.socket = workdir / "podman.sock"
        self.docker_host = f"unix://{self.socket}"
        conf = workdir / "containers.conf"
        # crun refuses this kernel's hybrid cgroup layout; runc works. The file events logger is what
        # makes the API's event stream carry container events without journald.
        conf.write_text('[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=1024:1024"]\n'
                        '[engine]\nruntime = "runc"\nevents_logger = "file"\n')
        self.env = {**os.environ, "CONTAINERS_CONF": str(conf), "PATH": system_path()}
        self.binary = shutil.which("podman", path=self.env["PATH"]) or "podman"
        self.proc: subprocess.Popen | None = None
        self._hc_stop = threading.Event()
        self._hc_thread: threading.Thread | None = None

    def podman(self, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, *args], env=self.env, capture_output=True, text=True,
                              check=check, timeout=timeout)

    def start(self) -> None:
        log = (self.workdir / "service.log").open("w")
        self.proc = subprocess.Popen([self.binary, "system", "service", "--time=0", self.docker_host],
                                     env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not self.socket.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"podman system service did not start: {(self.workdir / 'service.log').read_text()}")
            time.sleep(0.1)
        self.import_standin()

    def stop(self) -> None:
        self.stop_healthchecks()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def import_standin(self) -> None:
        root = self.workdir / "rootfs"
        (root / "bin").mkdir(parents=True, exist_ok=True)
        shutil.copy2(shutil.which("busybox", path=system_path()), root / "bin" / "busybox")
        for applet in ("sh", "httpd", "wget", "cat", "sleep"):
            link = root / "bin" / applet
            if not link.exists():
                link.symlink_to("busybox")
        files = {
            "qdrant/index.html": json.dumps({"title": "qdrant - vector search engine", "version": QDRANT_VERSION}),
            "qdrant/readyz": "all shards are ready",
            "qdrant/healthz": "healthz check passed",
            "tei/health": "",
            "tei/info": json.dumps({"model_id": "stand-in", "version": "1.9.0"}),
            "reranker/health": json.dumps({"status": "ok", "model": "stand-in"}),
        }
        for rel, text in files.items():
            path = root / "www" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        tar = self.workdir / "rootfs.tar"
        with tarfile.open(tar, "w") as tf:
            tf.add(root, arcname=".")
        self.podman("import", str(tar), STANDIN_IMAGE)

    def standin_override(self, path: Path, ports: dict[str, int]) -> Path:
        """A compose override that keeps the real file's services, volumes and profiles, and swaps
        in the stand-in image, its command and healthcheck, and free host ports."""
        inside = {"qdrant": 6333, "tei": 80, "reranker": 8081}
        lines = ["services:"]
        for svc, port in inside.items():
            lines += [
                f"  {svc}:",
                f"    image: {STANDIN_IMAGE}",
                f'    entrypoint: ["/bin/sh", "-c", "echo standin {svc} up; exec /bin/httpd -f -p {port} -h /www/{svc}"]',
                "    command: !reset []",
                "    ports: !override",
                f'      - "127.0.0.1:{ports[svc]}:{port}"',
                "    healthcheck:",
                f'      test: ["CMD", "/bin/wget", "-q", "-O", "/dev/null", "http://127.0.0.1:{port}/{"readyz" if svc == "qdrant" else "health"}"]',
                "      interval: 1s",
                "      timeout: 3s",
                "      retries: 3",
                "      start_period: 0s",
            ]
        path.write_text("\n".join(lines) + "\n")
        return path

    # Docker runs healthchecks on its own schedule; podman needs systemd for that.
    def run_healthchecks(self, project: str, every_s: float = 0.5) -> None:
        self._hc_stop.clear()

        def loop():
            while not self._hc_stop.is_set():
                out = self.podman("ps", "-q", "--filter", f"label=com.docker.compose.project={project}", check=False)
                for cid in out.stdout.split():
                    self.podman("healthcheck", "run", cid, check=False)
                self._hc_stop.wait(every_s)

        self._hc_thread = threading.Thread(target=loop, daemon=True)
        self._hc_thread.start()

    def stop_healthchecks(self) -> None:
        self._hc_stop.set()
        if self._hc_thread:
            self._hc_thread.join(timeout=10)
