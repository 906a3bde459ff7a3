"""Path -> language and path -> chunk kind."""
from __future__ import annotations

import pytest

from probe_core.chunking import chunk_kind_for, language_for_path


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/app.py", "python"),
        ("types.pyi", "python"),
        ("web/index.js", "javascript"),
        ("web/mod.mjs", "javascript"),
        ("web/mod.cjs", "javascript"),
        ("web/App.jsx", "javascript"),
        ("web/app.ts", "typescript"),
        ("web/app.mts", "typescript"),
        ("web/app.cts", "typescript"),
        ("web/App.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/Main.java", "java"),
        ("src/x.c", "c"),
        ("include/x.h", "c"),
        ("src/x.cc", "cpp"),
        ("src/x.cpp", "cpp"),
        ("src/x.cxx", "cpp"),
        ("include/x.hpp", "cpp"),
        ("include/x.hh", "cpp"),
        ("include/x.hxx", "cpp"),
        ("lib/x.rb", "ruby"),
        ("Gemfile", "ruby"),
        ("src/X.cs", "csharp"),
        ("web/x.php", "php"),
        ("src/X.kt", "kotlin"),
        ("Sources/X.swift", "swift"),
        ("README.md", "markdown"),
        ("docs/guide.markdown", "markdown"),
        ("docs/index.rst", "rst"),
        (".github/workflows/ci.yml", "yaml"),
        ("compose.yaml", "yaml"),
        ("pyproject.toml", "toml"),
        ("package.json", "json"),
        ("site/index.html", "html"),
        ("scripts/run.sh", "shell"),
        ("db/schema.sql", "sql"),
        ("site/style.css", "css"),
        ("notes.txt", "text"),
        ("setup.cfg", "text"),
        ("tox.ini", "text"),
        ("Makefile", "text"),
        ("Dockerfile", "text"),
        ("docker/Dockerfile.dev", "text"),
        ("LICENSE", "text"),
        ("README", "text"),
        ("SRC/UPPER.PY", "python"),
        ("data/blob.xyz", None),
        ("bin/tool", None),
    ],
)
def test_language_for_path(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("src/app.py", "code"),
        ("tests/test_app.py", "test"),
        ("pkg/test_app.py", "test"),
        ("pkg/app_test.py", "test"),
        ("conftest.py", "test"),
        ("server/handler_test.go", "test"),
        ("server/handler.go", "code"),
        ("web/app.test.ts", "test"),
        ("web/app.spec.js", "test"),
        ("web/__tests__/app.tsx", "test"),
        ("tests/integration.rs", "test"),
        ("src/lib.rs", "code"),
        ("src/test/java/com/x/FooTest.java", "test"),
        ("src/main/java/com/x/FooTest.java", "test"),
        ("src/main/java/com/x/Latest.java", "code"),
        ("spec/models/user_spec.rb", "test"),
        ("README.md", "doc"),
        ("docs/index.rst", "doc"),
        ("notes.txt", "doc"),
        ("site/index.html", "doc"),
        ("tests/README.md", "doc"),  # documents stay documents wherever they live
        ("config.yaml", "config"),
        ("pyproject.toml", "config"),
        ("package.json", "config"),
        ("setup.cfg", "config"),
        ("tox.ini", "config"),
        ("tests/fixtures/data.json", "config"),
        ("Makefile", "code"),
        ("Dockerfile", "code"),
        ("data/blob.xyz", "code"),
    ],
)
def test_chunk_kind_for(path: str, kind: str) -> None:
    assert chunk_kind_for(path, language_for_path(path)) == kind
