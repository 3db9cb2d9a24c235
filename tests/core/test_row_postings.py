"""The conversation rows' postings made in bulk (core/store/row_postings.py) are the rule's:
each row's M (`relevance.entry_terms` of its text and tags), inverted."""

from __future__ import annotations

from collections import defaultdict
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.core.relevance import entry_terms
from memtui.core.store import row_postings
from memtui.core.store.row_postings import RowPostings

# ideographs at the block's edges and just outside it, kana, hangul, fullwidth forms, CJK
# punctuation, letters that fold to ASCII (K, ſ, İ), stop words, digits, underscores
_ALPHABET = st.one_of(st.characters(), st.characters(min_codepoint=0x4DF0, max_codepoint=0xA010),
                      st.sampled_from("数据库连接池缓存一鿿〇々ー가나ぁアｶ，。、ｖＩＫſİé_-1²½ ThEaNdOf\n\t\x00"))
_PIECES = st.sampled_from(["数据库连接池", "the pool", "And", "ｖｉｔｅｓｔ", "数x数", "é数", "a数b", "数 数", "İ", "", " "])
_TEXT = st.text(alphabet=_ALPHABET, max_size=30) | st.lists(_PIECES | st.text(_ALPHABET, max_size=4), max_size=6).map("".join)
_TAGS = st.lists(st.sampled_from(["redis", "数据库", "", "The pool", "a", "İx", "连接池"]), max_size=3).map(tuple)


def _rule(texts, tags, start=0):
    found = defaultdict(list)
    for pos, (text, tag) in enumerate(zip(texts, tags), start):
        for term in entry_terms(text, tags=tag):
            found[term].append(pos)
    return {term: positions for term, positions in found.items()}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(_TEXT, _TAGS), max_size=8), max_size=4), st.sampled_from([0, 5, 10**6]))
def test_postings_made_in_bulk_are_the_rules(batches, in_bulk_from):
    """Batches of rows of every kind of text, made with numpy (from the first batch, from
    the second, or never): the positions of each term's rows, ascending, as the rule says."""
    with mock.patch.object(row_postings, "IN_BULK_FROM", in_bulk_from):
        _check(batches)


def _check(batches):
    made = RowPostings()
    texts, tags = [], []
    for batch in batches:
        made.add([t for t, _ in batch], [g for _, g in batch], len(texts))
        texts += [t for t, _ in batch]
        tags += [g for _, g in batch]
    got = {term: list(memoryview(raw).cast("i")) for term, raw in made.postings().items()}
    assert got == _rule(texts, tags)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.just(n), st.dictionaries(
    st.text("abc", min_size=1, max_size=3), st.sets(st.integers(0, n - 1)).map(sorted), max_size=5))))
def test_bitmaps_made_by_numpy_are_the_ints(made):
    """`bitmaps.bitmap_bytes_many` (the child's way) is `bitmap(...).to_bytes` of each term."""
    from array import array

    from memtui.core.bitmaps import bitmap, bitmap_bytes_many

    size, postings = made
    raw = {term: array("i", positions).tobytes() for term, positions in postings.items()}
    assert bitmap_bytes_many(raw, size) == {term: bitmap(positions, size).to_bytes((size + 7) // 8, "little")
                                            for term, positions in postings.items()}
