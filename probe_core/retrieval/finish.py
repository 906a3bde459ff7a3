"""The last steps of a search answer, whoever ranked it (a project, a library, several fused): each
result says whether its snippet is whole and which collection it came from, and the answer fits
the caller's token budget, saying what it cut. ``engine.answers`` finishes one source's answer,
``libraries.fusion`` a fused one; both with these functions.
"""
from __future__ import annotations

CHARS_PER_TOKEN = 4
RESULT_OVERHEAD_CHARS = 160  # path, source, scores and JSON punctuation of one result
ANSWER_OVERHEAD_CHARS = 400
SNIPPET_STEPS = (10, 5, 2)  # lines kept when a snippet must shrink, tried in this order


def _result_chars(r: dict) -> int:
    return len(r.get("snippet") or "") + RESULT_OVERHEAD_CHARS + len(r.get("path", ""))


def fit_budget(results: list[dict], max_tokens: int | None) -> dict:
    """Trim ``results`` in place to fit ``max_tokens``: shorter snippets first, then fewer results.

    Snippets shrink from the lowest-ranked result upward, in steps (10, 5, 2 lines), so the best
    hits keep the most text; only when every snippet is down to 2 lines are results dropped from
    the end (at least one is always kept). Returns what was cut.
    """
    budget_chars = None if max_tokens is None else max_tokens * CHARS_PER_TOKEN - ANSWER_OVERHEAD_CHARS
    cut = {"results_dropped": 0, "snippets_shortened": 0, "max_tokens": max_tokens,
           "estimated_tokens": 0}
    total = sum(_result_chars(r) for r in results)
    if budget_chars is not None and total > budget_chars:
        shortened: set[int] = set()
        for keep in SNIPPET_STEPS:
            for i in range(len(results) - 1, -1, -1):
                if total <= budget_chars:
                    break
                r = results[i]
                lines = (r.get("snippet") or "").split("\n")
                if len(lines) > keep:
                    before = _result_chars(r)
                    r["snippet"] = "\n".join(lines[:keep])
                    r["snippet_truncated"] = True
                    total += _result_chars(r) - before
                    shortened.add(i)
            if total <= budget_chars:
                break
        while total > budget_chars and len(results) > 1:
            dropped = results.pop()
            shortened.discard(len(results))
            total -= _result_chars(dropped)
            cut["results_dropped"] += 1
        cut["snippets_shortened"] = len(shortened)
    cut["estimated_tokens"] = (total + ANSWER_OVERHEAD_CHARS) // CHARS_PER_TOKEN
    return cut


def fit_answer(out: dict, max_tokens: int | None) -> str | None:
    """Finish ``out``: every result's ``snippet_truncated`` (its snippet shows fewer lines than its
    range), the results fit to ``max_tokens`` (None: no budget), ``out["truncated"]`` saying what
    was cut. Returns the note for the answer's message when something was cut, else None."""
    for r in out["results"]:
        shown = len(r["snippet"].split("\n")) if r.get("snippet") else 0
        r["snippet_truncated"] = shown < r["end_line"] - r["start_line"] + 1
    cut = fit_budget(out["results"], max_tokens)
    out["truncated"] = cut
    if not (cut["results_dropped"] or cut["snippets_shortened"]):
        return None
    return (f"trimmed to fit max_tokens={max_tokens}: {cut['snippets_shortened']} snippets shortened, "
            f"{cut['results_dropped']} results dropped; open_file(source) reads any range in full, "
            "or ask again with a larger max_tokens")


def mark_project(answer: dict) -> dict:
    """Say on each result that it comes from the project (libraries' results say their library)."""
    for r in answer.get("results", []):
        r.setdefault("collection", "project")
        r.setdefault("library_name", None)
    return answer
