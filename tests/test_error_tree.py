"""One error tree: every exception class Probe defines is a ``ProbeError`` (issue 21, item 5), and the
ones that had a builtin base keep it, so the ``except`` clauses written for it still catch them."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from probe_core.errors import ProbeError

PACKAGES = ("probe_core", "probe_cli", "probe_tui", "probe_mcp")


def _exception_classes() -> list[type]:
    found = []
    for name in PACKAGES:
        package = importlib.import_module(name)
        modules = [name] + [m.name for m in pkgutil.walk_packages(package.__path__, f"{name}.")
                            if not m.name.endswith("__main__")]  # `python -m probe_cli` runs the CLI
        for module_name in modules:
            module = importlib.import_module(module_name)
            found += [c for c in vars(module).values() if inspect.isclass(c) and issubclass(c, BaseException)
                      and c.__module__ == module_name]
    return found


def test_every_exception_class_is_a_probe_error():
    classes = _exception_classes()
    assert len(classes) > 30  # the walk found the tree (errors.py alone holds 13)
    outside = sorted(f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, ProbeError))
    assert not outside, f"make these ProbeError subclasses (keep a builtin base callers catch): {outside}"


def test_the_old_builtin_bases_still_catch():
    from probe_core.engine.rpc import OwnerUnavailable
    from probe_core.errors import BackendUnavailable
    from probe_core.indexing.watched_dirs import WatchLimitReached
    from probe_core.libraries.pdf_text import PdfTextError
    from probe_core.scan._git_brackets import InertPattern, split_brackets

    assert issubclass(WatchLimitReached, RuntimeError) and issubclass(InertPattern, ValueError)
    assert issubclass(PdfTextError, ValueError)
    # _check_alive (probe_cli/owner_verbs.py) turns a BackendUnavailable into "owner not answering",
    # and must let "no owner at all" through to call_owner, which then answers by itself
    assert not issubclass(OwnerUnavailable, BackendUnavailable)
    with pytest.raises(ValueError, match="never closed") as caught:  # what _ignore_rules catches
        split_brackets("[a")
    assert isinstance(caught.value, ProbeError)
