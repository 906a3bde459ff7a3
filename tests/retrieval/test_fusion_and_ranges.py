"""Fusing extra ranked lists with the store's, and shaping hits into ranges."""
from __future__ import annotations

import pytest

from probe_core.retrieval.rank_fusion import fuse, rrf_term
from probe_core.retrieval.ranges import Range, cap_per_file, drop_overlaps, merge_hits
from probe_core.retrieval.ranking import DEFAULT_RANKING
from probe_core.storage.protocol import StoreHit


def _hit(pid, path="a.py", start=1, end=5, dense=None, bm25=None):
    return StoreHit(id=pid, score=0.0, payload={"file_path": path, "start_line": start, "end_line": end},
                    dense_rank=dense, bm25_rank=bm25)


def test_fusion_uses_qdrants_rrf_formula_and_adds_extra_lists():
    hits = [_hit("a", dense=1, bm25=3), _hit("b", dense=2)]
    fetched = []

    def payloads(ids):
        fetched.extend(ids)
        return {"c": {"file_path": "c.py", "start_line": 1, "end_line": 2}}

    out = fuse(hits, {"literal": (["c", "b"], 1.0), "off": (["zzz"], 0.0)}, DEFAULT_RANKING, payloads)
    k = DEFAULT_RANKING.rrf_k
    scores = {h.id: h.score for h in out}
    assert scores["a"] == pytest.approx(1 / k + 1 / (k + 2))  # ranks from 1: rank 1 → 1/k (Qdrant's)
    assert scores["b"] == pytest.approx(1 / (k + 1) + 1 / (k + 1))
    assert scores["c"] == pytest.approx(1 / k)
    assert fetched == ["c"]  # a list with weight 0 asks for nothing
    assert [h.id for h in out] == ["a", "b", "c"]  # 1/60 + 1/62 edges out 2/61
    assert out[1].extra_ranks == {"literal": 2} and out[2].extra_ranks == {"literal": 1}


def test_equal_scores_break_ties_the_same_way_every_time():
    # dense 3 + bm25 5 and dense 5 + bm25 3 sum alike: the better single rank wins, then the id
    one = [_hit("x", dense=5, bm25=3), _hit("y", dense=3, bm25=5), _hit("w", dense=4, bm25=4)]
    two = list(reversed(one))
    order = [h.id for h in fuse(one, {}, DEFAULT_RANKING, dict)]
    assert order == [h.id for h in fuse(two, {}, DEFAULT_RANKING, dict)]
    assert order[-1] == "w" and rrf_term(None, 1.0, 60) == 0.0


def test_an_expanded_range_never_repeats_lines_of_a_better_one():
    big = Range("a.py", 1, 131, 1.0, [_hit("1")])
    inside = Range("a.py", 17, 22, 0.9, [_hit("2")])
    other_file = Range("b.py", 17, 22, 0.8, [_hit("3")])
    other_version = Range("a.py", 17, 22, 0.7, [_hit("4")], version="feature")
    out = drop_overlaps([big, inside, other_file, other_version])
    assert [(r.path, r.start, r.end, r.version) for r in out] == [
        ("a.py", 1, 131, ""), ("b.py", 17, 22, ""), ("a.py", 17, 22, "feature")]
    assert [h.id for h in out[0].hits] == ["1", "2"]


def _shared_lines(ranges):
    return [(r.path, r.version, line) for i, r in enumerate(ranges) for o in ranges[i + 1:] if r.overlaps(o)
            for line in range(max(r.start, o.start), min(r.end, o.end) + 1)]


def test_a_range_too_long_to_join_is_clipped_to_the_lines_the_better_one_does_not_show():
    # chi: middleware/compress.go 133-266 and 256-298 (a join would be 166 lines)
    better, worse = Range("a.go", 133, 266, 1.0, [_hit("1")]), Range("a.go", 256, 298, 0.9, [_hit("2")])
    out = drop_overlaps([better, worse])
    assert [(r.start, r.end) for r in out] == [(133, 266), (267, 298)] and not _shared_lines(out)
    # a worse range around a better one keeps its longer side
    around = drop_overlaps([Range("a.go", 50, 60, 1.0, [_hit("1")]), Range("a.go", 1, 200, 0.9, [_hit("2")])])
    assert [(r.start, r.end) for r in around] == [(50, 60), (61, 200)]


def test_a_join_that_reaches_a_third_range_is_settled_too():
    first = Range("a.py", 1, 50, 1.0, [_hit("1")])
    second = Range("a.py", 100, 120, 0.9, [_hit("2")])
    bridge = Range("a.py", 45, 105, 0.8, [_hit("3")])  # joins the first, which then reaches the second
    out = drop_overlaps([first, second, bridge])
    assert [(r.start, r.end) for r in out] == [(1, 120)] and [h.id for h in out[0].hits] == ["1", "3", "2"]
    long_first = Range("a.py", 1, 150, 1.0, [_hit("1")])
    tail = Range("a.py", 200, 300, 0.9, [_hit("2")])
    clipped = Range("a.py", 140, 210, 0.8, [_hit("3")])  # clipped to 151-210 by the first, it joins the tail
    out = drop_overlaps([long_first, tail, clipped])
    assert [(r.start, r.end) for r in out] == [(1, 150), (151, 300)] and not _shared_lines(out)
    assert [h.id for h in out[1].hits] == ["2", "3"]


def test_per_file_cap_moves_the_extra_ranges_behind():
    ranges = merge_hits([_hit(str(i), "a.py", i * 100, i * 100 + 5) for i in range(1, 5)] + [_hit("b", "b.py")])
    capped = cap_per_file(ranges, 2, top_k=3)
    assert [r.path for r in capped[:3]] == ["a.py", "a.py", "b.py"]
    assert len(capped) == len(ranges)
    assert cap_per_file(ranges, 0, 3) == ranges


def test_graph_neighbours_lift_their_range_or_join_and_never_pass_the_head():
    from probe_core.retrieval.graph_evidence import HUBS, join_neighbours

    head = [Range(f"h{i}.py", 1, 10, 1.0 - i / 100, [_hit(f"h{i}")]) for i in range(HUBS)]
    weak = Range("w.py", 1, 50, 0.001, [_hit("w")])
    mid = Range("m.py", 1, 50, 0.01, [_hit("m")])
    inside_weak = _hit("n1", "w.py", 20, 30)
    elsewhere = _hit("n2", "x.py", 5, 9)
    in_head = _hit("n3", "h0.py", 2, 3)
    out = join_neighbours([*head, mid, weak], [inside_weak, elsewhere, in_head], 1.0, 60, lambda _h: 1.0)
    assert [r.path for r in out[:HUBS]] == [r.path for r in head]
    assert [r.path for r in out[HUBS:]] == ["w.py", "x.py", "m.py"]  # 1/60 lifts w.py past m.py; x.py joins
    assert (out[HUBS + 1].start, out[HUBS + 1].end) == (5, 9) and inside_weak.extra_ranks == {"graph": 1}
    assert len(out) == HUBS + 3  # the neighbour inside a head range adds nothing


def test_random_ranges_never_share_lines_nor_show_lines_no_range_had():
    import random

    rng = random.Random(12)
    for _ in range(300):
        ranges = []
        for i in range(rng.randint(1, 12)):
            start = rng.randint(1, 400)
            ranges.append(Range(rng.choice(["a.py", "b.py"]), start, start + rng.randint(0, 220), 1.0 - i / 100,
                                [_hit(str(i))]))
        shown = {(r.path, line) for r in ranges for line in range(r.start, r.end + 1)}
        out = drop_overlaps([Range(r.path, r.start, r.end, r.score, list(r.hits)) for r in ranges])
        assert not _shared_lines(out)
        kept = {(r.path, line) for r in out for line in range(r.start, r.end + 1)}
        assert kept <= shown and len(out) <= len(ranges)


def test_a_range_in_the_file_of_a_head_range_is_lifted_behind_the_head():
    from probe_core.retrieval.ranges import FILE_HEAD, lift_file_mates

    head = [Range(f"h{i}.py", 1, 10, 1.0 - i / 100, [_hit(f"h{i}")]) for i in range(FILE_HEAD)]
    other = Range("x.py", 1, 10, 0.02, [_hit("x")])
    mate = Range("h1.py", 200, 240, 0.015, [_hit("m", "h1.py", 200, 240)])
    old_copy = Range("h1.py", 300, 340, 0.019, [_hit("o", "h1.py", 300, 340)], version="another-branch")
    weight = DEFAULT_RANKING.file_weight
    assert weight > 0  # on by default
    out = lift_file_mates([*head, other, old_copy, mate], weight, 60)
    assert out[:FILE_HEAD] == head  # the head keeps its places
    assert out[FILE_HEAD:] == [mate, other, old_copy]  # h1.py's second range passes x.py; another version does not
    assert mate.score == pytest.approx(0.015 + weight / 61)
    assert lift_file_mates([*head, other, mate], 0.0, 60)[FILE_HEAD:] == [other, mate]  # off: untouched


def test_a_mechanism_question_lets_graph_evidence_reorder_the_head():
    from probe_core.retrieval.graph_evidence import HUBS, join_neighbours

    def head():
        return [Range(f"h{i}.py", 1, 10, 0.03 - i / 1000, [_hit(f"h{i}")]) for i in range(HUBS)]

    centre = _hit("n", "h2.py", 2, 3)  # the third range holds a neighbour of the others
    weight = DEFAULT_RANKING.graph_head_weight
    assert weight > 0  # on by default (for questions about how the code works: search.py decides)
    moved = join_neighbours(head(), [centre], 1.0, 60, lambda _h: 1.0, weight)
    assert [r.path for r in moved] == ["h2.py", "h0.py", "h1.py", "h3.py", "h4.py"]  # 0.028 + 0.25/60 leads
    kept = join_neighbours(head(), [_hit("n", "h2.py", 2, 3)], 1.0, 60, lambda _h: 1.0)
    assert [r.path for r in kept] == [f"h{i}.py" for i in range(HUBS)]  # otherwise the head stays


def test_search_reorders_the_head_by_the_graph_only_for_a_question_about_the_mechanism(tmp_path, monkeypatch):
    from probe_core import Workspace, index_workspace, search
    from probe_core.retrieval import search as search_mod

    (tmp_path / "pool.py").write_text(
        "def borrow_context(pool):\n    \"\"\"Take a routing context from the pool.\"\"\"\n    return reset_context(pool.pop())\n\n\n"
        "def reset_context(ctx):\n    \"\"\"Clear a routing context before it is reused.\"\"\"\n    ctx.clear()\n    return ctx\n")
    ws = Workspace.open(tmp_path)
    index_workspace(ws)
    seen = []
    real = search_mod.join_neighbours

    def spy(*args):
        seen.append(args[5] if len(args) > 5 else 0.0)
        return real(*args)

    monkeypatch.setattr(search_mod, "join_neighbours", spy)
    search(ws, "how is a routing context reused between requests?")
    search(ws, "reset a routing context before reuse")
    ws.close()
    assert seen == [DEFAULT_RANKING.graph_head_weight, 0.0]
