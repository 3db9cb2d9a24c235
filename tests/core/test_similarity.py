"""The blocked near-duplicate search finds exactly what comparing every pair finds."""

from __future__ import annotations

import random

import pytest
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


VOCABULARY = ("cache retry token deploy api queue schema index worker branch commit review release budget "
              "pipeline router session image alert trace 数据库 连接池 超时 组件 密钥 a to of in with").split()
EDITS = "abcdeéz 数库 ,.-😀"


def _edited(rnd: random.Random, text: str, edits: int) -> str:
    """`text` with `edits` single-character deletions, insertions or substitutions."""
    chars = list(text)
    for _ in range(edits):
        op = rnd.random()
        at = rnd.randint(0, len(chars))
        if op < 0.35 and chars:
            del chars[min(at, len(chars) - 1)]
        elif op < 0.7 or not chars:
            chars.insert(at, rnd.choice(EDITS))
        else:
            chars[min(at, len(chars) - 1)] = rnd.choice(EDITS)
    return "".join(chars)


def seeded_texts(kind: str, seed: int, n: int) -> list[str]:
    """Several thousand texts of one kind: random characters; sentences of one small vocabulary
    (many pairs close); near-copies at every number of edits around the cutoff; unicode (CJK,
    accents, astral characters); empty and very short texts; very long ones."""
    rnd = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        if kind == "random":
            out.append("".join(rnd.choice("abcdefghij klm") for _ in range(rnd.randint(0, 90))))
        elif kind == "vocabulary":
            out.append(" ".join(rnd.choice(VOCABULARY) for _ in range(rnd.randint(1, 8))))
        elif kind == "near copies":
            base = " ".join(rnd.choice(VOCABULARY) for _ in range(rnd.randint(2, 16)))
            out.append(base)
            out += [_edited(rnd, base, max(0, len(base) // 10 + rnd.randint(-3, 3))) for _ in range(rnd.randint(1, 4))]
        elif kind == "unicode":
            alphabet = "数据库连接池超时组件密钥éèêàüß😀🙂𝔘ΩЖ 　"
            base = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 40)))
            out += [base, _edited(rnd, base, rnd.randint(0, 5))]
        elif kind == "short":
            out.append("".join(rnd.choice("ab é") for _ in range(rnd.randint(0, 12))))
        else:  # long
            base = " ".join(rnd.choice(VOCABULARY) for _ in range(rnd.randint(40, 160)))
            out += [base, _edited(rnd, base, rnd.randint(0, len(base) // 8))]
    return [normalise_for_duplicates(t) for t in out[:n]]


def every_close_pair(rows: list[str], cols: list[str]) -> set[tuple[int, int]]:
    """Every pair (r, c) at the cutoff by `fuzz.ratio` (rapidfuzz's `cdist`: the same scorer
    over every pair, nothing left out)."""
    import numpy as np
    from rapidfuzz import process

    scores = process.cdist(rows, cols, scorer=fuzz.ratio, score_cutoff=DUPLICATE_SCORE, dtype=np.float64)
    return {(int(r), int(c)) for r, c in zip(*np.nonzero(scores))}


KINDS = ("random", "vocabulary", "near copies", "unicode", "short", "long")


@pytest.mark.parametrize("kind", KINDS)
def test_the_whole_search_finds_every_pair_that_all_pairs_finds(kind):
    from memtui.core.similarity import close_pairs

    texts = seeded_texts(kind, KINDS.index(kind), 600 if kind == "long" else 3000)
    texts = list(dict.fromkeys(texts))  # distinct, as the doctor's search gets them
    expected = {(i, j) for i, j in every_close_pair(texts, texts) if i < j}
    if kind != "random":
        assert len(expected) > 10  # the corpus has pairs at the cutoff
    found = close_pairs(texts)
    assert len(found) == len(set(found))
    assert set(found) == expected


@pytest.mark.parametrize("kind", KINDS)
def test_the_search_across_two_lists_finds_every_pair_that_all_pairs_finds(kind):
    from memtui.core.similarity import close_across

    texts = seeded_texts(kind, 100 + KINDS.index(kind), 400 if kind == "long" else 2500)
    rows, cols = texts[: len(texts) // 5], texts
    found = close_across(rows, cols)
    assert len(found) == len(set(found))
    assert set(found) == every_close_pair(rows, cols)
    few = rows[:3]  # a few new texts against every saved one: most columns outside their windows
    assert set(close_across(few, cols)) == every_close_pair(few, cols)


def test_every_mixed_corpus_at_small_blocks_and_chunks(monkeypatch):
    """Blocks, marked texts and counted pairs split at every few: no pair lost at an edge."""
    import memtui.core.similarity as similarity
    from memtui.core.similarity import close_across, close_pairs

    for name, value in (("_ROWS", 7), ("_COLS", 13), ("_MARK_TEXTS", 5), ("_PAIR_CHUNK", 11)):
        monkeypatch.setattr(similarity, name, value)
    texts = list(dict.fromkeys(t for k, kind in enumerate(KINDS) for t in seeded_texts(kind, 50 + k, 120)))
    random.Random(3).shuffle(texts)
    expected = every_close_pair(texts, texts)
    assert set(close_pairs(texts)) == {(i, j) for i, j in expected if i < j}
    assert set(close_across(texts[:90], texts)) == {(i, j) for i, j in expected if i < 90}


def _common_pairs(a: str, b: str) -> int:
    """The pairs of adjacent characters `a` and `b` have in common, counted with repeats."""
    from collections import Counter

    mine, theirs = Counter(zip(a, a[1:])), Counter(zip(b, b[1:]))
    return sum(min(k, theirs[pair]) for pair, k in mine.items())


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(KINDS), edits=st.integers(0, 30))
def test_the_pair_bound_holds_at_every_distance(seed, kind, edits):
    """The third bound of the module's docstring, each step on its own: the pairs in common are
    at least `3 * lcs - (la + lb) - 1`, and the marks count them from above."""
    import numpy as np
    from rapidfuzz.distance import LCSseq

    from memtui.core.similarity import _bits_set, _pair_bound, _pair_marks

    rnd = random.Random(seed)
    a = seeded_texts(kind, seed, 1)[0]
    b = normalise_for_duplicates(_edited(rnd, a, edits)) if rnd.random() < 0.8 else seeded_texts(kind, seed + 1, 1)[0]
    common = _common_pairs(a, b)
    assert common >= 3 * LCSseq.similarity(a, b) - len(a) - len(b) - 1

    marks = _pair_marks([a, b])
    only_a = int(_bits_set(marks[0:1] & ~marks[1:2])[0])  # (numpy 1.26 has no bitwise_count: the module's own count)
    only_b = int(_bits_set(marks[1:2] & ~marks[0:1])[0])
    assert common <= max(len(a) - 1, 0) - only_a
    assert common <= max(len(b) - 1, 0) - only_b
    lengths = np.array([len(a), len(b)])
    passes = bool(_pair_bound(marks, lengths, np.array([0]), marks, lengths, np.array([1]))[0])
    if fuzz.ratio(a, b) >= DUPLICATE_SCORE:
        assert passes


def test_the_bits_are_counted_with_or_without_numpys_popcount(monkeypatch):
    import numpy as np

    import memtui.core.similarity as similarity

    words = np.random.default_rng(4).integers(0, 2**63, size=(50, 16), dtype=np.uint64)
    expected = [sum(bin(int(w)).count("1") for w in row) for row in words]
    assert similarity._bits_set(words).tolist() == expected
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    assert similarity._bits_set(words).tolist() == expected
