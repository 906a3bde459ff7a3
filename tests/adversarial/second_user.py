"""Python for a second Unix user (``nobody``) that can import Probe, wherever the checkout is.

A checkout inside a private folder (a clone under root's 0700 home, or under ``mktemp -d``) and a
virtualenv whose interpreter lives there too are out of that user's reach: it could neither start
this interpreter nor import ``probe_core``. So when it cannot, it gets a world-readable copy of
what it needs, made once a session with hard links where the filesystem allows (cheap): the
checkout's packages and this virtualenv's site-packages, run by a Python of the same version
that it can execute. Only where no such interpreter exists does a test skip, and it says so.
"""
from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("probe_core", "probe_cli", "probe_tui")
# what the second-user scripts import: proof that the copy is complete enough
IMPORT_CHECK = "import probe_core.scan, probe_core.indexing.indexer, probe_core.indexing.watcher"


@dataclass
class SecondUser:
    """How to run Probe's Python code as another user: ``[*prefix, python, "-c", SCRIPT, ...]``
    with ``env`` added, and ``import_root`` as the folder to put first on ``sys.path``."""

    prefix: list[str]
    python: str
    import_root: str
    env: dict[str, str] = field(default_factory=dict)
    copy: Path | None = None  # the readable copy made for it, removed at the end of the session

    def argv(self, *args: str) -> list[str]:
        return [*self.prefix, self.python, *args]

    def close(self) -> None:
        if self.copy is not None:
            shutil.rmtree(self.copy, ignore_errors=True)


def _runs(prefix: list[str], python: str, code: str, env: dict[str, str] | None = None) -> str | None:
    """None when ``python -c code`` works as that user, else why not (its last line of stderr)."""
    base = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        out = subprocess.run([*prefix, python, "-c", code], capture_output=True, text=True, timeout=120,
                             cwd="/", env={**base, **(env or {})})
    except OSError as exc:
        return str(exc)
    return None if out.returncode == 0 else ((out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1])


def _link_tree(src: Path, dst: Path) -> None:
    """``src`` copied to ``dst``: hard links (same inode, same mode) where possible, else copies."""

    def link_or_copy(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(src, dst, symlinks=True, copy_function=link_or_copy,
                    ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)


def _interpreters() -> list[str]:
    """This interpreter, then system ones of the same version (a venv's may be under a private home)."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    found = [sys.executable, os.path.realpath(sys.executable), getattr(sys, "_base_executable", sys.executable)]
    found += [os.path.join(d, version) for d in ("/usr/local/bin", "/usr/bin", "/bin")]
    return list(dict.fromkeys(p for p in found if os.path.isfile(p)))


def second_user_python(prefix: list[str], repo_root: Path) -> SecondUser | str:
    """A :class:`SecondUser` for ``prefix``, or why none can be had here (a reason to skip with)."""
    if not prefix:  # the suite is not root: the "second user" is this one
        return SecondUser([], sys.executable, str(repo_root))
    if _runs(prefix, sys.executable, f"import sys; sys.path.insert(0, {str(repo_root)!r}); {IMPORT_CHECK}") is None:
        return SecondUser(prefix, sys.executable, str(repo_root))
    pythons = [p for p in _interpreters() if _runs(prefix, p, "pass") is None]
    if not pythons:
        return (f"no Python {sys.version_info[0]}.{sys.version_info[1]} that the second user can run: "
                f"{', '.join(_interpreters())} are all out of its reach")
    copy = Path(tempfile.mkdtemp(prefix="probe-second-user-"))
    copy.chmod(0o755)
    src = copy / "src"
    for pkg in PACKAGES:
        if (repo_root / pkg).is_dir():
            _link_tree(repo_root / pkg, src / pkg)
    paths = [str(src)]
    for i, sp in enumerate(p for p in site.getsitepackages() if os.path.isdir(p)):
        _link_tree(Path(sp), copy / f"site-{i}")
        paths.append(str(copy / f"site-{i}"))
    env = {"PYTHONPATH": os.pathsep.join(paths), "PYTHONNOUSERSITE": "1"}
    why = _runs(prefix, pythons[0], IMPORT_CHECK, env)
    if why is not None:
        shutil.rmtree(copy, ignore_errors=True)
        return f"the second user cannot import Probe even from a readable copy ({why})"
    return SecondUser(prefix, pythons[0], str(src), env, copy)
