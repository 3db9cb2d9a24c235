"""The blocked near-duplicate search finds exactly what comparing every pair finds."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from memtui.core.doctor import duplicates, reported_order
from memtui.core.model import LAYERS, Entry
from memtui.core.similarity import (
    DUPLICATE_SCORE,
    NearDuplicates,
    duplicate_pairs,
    near_duplicate,
    normalise_for_duplicates,
    says_the_same,
)

WORDS = ("use vitest not jest prefer pnpm over npm 数据库 连接池 超时 deploy the api with token retry "
         "backoff cache a b c x").split()


def _mutate(rnd: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rnd.randint(0, max(1, len(chars) // 12))):
        op = rnd.random()
        at = rnd.randint(0, len(chars))
        if op < 0.4 and chars:
            del chars[min(at, len(chars) - 1)]
        elif op < 0.8:
            chars.insert(at, rnd.choice("abcxyz 数 "))
        elif chars:
            chars[min(at, len(chars) - 1)] = rnd.choice("ABCQ")
    return "".join(chars)


def corpus(seed: int, n: int) -> list[str]:
    """Families of near-copies (edits, case, spacing), very short texts, and texts whose
    lengths sit on the 9/11 boundary of a 90 ratio (one contains the other)."""
    rnd = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        kind = rnd.random()
        if kind < 0.1:
            out.append(rnd.choice(["", "a", "ab", "A", "b a", "x"]))
        elif kind < 0.2:
            long = "".join(rnd.choice("abcdef ") for _ in range(77))
            out += [long, long[:63], long[:62]]
        else:
            base = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 25)))
            out.append(base)
            for _ in range(rnd.randint(0, 3)):
                out.append(_mutate(rnd, base) if rnd.random() < 0.8 else "  " + base.upper() + " ")
    return out[:n]


def all_pairs(texts: list[str], later) -> list[tuple[int, int]]:
    """The plain walk over every pair (no length bound, no blocking): the oracle."""
    norm = [normalise_for_duplicates(t) for t in texts]
    order = sorted(range(len(norm)), key=lambda i: len(norm[i]))
    out, reported = [], set()
    for a_pos, a in enumerate(order):
        if a in reported:
            continue
        for b in order[a_pos + 1:]:
            if b in reported:
                continue
            if fuzz.ratio(norm[a], norm[b]) >= DUPLICATE_SCORE and says_the_same(norm[a], norm[b]):
                second = later(a, b)
                reported.add(second)
                out.append((a + b - second, second))
    return out


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 160))
def test_blocked_pairs_equal_all_pairs(seed, n):
    texts = corpus(seed, n)
    layer_of = [random.Random(seed + i).choice(LAYERS) for i in range(len(texts))]

    def later(a: int, b: int) -> int:
        return max(a, b, key=lambda i: (LAYERS.index(layer_of[i]), i))

    assert duplicate_pairs(texts, later) == all_pairs(texts, later)


def test_a_seeded_corpus_has_the_doctors_findings_of_all_pairs():
    texts = corpus(7, 1500)
    entries = [Entry(id=f"e{i}", layer=LAYERS[i % 3], text=t, rel_path="f.md", line_start=i) for i, t in enumerate(texts)]
    found = duplicates(entries)
    assert len(found) > 100  # the corpus has many near-duplicates

    entries.sort(key=reported_order)  # the doctor's order: the later of a pair is the one reported
    expected = all_pairs([e.text for e in entries], max)
    assert [(f.entry_id, f.reason) for f in found] == [
        (entries[second].id, f"near-duplicate of {entries[first].source_ref}") for first, second in expected]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 120))
def test_the_index_answers_as_near_duplicate(seed, n):
    texts = corpus(seed, n)
    pool = [Entry(id=f"e{i}", layer="user", text=t) for i, t in enumerate(texts)]
    queries = corpus(seed + 1, 40) + texts[:10]
    index: NearDuplicates[Entry] = NearDuplicates()
    for e in pool:
        index.add(e, e.text)
    for q in queries:
        assert index.best(q) == near_duplicate(pool, q), q


def test_small_blocks_and_long_texts_find_what_all_pairs_find(monkeypatch):
    """The search's blocks (rows × columns of a length window) split where a pair can fall
    across their edges, and texts of more than 255 characters are counted in wider integers:
    neither may lose a pair."""
    import memtui.core.similarity as similarity

    monkeypatch.setattr(similarity, "_ROWS", 3)
    monkeypatch.setattr(similarity, "_COLS", 5)
    rnd = random.Random(11)
    texts = corpus(3, 150)
    long = [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(40, 120))) for _ in range(25)]
    texts += long + [_mutate(rnd, t) for t in long] + [t + " é" * 300 for t in long[:5]] + ["x" * 70_000, "x" * 69_000]
    rnd.shuffle(texts)

    def later(a: int, b: int) -> int:
        return max(a, b)

    found = duplicate_pairs(texts, later)
    assert len(found) > 40
    assert found == all_pairs(texts, later)
