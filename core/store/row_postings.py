"""The postings (term -> positions) of the conversation rows' terms (`relevance.entry_terms`
of each row's text and tags: SPEC §5 step 4's M), made a batch of rows at a time with
numpy, without a set of terms per row: what the prepared index's build spends most of its
time on at ten times the large corpus.

Each row's terms are listed (with repeats) as term ids beside its position, and numpy sorts
the (term, position) pairs once per batch, which drops the repeats and groups them by term:

- an ASCII text's terms are its lower-cased word runs (`relevance.terms`' ASCII path);
- a text whose only non-ASCII word characters are CJK Unified Ideographs, normalised and
  case-folded as `terms` does, has as terms its ASCII word runs and, found over the code
  points of every such text of the batch at once, each pair of ideographs side by side and
  each ideograph alone between two characters that are not ideographs (what `terms` makes
  of the word runs it splits into ASCII words and ideograph runs);
- any other text's terms are `relevance.terms`' own, and a tag tuple's are made once;
- stop words are dropped at the end: no rule above makes one a term but an ASCII word run.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from collections.abc import Sequence
from functools import partial
from itertools import chain, compress
from operator import not_
from typing import TYPE_CHECKING

from ..relevance import STOP_WORDS, entry_terms, entry_terms_many, terms

if TYPE_CHECKING:
    import numpy as np

_WORDS = re.compile(r"[a-z0-9_]+").findall  # `relevance._LOWER_WORD_RUN`: word runs of lower-cased ASCII
_SEP = "\x80"  # between two ASCII texts joined: never in one, never a term (not a word character)
_WORDS_OR_SEP = re.compile(r"[a-z0-9_]+|\x80").findall
_OTHER_WORD_CHAR = re.compile(r"[^\W\x00-\x7f\u4e00-\u9fff]").search  # a word character neither ASCII nor ideograph
_FIRST, _LAST = 0x4E00, 0x9FFF  # CJK Unified Ideographs: each a wide letter (`relevance._IDEOGRAPHS`)
_PAIR_SHIFT = 21  # a pair of code points as one key: the first above every code point
_NFKC = partial(unicodedata.normalize, "NFKC")
# Rows from which numpy's way is taken: before, each row's set of terms (`entry_terms_many`) is
# inverted in Python, which costs less than importing numpy (≈0.1 s) for a layer of fewer rows.
IN_BULK_FROM = 65_536


class _Ids(dict[str, int]):
    """A term's id, the next one for a term not seen yet."""

    def __init__(self, first: Sequence[str]):
        super().__init__((term, i) for i, term in enumerate(first))
        self.terms = list(first)

    def __missing__(self, term: str) -> int:
        found = self[term] = len(self.terms)
        self.terms.append(term)
        return found


class _TagTerms(dict[tuple[str, ...], list[str]]):
    def __missing__(self, tags: tuple[str, ...]) -> list[str]:
        found = self[tags] = sorted(entry_terms("", tags=tags))  # made once per distinct tuple
        return found


class RowPostings:
    """The postings of rows added a batch at a time, in position order."""

    def __init__(self, in_bulk_from: int | None = None) -> None:
        self._in_bulk_from = in_bulk_from  # None: `IN_BULK_FROM` (0: numpy's way from the first row)
        self._stop = len(STOP_WORDS) + 1  # ids below this are the stop words and `_SEP`
        self._ids = _Ids([*sorted(STOP_WORDS), _SEP])
        self._tags = _TagTerms()
        self._pieces: dict[int, list[bytes]] = {}

    def add(self, texts: Sequence[str], tags: Sequence[tuple[str, ...]], start: int) -> None:
        """The terms of the rows at positions `start`, `start + 1`, ... (their texts and tags)."""
        n = len(texts)
        if not n:
            return
        if start + n <= (IN_BULK_FROM if self._in_bulk_from is None else self._in_bulk_from):
            self._add_sets(texts, tags, start)
            return
        import numpy as np

        positions = np.arange(start, start + n, dtype=np.int64)
        plain = list(map(str.isascii, texts))
        at_others = [i for i, ascii in enumerate(plain) if not ascii]
        folded = list(map(str.casefold, map(_NFKC, compress(texts, map(not_, plain)))))
        simple = [_OTHER_WORD_CHAR(f) is None for f in folded]
        # the ASCII texts' words found in one pass over them all, `_SEP` between two texts
        ascii_words = _WORDS_OR_SEP(_SEP.join(compress(texts, plain)).lower())
        ascii_ids = np.fromiter(map(self._ids.__getitem__, ascii_words), np.int64, len(ascii_words))
        other_words = [_WORDS(f) if easy else list(terms(text))
                       for f, easy, text in zip(folded, simple, (texts[i] for i in at_others))]
        tag_terms = list(map(self._tags.__getitem__, tags))
        ids = [ascii_ids, np.fromiter(map(self._ids.__getitem__, chain.from_iterable(other_words)), np.int64),
               np.fromiter(map(self._ids.__getitem__, chain.from_iterable(tag_terms)), np.int64)]
        at = [positions[np.fromiter(plain, bool, n)][np.cumsum(ascii_ids == self._stop - 1)],  # (`_SEP`'s id)
              np.repeat(positions[at_others], np.fromiter(map(len, other_words), np.int64, len(other_words))),
              np.repeat(positions, np.fromiter(map(len, tag_terms), np.int64, n))]
        wide = [f for f, easy in zip(folded, simple) if easy]
        if wide:
            wide_at = positions[[i for i, easy in zip(at_others, simple) if easy]]
            found_ids, found_at = self._ideographs(wide, wide_at)
            ids.append(found_ids)
            at.append(found_at)
        pairs = np.concatenate(ids) << 32 | np.concatenate(at)
        pairs = np.sort(pairs[pairs >= self._stop << 32])  # by term then position
        if not len(pairs):
            return
        pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]  # each pair once
        term_of = pairs >> 32
        raw = (pairs & 0xFFFFFFFF).astype(np.intc).tobytes()  # as array("i") holds them
        bounds = [0, *(np.flatnonzero(term_of[1:] != term_of[:-1]) + 1).tolist(), len(pairs)]
        size = np.dtype(np.intc).itemsize
        for first, stop, term in zip(bounds, bounds[1:], term_of[bounds[:-1]].tolist()):
            self._pieces.setdefault(term, []).append(raw[first * size:stop * size])

    def _add_sets(self, texts: Sequence[str], tags: Sequence[tuple[str, ...]], start: int) -> None:
        found: dict[int, array[int]] = {}
        ids = self._ids
        for pos, terms_of in enumerate(entry_terms_many(texts, tags), start):
            for term in terms_of:
                have = found.get(ids[term])
                if have is None:
                    have = found[ids[term]] = array("i")
                have.append(pos)
        for term_id, positions in found.items():
            self._pieces.setdefault(term_id, []).append(positions.tobytes())

    def _ideographs(self, texts: list[str], owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ids and positions of the ideograph pairs and lone ideographs of `texts` (the
        rows at `owners`), found over all their code points at once."""
        import numpy as np

        joined = "\x00".join(texts)  # never an ideograph: nothing pairs across two texts
        points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
        owner = np.repeat(owners, np.fromiter(map(len, texts), np.int64, len(texts)) + 1)[:len(points)]
        wide = (points >= _FIRST) & (points <= _LAST)
        paired = wide[:-1] & wide[1:]
        before = np.concatenate(([False], wide[:-1]))
        after = np.concatenate((wide[1:], [False]))
        pair_at = np.flatnonzero(paired)
        lone_at = np.flatnonzero(wide & ~before & ~after)
        keys = np.concatenate((points[pair_at] << _PAIR_SHIFT | points[pair_at + 1], points[lone_at]))
        where = np.concatenate((owner[pair_at], owner[lone_at]))
        distinct, inverse = np.unique(keys, return_inverse=True)
        names = [chr(k >> _PAIR_SHIFT) + chr(k & ((1 << _PAIR_SHIFT) - 1)) if k >> _PAIR_SHIFT else chr(k)
                 for k in distinct.tolist()]
        table = np.fromiter(map(self._ids.__getitem__, names), np.int64, len(names))
        return table[inverse.reshape(-1)], where

    def postings(self) -> dict[str, bytes]:
        """term -> its positions as bytes of native ints (`array("i")`), ascending; what was
        added is let go."""
        names = self._ids.terms
        found = {names[term]: b"".join(pieces) for term, pieces in self._pieces.items()}
        self._pieces.clear()
        return found

