"""One reader of the environment (``probe_core/environment.py``), its list of every variable, and
README.md's settings table generated from that list (issue 21, item 5)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from probe_core import environment
from probe_core.environment import VARIABLES, WRITTEN

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("probe_core", "probe_cli", "probe_tui", "probe_mcp")
HOME_MODULE = REPO / "probe_core" / "environment.py"
# a string that names an environment variable Probe could read (or write)
LOOKS_LIKE_A_VARIABLE = re.compile(r"^(PROBE|QDRANT|TEI|RERANKER|XDG|DOCKER|ORT)_[A-Z0-9_]+$|^(HOME|VIRTUAL_ENV|MALLOC_ARENA_MAX)$")
ENV_FUNCTIONS = {"getenv", "getenvb", "putenv", "unsetenv", "environ", "environb"}


def _modules():
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            yield path, ast.parse(path.read_text("utf-8"), str(path))


def _is_os_env(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in ENV_FUNCTIONS
            and isinstance(node.value, ast.Name) and node.value.id in ("os", "posix"))


def _environment_touches(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module uses ``os.environ``/``os.getenv`` & co, less plain writes of a WRITTEN name."""
    writes = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        for t in targets:
            if (isinstance(t, ast.Subscript) and _is_os_env(t.value) and isinstance(t.slice, ast.Constant)
                    and t.slice.value in WRITTEN):
                writes.add(id(t.value))
    found = []
    for node in ast.walk(tree):
        if _is_os_env(node) and id(node) not in writes:
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "posix"):
            found += [(node.lineno, f"from os import {a.name}") for a in node.names if a.name in ENV_FUNCTIONS]
    return found


def test_no_module_but_the_settings_module_reads_the_environment():
    readers = {f"{path.relative_to(REPO)}:{line}: {what}"
               for path, tree in _modules() if path != HOME_MODULE
               for line, what in _environment_touches(tree)}
    assert not readers, ("read the environment through probe_core.environment (get / environ), "
                         f"not directly: {sorted(readers)}")


def test_the_ast_check_sees_each_way_of_reading():
    tree = ast.parse("import os\nfrom os import getenv\na = os.environ.get('X')\nb = os.getenv('Y')\n"
                     "c = dict(os.environ)\nos.environ['ORT_DISABLE_TELEMETRY'] = '1'\nos.environ['PATH'] = 'x'\n")
    assert sorted(line for line, _ in _environment_touches(tree)) == [2, 3, 4, 5, 7]


def _names_in_code() -> dict[str, set[str]]:
    """Every string constant that looks like a variable name, by name → modules (``__all__`` lists
    and f-string prefixes aside: a family's prefix is matched separately)."""
    names: dict[str, set[str]] = {}
    for path, tree in _modules():
        if path == HOME_MODULE:
            continue
        skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
                for n in ast.walk(node.value)}
        skip |= {id(n) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for n in node.values}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
                    and LOOKS_LIKE_A_VARIABLE.match(node.value)):
                names.setdefault(node.value, set()).add(str(path.relative_to(REPO)))
    return names


def test_every_variable_the_code_names_is_listed_and_every_listed_one_is_used():
    in_code = _names_in_code()
    unlisted = {n: sorted(m) for n, m in in_code.items()
                if n not in WRITTEN and not any(v.covers(n) for v in VARIABLES)}
    assert not unlisted, f"list these in probe_core/environment.py (VARIABLES, or WRITTEN): {unlisted}"
    sources = "\n".join(p.read_text("utf-8") for p, _ in _modules() if p != HOME_MODULE)
    stale = [v.name for v in VARIABLES
             if (v.name not in in_code if not v.name.endswith(">") else v.name[: v.name.index("<")] not in sources)]
    assert not stale, f"listed in probe_core/environment.py but read nowhere: {stale}"
    assert not [n for n in WRITTEN if n not in in_code]


def test_the_readme_table_is_the_list():
    readme = (REPO / "README.md").read_text("utf-8")
    assert environment.TABLE_BEGIN in readme and environment.TABLE_END in readme
    assert environment.with_table(readme) == readme, \
        "README.md's settings table differs from probe_core/environment.py: run `python -m probe_core.environment README.md`"
    for v in VARIABLES:  # one row each, with its default
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{v.name}` |"))
        assert (v.default or "(unset)") in row


def test_the_readme_check_fails_on_a_missing_or_changed_row():
    readme = (REPO / "README.md").read_text("utf-8")
    without = "\n".join(line for line in readme.splitlines() if not line.startswith("| `PROBE_DAEMON` |")) + "\n"
    assert environment.with_table(without) != without
    changed = readme.replace("| `PROBE_MIN_FREE_MB` | `128` |", "| `PROBE_MIN_FREE_MB` | `64` |")
    assert changed != readme and environment.with_table(changed) != changed


def _same(value, default: str) -> bool:
    """Whether a default in the code agrees with a listed one: the same number or word; a default
    listed in words, "(...)", must name a one-word value (``PROBE_LOG``'s WARNING and INFO), and
    a phrase in the code (DOCKER_HOST's "the default socket ...") is a message, not a value."""
    try:
        return float(value) == float(default)
    except (TypeError, ValueError):
        if default.startswith("("):
            return not re.fullmatch(r"[\w.:-]+", str(value)) or bool(re.search(rf"\b{re.escape(str(value))}\b", default))
        return str(value) == default


def _literal_defaults():
    """``X.get("NAME", LITERAL)`` and ``X.get("NAME") or LITERAL`` for listed names, in the code."""
    for path, tree in _modules():
        for node in ast.walk(tree):
            call, default = None, None
            if isinstance(node, ast.Call) and len(node.args) == 2:
                call, default = node, node.args[1]
            elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and isinstance(node.values[0], ast.Call):
                call, default = node.values[0], node.values[1]
                if len(call.args) != 1:
                    continue
            if not (call and isinstance(call.func, ast.Attribute) and call.func.attr == "get"
                    and call.args and isinstance(call.args[0], ast.Constant) and isinstance(default, ast.Constant)):
                continue
            name = call.args[0].value
            if isinstance(name, str) and default.value not in ("", None) and any(v.name == name for v in VARIABLES):
                yield f"{path.relative_to(REPO)}:{node.lineno}", name, default.value


def test_the_defaults_in_the_code_are_the_listed_ones():
    from probe_cli.owner_verbs import DEFAULT_PING_S, DEFAULT_RPC_TIMEOUT_S
    from probe_core.config import WorkspaceConfig
    from probe_core.engine.settings import EngineSettings
    from probe_core.storage.disk_space import DEFAULT_MIN_FREE_MB

    listed = {v.name: v.default for v in VARIABLES}
    found = list(_literal_defaults())
    assert len(found) >= 8  # the check sees the call sites
    wrong = [(where, name, value, listed[name]) for where, name, value in found if not _same(value, listed[name])]
    assert not wrong, f"a default in the code differs from probe_core/environment.py: {wrong}"
    engine = EngineSettings()
    in_code = [("PROBE_DEBOUNCE_S", engine.debounce_s), ("PROBE_MAX_WAIT_S", engine.max_wait_s),
               ("PROBE_STABLE_S", engine.stable_s), ("PROBE_BURST_FILES", engine.burst_files),
               ("PROBE_RESCAN_S", engine.rescan_s), ("PROBE_DENSE_BATCH", engine.dense_batch),
               ("PROBE_ATTACH_TIMEOUT_S", engine.attach_timeout_s), ("PROBE_RPC_TIMEOUT_S", engine.rpc_timeout_s),
               ("PROBE_TAKEOVER_POLL_S", engine.takeover_poll_s), ("PROBE_MAX_TOKENS", engine.default_max_tokens),
               ("PROBE_RECORD_INTERVAL_S", engine.record_interval_s), ("PROBE_DAEMON_IDLE_S", engine.daemon_idle_s),
               ("PROBE_RPC_TIMEOUT_S", DEFAULT_RPC_TIMEOUT_S), ("PROBE_OWNER_PING_S", DEFAULT_PING_S),
               ("PROBE_MIN_FREE_MB", DEFAULT_MIN_FREE_MB), ("PROBE_MAX_FILE_BYTES", WorkspaceConfig().max_file_bytes),
               ("PROBE_PRESET", WorkspaceConfig().preset)]
    wrong = [(name, value, listed[name]) for name, value in in_code if not _same(value, listed[name])]
    assert not wrong, f"a default in the code differs from probe_core/environment.py: {wrong}"


def test_reads_happen_at_call_time(monkeypatch):
    from probe_core.config import user_data_dir
    from probe_core.engine.settings import EngineSettings

    monkeypatch.setenv("PROBE_DEBOUNCE_S", "0.7")
    monkeypatch.setenv("PROBE_DATA_DIR", "/tmp/h21-a")
    assert EngineSettings.from_env().debounce_s == 0.7 and user_data_dir() == Path("/tmp/h21-a")
    monkeypatch.setenv("PROBE_DEBOUNCE_S", "1.5")
    monkeypatch.setenv("PROBE_DATA_DIR", "/tmp/h21-b")
    assert EngineSettings.from_env().debounce_s == 1.5 and user_data_dir() == Path("/tmp/h21-b")
    assert environment.environ().get("PROBE_DEBOUNCE_S") == "1.5" and "PROBE_DEBOUNCE_S" in environment.environ()


def test_an_unlisted_name_is_refused(monkeypatch):
    monkeypatch.setenv("PROBE_NOT_A_SETTING", "1")
    with pytest.raises(KeyError, match="not a listed setting"):
        environment.get("PROBE_NOT_A_SETTING")
    with pytest.raises(KeyError, match="not a listed setting"):
        environment.environ().get("PROBE_NOT_A_SETTING")
    with pytest.raises(KeyError, match="not listed in WRITTEN"):
        environment.set_default("PROBE_NOT_A_SETTING", "1")
    monkeypatch.setenv("PROBE_LSP_SERVER_PYTHON", "pylsp")  # a family's member is listed by its pattern
    assert environment.get("PROBE_LSP_SERVER_PYTHON") == "pylsp"
