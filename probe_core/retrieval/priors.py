"""Priors on what kind of chunk a query wants: the implementation, unless its wording (or a
``chunk_kinds`` filter) asks for tests, documentation, examples, build/CI/tool configuration or how
to do something.

Agents ask "how does X work" / "where is X done" to find the code that does X. Tests and examples
name the same identifiers as that code, documentation describes the same feature in the same words
as the question, and CI workflows, Makefiles and tool configs name the features they build, test
and lint, so all of them win lexical and semantic ties they should not. Each gets its fused score
scaled down unless asked for (factors measured on the dev set, ``docs/benchmarks.md``).
"""
from __future__ import annotations

from ..storage.protocol import StoreHit
from .query_intent import QueryIntent
from .ranking import RankingSettings

EXAMPLE_DIRS = frozenset({"example", "examples", "_examples", "demo", "demos", "sample", "samples"})
# Where CI pipelines live, and the files that build, package, lint or test a project rather than
# implement it (configuration files, chunk_kind "config", count wherever they are).
BUILD_DIRS = frozenset({".github", ".gitlab", ".circleci", ".buildkite", ".azure-pipelines", ".woodpecker",
                        ".devcontainer", ".husky", ".ci"})
BUILD_FILES = frozenset({
    "makefile", "gnumakefile", "justfile", "rakefile", "jenkinsfile", "dockerfile", "containerfile", "vagrantfile",
    "noxfile.py", "setup.py", "fabfile.py", "dodo.py", "build.rs", "gulpfile.js", "gruntfile.js", "build.gradle",
    "build.gradle.kts", "settings.gradle", "cmakelists.txt", "meson.build", "build.bazel", "workspace",
    "webpack.config.js", "rollup.config.js", "vite.config.js", "vite.config.ts", "babel.config.js",
    "jest.config.js", "jest.config.ts", "karma.conf.js", ".eslintrc.js", "eslint.config.js", "prettier.config.js",
})
BUILD_SUFFIXES = (".in", ".cfg", ".ini", ".toml", ".lock", ".mk", ".cmake", ".dockerfile")


def is_build_path(path: str) -> bool:
    """True for CI pipelines, build scripts and tool configuration (``.github/workflows/ci.yml``,
    ``Makefile``, ``noxfile.py``, ``requirements/dev.in``...)."""
    parts = path.split("/")
    name = parts[-1].lower()
    return (any(part.lower() in BUILD_DIRS for part in parts[:-1]) or name in BUILD_FILES
            or name.startswith(("dockerfile.", "makefile.", "docker-compose", "requirements"))
            or name.endswith(BUILD_SUFFIXES))


def is_example_path(path: str) -> bool:
    """True for files under an examples/demos/samples directory."""
    return any(part.lower() in EXAMPLE_DIRS for part in path.split("/")[:-1])


def kind_prior(payload: dict, intent: QueryIntent, wanted_kinds: list[str] | None, ranking: RankingSettings) -> float:
    """The factor a candidate's fused score is scaled by (1.0: no prior applies)."""
    kind = payload.get("chunk_kind")
    if wanted_kinds and kind in wanted_kinds and len(wanted_kinds) == 1:
        return 1.0  # the filter already says which kind is wanted
    if kind == "test" and not intent.asks_tests:
        return ranking.test_penalty
    if kind == "doc" and not (intent.asks_docs or intent.asks_howto or intent.asks_examples):
        return ranking.doc_penalty  # READMEs and guides hold the examples and the how-tos
    path = payload.get("file_path", "")
    if kind in ("code", "config") and not intent.asks_build and (kind == "config" or is_build_path(path)):
        return ranking.build_penalty
    if kind == "code" and not intent.asks_examples and is_example_path(path):
        return ranking.example_penalty
    return 1.0


def apply_priors(hits: list[StoreHit], intent: QueryIntent, wanted_kinds: list[str] | None,
                 ranking: RankingSettings) -> list[StoreHit]:
    """Scale each hit's score by its prior and re-sort (stable: equal scores keep fused order)."""
    for h in hits:
        h.score *= kind_prior(h.payload, intent, wanted_kinds, ranking)
    return sorted(hits, key=lambda h: -h.score)
