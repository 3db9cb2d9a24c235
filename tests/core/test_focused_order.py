"""The narrowed walk of focused injection (core/injection_narrowed.py): a layer's candidates in
play that may pass F7, split by Q ∩ M (`Narrowed.parts`) and read in non-increasing relevance
(`ByRelevance`), are every one of them, each with the relevance F4 and F5 give it. The
engine's results are held to `reference_focused` in test_focused.py; these hold the parts."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from memtui.core import focused
from memtui.core.bitmaps import bitmap, flags, positions
from memtui.core.injection_narrowed import ByRelevance, Narrowed, Scorable

TERMS = ["pool", "timeout", "cache", "deploy", "数据库", "queue", "retry", "lint", "token", "schema", "redis", "trace"]


def _holds(rnd: random.Random, n: int, q: list[str], dense: bool = False) -> dict[str, frozenset[int]]:
    return {t: frozenset(p for p in range(n) if rnd.random() < (0.5 if dense else rnd.choice([0.05, 0.3, 0.7])))
            for t in sorted(q)}


@given(seed=st.integers(0, 10_000), n=st.integers(0, 120), k=st.integers(0, 12), dense=st.booleans(),
       semantic=st.sampled_from(["none", "spread", "close", "ties"]))
def test_the_walk_gives_every_live_position_once_in_non_increasing_relevance(seed, n, k, dense, semantic):
    """With few parts (a short message: the parts merged on a heap) or many (`dense`: nearly
    each position its own Q ∩ M, as a long message gives: every position walked at once)."""
    rnd = random.Random(seed)
    q = rnd.sample(TERMS, k)
    holds = _holds(rnd, n, q, dense)
    live = frozenset(p for p in range(n) if rnd.random() < 0.7)
    narrowed = Narrowed.__new__(Narrowed)
    narrowed.holds = {t: bitmap(sorted(ps), n) for t, ps in holds.items()}
    narrowed.n_active, narrowed._flags, narrowed.q = n, {}, frozenset(q)
    weight = {t: focused.idf(rnd.randint(0, n), n) for t in q}
    qs = frozenset(q)
    kws = narrowed.parts(bitmap(sorted(live), n), weight)
    # the parts: a partition of `live`, each part's positions ascending and of one Q ∩ M, whose
    # F4 keyword score it carries; distinct Q ∩ M in distinct parts
    assert sorted(p for _, ps in kws for p in ps) == sorted(live)
    assert all(list(ps) == sorted(ps) for _, ps in kws)
    keys = [{frozenset(t for t in holds if p in holds[t]) for p in ps} for _, ps in kws]
    assert all(len(k) == 1 for k in keys) and len({next(iter(k)) for k in keys}) == len(kws)
    assert all(kw == focused.keyword_score(qs, next(iter(k)), weight) for (kw, _), k in zip(kws, keys))
    sems = None
    if semantic != "none":
        low, spread = {"spread": (0.0, 1.0), "close": (0.5, 0.1), "ties": (0.3, 0.0)}[semantic]
        sems = [round(low + spread * rnd.random(), 4) for _ in range(n)]
    base = focused.lower_median(sems) if sems else 0.0
    walk = list(ByRelevance(kws, sems, base))
    plain = {p: focused.relevance(kw, focused.semantic_lift(sems[p], base) if sems else 0.0) for kw, ps in kws for p in ps}
    assert sorted(p for _, p in walk) == sorted(live)
    assert all(rel == plain[p] for rel, p in walk)
    assert all(a[0] >= b[0] for a, b in zip(walk, walk[1:]))
    assert list(ByRelevance(kws, sems, base)) == walk  # each walk starts over, the same


@given(seed=st.integers(0, 10_000), n=st.integers(0, 300), others=st.frozensets(st.integers(0, 400), max_size=5))
def test_flags_and_scorable_answer_as_the_positions_do(seed, n, others):
    """`flags` (a bitmap as one byte per position) and `Scorable` (a bitmap and a few others)
    answer membership as the sets of positions they stand for."""
    rnd = random.Random(seed)
    ps = sorted(rnd.sample(range(n), rnd.randint(0, n)))
    f = flags(bitmap(ps, n))
    assert [p for p in range(len(f)) if f[p]] == ps and set(f) <= {0, 1}
    scorable = Scorable(bitmap(ps, n), others)
    assert [p for p in range(-2, 402) if p in scorable] == sorted(set(ps) | others)


@given(seed=st.integers(0, 10_000), n=st.integers(0, 300), start=st.integers(-1, 320), width=st.integers(-1, 320))
def test_positions_are_the_set_bits_in_a_range_of_a_bitmap_or_its_complement(seed, n, start, width):
    """`positions` (a bitmap's set bits in `start .. stop-1`, ascending) of a bitmap and of its
    complement (`~b`: the positions it does not hold), as the sets of positions they stand for."""
    rnd = random.Random(seed)
    ps = sorted(rnd.sample(range(n), rnd.randint(0, n)))
    start = max(start, 0)
    stop = start + width
    b = bitmap(ps, n)
    assert positions(b, start, stop) == [p for p in ps if start <= p < stop]
    held = set(ps)
    assert positions(~b, start, stop) == [p for p in range(start, max(start, stop)) if p not in held]
