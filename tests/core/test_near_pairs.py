"""The near-duplicate pairs kept between the doctor's runs give the findings the whole
search gives, whatever changed in between: texts added, removed, edited, repeated."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.core.doctor import duplicates
from memtui.core.model import LAYERS, Entry
from memtui.core.near_pairs import NearPairs, cache_path
from memtui.core.similarity import close_across, close_pairs, duplicate_pairs, normalise_for_duplicates
from tests.core.test_similarity import _mutate, all_pairs, corpus


def _changed(rnd: random.Random, texts: list[str], seed: int) -> list[str]:
    """Some texts dropped, some edited, some new, some repeated, the order shuffled."""
    out = [t for t in texts if rnd.random() > 0.1]
    out = [_mutate(rnd, t) if rnd.random() < 0.1 else t for t in out]
    out += corpus(seed + 1, rnd.randint(0, max(1, len(texts) // 4)))
    out += rnd.sample(out, min(len(out), 3))
    rnd.shuffle(out)
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 150))
def test_pairs_found_again_from_the_saved_ones_are_the_whole_searchs(tmp_path_factory, seed, n):
    from memtui.core.paths import Paths

    base = tmp_path_factory.mktemp("near")
    (base / "home").mkdir()
    paths = Paths(base / "home", base / "ws")
    rnd = random.Random(seed)
    texts = corpus(seed, n)

    def later(a: int, b: int) -> int:
        return max(a, b)

    for round_ in range(4):
        near = NearPairs(paths)
        assert duplicate_pairs(texts, later, near) == duplicate_pairs(texts, later) == all_pairs(texts, later)
        if round_:  # a run after a change compares only the texts it had not seen
            assert near.compared <= len(set(map(normalise_for_duplicates, texts)))
        texts = _changed(rnd, texts, seed + round_)
    assert cache_path(paths).is_file()


def test_a_small_change_compares_only_the_new_texts(paths):
    texts = corpus(5, 600)
    entries = [Entry(id=f"e{i}", layer=LAYERS[i % 3], text=t, rel_path="f.md", line_start=i) for i, t in enumerate(texts)]
    first = duplicates(entries, paths)
    assert first == duplicates(entries)
    assert len(first) > 50

    entries.append(Entry(id="new", layer="user", text=texts[3] + " x", rel_path="g.md", line_start=1))
    near = NearPairs(paths)
    found = duplicate_pairs([e.text for e in entries], max, near)
    assert near.compared == 1
    assert found == duplicate_pairs([e.text for e in entries], max)
    assert duplicates(entries, paths) == duplicates(entries)


def test_a_damaged_or_foreign_cache_is_searched_again(paths):
    texts = corpus(9, 300)
    NearPairs(paths)([normalise_for_duplicates(t) for t in texts])
    target = cache_path(paths)
    for damage in (target.read_bytes()[:-7], b"not a cache", target.read_bytes().replace(b"memtui", b"other!", 1)):
        target.write_bytes(damage)
        near = NearPairs(paths)
        assert duplicate_pairs(texts, max, near) == duplicate_pairs(texts, max)
        assert near.compared == len(set(map(normalise_for_duplicates, texts)))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 120), m=st.integers(1, 60))
def test_pairs_across_two_lists_are_those_of_all_pairs(seed, n, m):
    rows = [normalise_for_duplicates(t) for t in corpus(seed, n)]
    cols = [normalise_for_duplicates(t) for t in corpus(seed + 7, m)] + rows[: n // 2]
    both = rows + cols
    within = {(i, j) for i, j in close_pairs(both)} | {(i, j) for i in range(len(both)) for j in range(i + 1, len(both))
                                                      if both[i] == both[j]}
    expected = sorted((i, j - len(rows)) for i, j in within if i < len(rows) <= j)
    assert sorted(close_across(rows, cols)) == expected
