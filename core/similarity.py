"""The one near-duplicate rule (`remember`, `n` in the TUI, import, the MCP tool, the
doctor): rapidfuzz's ratio of the casefolded, whitespace-collapsed texts, at or above
DUPLICATE_SCORE.

Comparing every pair is quadratic (20,000 entries are 200 million ratios), so the pairs are
blocked first, without losing one, by three bounds that every near-duplicate pair meets:

- `fuzz.ratio(a, b) = 200 * lcs / (la + lb)` (lcs: the longest common subsequence), so a
  ratio >= s needs `lcs >= s/200 * (la + lb)`, and hence the shorter text to be at least
  s/(200-s) of the longer one (the length window).
- `lcs` is at most the characters the two texts have in common, counted with repeats, which
  is at most the same count over 32 buckets of characters: `sum(min(x, y))` of the two
  texts' bucket counts, and at most that sum over some of the buckets plus
  `min(rest_x, rest_y)` for the others taken together.
- The pairs of adjacent characters the two texts have in common, counted with repeats, are
  at least `3 * lcs - (la + lb) - 1`. Take a longest common subsequence: `a` loses
  `la - lcs` characters to it and `b` has `lb - lcs` characters that are not in it. Each of
  `a`'s `la - 1` pairs whose two characters are both in the subsequence, with none of `b`'s
  extra characters between them, is a pair of `b` too (at a place of its own). A character
  of `a` not in it spoils at most the 2 pairs it is part of; an extra character of `b`
  spoils at most the 1 pair of `a` around the place it comes in. So at least
  `(la - 1) - 2 * (la - lcs) - (lb - lcs)` of `a`'s pairs are `b`'s. Counted from above:
  number a text's pairs by how many times the same pair came before in it, and the pairs
  both have are the numbered pairs both have; hash each numbered pair to one of 1,024 bits
  (the text's marks). A bit set for `a` and not for `b` stands for at least one numbered
  pair of `a` that `b` lacks, a different one for each such bit, so the pairs in common are
  at most `(la - 1) - popcount(marks_a & ~marks_b)`, and the same from `b`'s side.

The texts are sorted by length; a block of them is compared with the columns of its length
window (numpy, a few small arrays of bytes at a time) by the second bound over the 20 buckets
that vary most and the rest together; the pairs that pass are counted over every bucket, and
those left by the third bound (about one in twelve of them, on a large store of texts in one
vocabulary). The bounds are compared in integers (`200 * lcs >= 90 * (la + lb)`, the least
such lcs rounded up), never rounded inwards. Only the pairs left are judged by `fuzz.ratio`
with the same cutoff, so the result is the all-pairs result exactly (tests compare them on
seeded corpora, and check each bound on its own).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

from .model import Entry

if TYPE_CHECKING:
    import numpy as np

DUPLICATE_SCORE = 90.0
_SLACK = 1e-6  # bounds rounded outwards: a pair is never dropped by a float's last bits
_BUCKETS = 32  # a character's bucket: its code point mod 32
_ROWS, _COLS = 128, 2048  # texts per block: rows × columns of the length window
_DENSE = 20  # buckets compared for every pair of a block
_MARKS = 1024  # bits of a text's pair marks
_MARK_TEXTS = 4096  # texts marked at a time
_PAIR_CHUNK = 1 << 18  # pairs counted at a time
# the cutoff as a fraction: ratio >= cutoff is `_OVER * lcs >= _UNDER * (la + lb)` in integers
_UNDER, _OVER = DUPLICATE_SCORE.as_integer_ratio()[0], 200 * DUPLICATE_SCORE.as_integer_ratio()[1]

T = TypeVar("T")


def normalise_for_duplicates(text: str) -> str:
    return " ".join(text.casefold().split())


def says_the_same(a: str, b: str) -> bool:
    """The second half of the rule, for two normalised texts already at the cutoff: they say
    the same thing (`contradictions.same_statement`)."""
    from .contradictions import same_statement

    return same_statement(a, b)


def length_window(n: int) -> tuple[int, int]:
    """The lengths a text of `n` characters can be a near-duplicate of (ratio >= the cutoff)."""
    factor = DUPLICATE_SCORE / (200 - DUPLICATE_SCORE)
    return math.ceil(n * factor - _SLACK), math.floor(n / factor + _SLACK)


def _profiles(norms: Sequence[str]) -> np.ndarray:
    """Per text, its character counts per bucket (one row each)."""
    import numpy as np

    out = np.zeros((len(norms), _BUCKETS), dtype=np.int32)
    for row, norm in enumerate(norms):
        if norm:
            codes = np.frombuffer(norm.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            out[row] = np.bincount(codes % _BUCKETS, minlength=_BUCKETS)
    return out


def _common(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`sum(min(x, y))` for every row x of `a` and row y of `b`: at least their lcs."""
    import numpy as np

    common: np.ndarray = np.minimum(a[:, None, :], b[None, :, :]).sum(axis=-1)
    return common


def _need(la: np.ndarray | int, lb: np.ndarray | int) -> np.ndarray | float:
    """The common subsequence a ratio >= the cutoff needs, lowered by the slack."""
    return DUPLICATE_SCORE / 200 * (la + lb) - _SLACK


class NearDuplicates(Generic[T]):
    """Items added with their text; `best(text)` is what `near_duplicate` over the items in
    the order added returns, judged among the few that the bounds let through."""

    def __init__(self) -> None:
        import numpy as np

        self.items: list[T] = []
        self.texts: list[str] = []
        self._profiles = np.zeros((64, _BUCKETS), dtype=np.int32)
        self._lengths = np.zeros(64, dtype=np.int64)

    def add(self, item: T, text: str) -> None:
        import numpy as np

        norm = normalise_for_duplicates(text)
        k = len(self.items)
        if k == len(self._lengths):  # room for twice as many
            self._profiles = np.concatenate([self._profiles, np.zeros_like(self._profiles)])
            self._lengths = np.concatenate([self._lengths, np.zeros_like(self._lengths)])
        self.items.append(item)
        self.texts.append(norm)
        self._profiles[k] = _profiles([norm])[0]
        self._lengths[k] = len(norm)

    def best(self, text: str, skip: Callable[[T], bool] | None = None) -> T | None:
        """The item with the highest ratio >= the cutoff (the first added among equals), or None;
        items for which `skip` is true are left out."""
        import numpy as np
        from rapidfuzz import fuzz

        n = len(self.items)
        if not n:
            return None
        norm = normalise_for_duplicates(text)
        low, high = length_window(len(norm))
        lengths = self._lengths[:n]
        near = np.flatnonzero((lengths >= low) & (lengths <= high))
        bound = _common(_profiles([norm]), self._profiles[near])[0]
        maybe = near[bound >= _need(lengths[near], len(norm))]
        best_k, best_score = -1, -1.0
        for k in maybe.tolist():
            if skip is not None and skip(self.items[k]):
                continue
            score = fuzz.ratio(norm, self.texts[k], score_cutoff=DUPLICATE_SCORE)
            if score and score > best_score and says_the_same(norm, self.texts[k]):
                best_k, best_score = k, score
        return self.items[best_k] if best_k >= 0 else None


def _bucket_counts(norms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every text's character counts per bucket (one row each; `_MARK_TEXTS` texts at a
    time, in one pass over each part) and its length."""
    import numpy as np

    lengths = np.fromiter(map(len, norms), dtype=np.int64, count=len(norms))
    counts = np.zeros((len(norms), _BUCKETS), dtype=np.int32)
    for first in range(0, len(norms), _MARK_TEXTS):
        part = norms[first:first + _MARK_TEXTS]
        codes = np.frombuffer("".join(part).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        owner = np.repeat(np.arange(len(part), dtype=np.int64), lengths[first:first + len(part)])
        counts[first:first + len(part)] = np.bincount(owner * _BUCKETS + codes % _BUCKETS,
                                                      minlength=len(part) * _BUCKETS).reshape(len(part), _BUCKETS)
    return counts, lengths


def _fits(most: int) -> type[np.unsignedinteger]:
    """The smallest unsigned type that holds counts (and sums of counts) up to `most`."""
    import numpy as np

    return np.uint8 if most <= 0xFF else np.uint16 if most <= 0xFFFF else np.uint32


def _mixed(x: np.ndarray) -> np.ndarray:
    """Every bit of each uint64 of `x` stirred into every other (splitmix64's finaliser)."""
    import numpy as np

    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    out: np.ndarray = x ^ (x >> np.uint64(31))
    return out


def _pair_marks(norms: Sequence[str]) -> np.ndarray:
    """Per text, `_MARKS` bits: the bit of each of its pair tokens (two adjacent characters
    and how many times that pair came before in the text), hashed. One row of uint64 words each."""
    import numpy as np

    words = _MARKS // 64
    out = np.zeros((len(norms), words), dtype=np.uint64)
    shift = np.uint64(64 - (_MARKS.bit_length() - 1))
    for first in range(0, len(norms), _MARK_TEXTS):
        part = norms[first:first + _MARK_TEXTS]
        lengths = np.fromiter(map(len, part), dtype=np.int64, count=len(part))
        codes = np.frombuffer("".join(part).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
        owner = np.repeat(np.arange(len(part), dtype=np.uint64), lengths)
        inside = np.flatnonzero(owner[1:] == owner[:-1])  # a pair's first character, both in one text
        if not len(inside):
            continue
        # a code point is below 2**21: (text, pair) packed in one key, sorted (stably: by place after)
        key = (owner[inside] << np.uint64(42)) | (codes[inside] << np.uint64(21)) | codes[inside + 1]
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        before = np.arange(len(key)) - np.repeat(starts, np.diff(np.r_[starts, len(key)]))  # same pair before it
        token = (key & np.uint64((1 << 42) - 1)) | (before.astype(np.uint64) << np.uint64(42))
        bit = _mixed(token) >> shift
        flags = np.zeros((len(part), _MARKS), dtype=bool)
        flags[(key >> np.uint64(42)).astype(np.int64), bit.astype(np.int64)] = True
        out[first:first + len(part)] = np.packbits(flags, axis=1, bitorder="little").view(np.uint64)
    return out


class _Side:
    """Texts sorted by length for the search: their bucket counts (all, and in the types the
    blocks use), lengths, pair marks, and where each came from."""

    def __init__(self, norms: Sequence[str], dense: np.ndarray | None = None):
        import numpy as np

        counts, lengths = _bucket_counts(norms)
        self.order = np.argsort(lengths, kind="stable")
        self.counts, self.lengths = counts[self.order], lengths[self.order]
        self.norms = norms
        self.dense = np.argsort(-self.counts.var(axis=0), kind="stable")[:_DENSE] if dense is None else dense
        self.others = np.setdiff1d(np.arange(_BUCKETS), self.dense)
        self.rest = self.lengths - self.counts[:, self.dense].sum(axis=1)
        self._typed: dict[type, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def typed(self, dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The dense buckets (one row per bucket), the rest and the other buckets (one row per
        text), in `dtype`."""
        import numpy as np

        if dtype not in self._typed:
            self._typed[dtype] = (np.ascontiguousarray(self.counts[:, self.dense].T.astype(dtype)), self.rest.astype(dtype),
                                  np.ascontiguousarray(self.counts[:, self.others].astype(dtype)))
        return self._typed[dtype]

    def marks(self, places: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pair marks of the texts at `places` (sorted, distinct), one row each, and
        the length of each."""
        norms = self.norms
        return _pair_marks([norms[i] for i in self.order[places].tolist()]), self.lengths[places]


def _block_pairs(rows: _Side, cols: _Side, within: bool) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (r, c) of places in `rows` and `cols` (sorted by length) that pass the bounds;
    `within`: the two are one list, and only pairs r < c are wanted.

    Each block of `_ROWS` rows is compared with the columns of its length window, `_COLS` at a
    time: the `_DENSE` buckets for every pair and the others together (`min(rest_a, rest_b)`),
    against the least need of the row in that block; for the pairs left the sum is made exact
    over every bucket, and then the pair tokens are counted (`_pair_bound`)."""
    import numpy as np

    factor = DUPLICATE_SCORE / (200 - DUPLICATE_SCORE)
    lows = np.ceil(rows.lengths * factor - _SLACK).astype(np.int64)  # the length window of each row
    highs = np.floor(rows.lengths / factor + _SLACK).astype(np.int64)
    rows_out: list[np.ndarray] = []
    cols_out: list[np.ndarray] = []
    for start in range(0, len(rows.lengths), _ROWS):
        stop = min(len(rows.lengths), start + _ROWS)
        first = start if within else int(np.searchsorted(cols.lengths, lows[start], side="left"))
        end = int(np.searchsorted(cols.lengths, highs[stop - 1], side="right"))
        for c0 in range(first, end, _COLS):
            c1 = min(end, c0 + _COLS)
            dtype = _fits(max(int(rows.lengths[stop - 1]), int(cols.lengths[c1 - 1])))
            row_buckets, row_rests, row_others = rows.typed(dtype)
            col_buckets, col_rests, col_others = cols.typed(dtype)
            acc = np.minimum(row_rests[start:stop, None], col_rests[None, c0:c1])
            tmp = np.empty_like(acc)
            for mine, theirs in zip(row_buckets, col_buckets):
                np.minimum(mine[start:stop, None], theirs[None, c0:c1], out=tmp)
                acc += tmp
            # the least any pair of the row needs: its shortest partner is the block's first column
            least = -(-_UNDER * (rows.lengths[start:stop] + cols.lengths[c0]) // _OVER)
            flat = np.flatnonzero(acc >= least.astype(dtype)[:, None])
            if not len(flat):
                continue
            r, c = np.divmod(flat, c1 - c0)
            r += start
            c += c0
            if within:
                keep = c > r
                flat, r, c = flat[keep], r[keep], c[keep]
            # exact over every bucket: the dense ones as summed, the others each instead of together
            common = acc.reshape(-1)[flat].astype(np.int64) - np.minimum(row_rests[r], col_rests[c]).astype(np.int64)
            common += np.minimum(row_others[r], col_others[c]).sum(axis=1, dtype=np.int64)
            keep = _OVER * common >= _UNDER * (rows.lengths[r] + cols.lengths[c])
            rows_out.append(r[keep])
            cols_out.append(c[keep])
    empty = np.zeros(0, dtype=np.int64)
    if not rows_out:
        return empty, empty
    r, c = np.concatenate(rows_out), np.concatenate(cols_out)
    # marked: only the texts of a pair left (a few new texts against all: a few columns)
    if within:
        places = np.unique(np.concatenate([r, c]))
        row_marks, row_lengths = col_marks, col_lengths = rows.marks(places)
        r_at, c_at = np.searchsorted(places, r), np.searchsorted(places, c)
    else:
        row_places, r_at = np.unique(r, return_inverse=True)
        col_places, c_at = np.unique(c, return_inverse=True)
        row_marks, row_lengths = rows.marks(row_places)
        col_marks, col_lengths = cols.marks(col_places)
    keep = _pair_bound(row_marks, row_lengths, r_at, col_marks, col_lengths, c_at)
    return r[keep], c[keep]


def _bits_set(words: np.ndarray) -> np.ndarray:
    """The bits set in each row of uint64 words (numpy's popcount from 2.0, a table before)."""
    import numpy as np

    if hasattr(np, "bitwise_count"):
        counted: np.ndarray = np.bitwise_count(words).sum(axis=1, dtype=np.int64)
        return counted
    table = np.array([bin(k).count("1") for k in range(256)], dtype=np.uint8)
    return table[np.ascontiguousarray(words).view(np.uint8)].sum(axis=1, dtype=np.int64)


def _pair_bound(row_marks: np.ndarray, row_lengths: np.ndarray, r: np.ndarray,
                col_marks: np.ndarray, col_lengths: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Which pairs (r[k], c[k]) pass the pair-token bound (the module's docstring)."""
    import numpy as np

    keep = np.zeros(len(r), dtype=bool)
    for at in range(0, len(r), _PAIR_CHUNK):
        rr, cc = r[at:at + _PAIR_CHUNK], c[at:at + _PAIR_CHUNK]
        a, b = row_marks[rr], col_marks[cc]
        la, lb = row_lengths[rr], col_lengths[cc]
        only_a, only_b = _bits_set(a & ~b), _bits_set(b & ~a)
        shared = np.minimum(np.maximum(la - 1, 0) - only_a, np.maximum(lb - 1, 0) - only_b)
        total = la + lb
        lcs = -(-_UNDER * total // _OVER)  # the least common subsequence at the cutoff
        keep[at:at + _PAIR_CHUNK] = shared >= 3 * lcs - total - 1
    return keep


def _candidates(norms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j), i < j, of texts sorted by length that pass the bounds."""
    import numpy as np

    if len(norms) < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    side = _Side(norms)
    r, c = _block_pairs(side, side, within=True)
    return side.order[r], side.order[c]


def _cross_candidates(row_norms: Sequence[str], col_norms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (r, c) of a text of `row_norms` and one of `col_norms` (indexes into each, in
    any order of lengths) that pass the bounds, found as `_candidates` finds them within one list."""
    import numpy as np

    empty = np.zeros(0, dtype=np.int64)
    if not row_norms or not col_norms:
        return empty, empty
    cols = _Side(col_norms)
    rows = _Side(row_norms, cols.dense)
    r, c = _block_pairs(rows, cols, within=False)
    return rows.order[r], cols.order[c]


def close_pairs(norms: Sequence[str]) -> list[tuple[int, int]]:
    """Every pair (i, j), i < j, of normalised texts at the cutoff (`fuzz.ratio`), found
    among the pairs that pass the bounds (`_candidates`)."""
    from rapidfuzz import fuzz

    order = sorted(range(len(norms)), key=lambda i: len(norms[i]))
    rows, cols = _candidates([norms[i] for i in order])
    out = []
    for place, other in zip(rows.tolist(), cols.tolist()):
        a, b = order[place], order[other]
        if fuzz.ratio(norms[a], norms[b], score_cutoff=DUPLICATE_SCORE):
            out.append((min(a, b), max(a, b)))
    return out


def close_across(row_norms: Sequence[str], col_norms: Sequence[str]) -> list[tuple[int, int]]:
    """Every pair (r, c) of a text of `row_norms` and one of `col_norms` at the cutoff. Only a
    text of `col_norms` whose length is in a row's `length_window` can be in one: the others are
    left out before the bounds' tables are made (a few new texts against every saved one, the
    doctor's search after an outside change)."""
    import numpy as np
    from rapidfuzz import fuzz

    lengths = np.fromiter(map(len, col_norms), dtype=np.int64, count=len(col_norms))
    inside = np.zeros(len(col_norms), dtype=bool)
    for lo, hi in _merged(sorted(length_window(len(t)) for t in row_norms)):
        inside |= (lengths >= lo) & (lengths <= hi)
    kept = np.flatnonzero(inside)
    rows, cols = _cross_candidates(row_norms, [col_norms[c] for c in kept.tolist()])
    return [(r, c) for r, c in zip(rows.tolist(), kept[cols].tolist())
            if fuzz.ratio(row_norms[r], col_norms[c], score_cutoff=DUPLICATE_SCORE)]


def _merged(windows: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted closed intervals, those that overlap or touch made one."""
    out: list[tuple[int, int]] = []
    for lo, hi in windows:
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def duplicate_pairs(texts: Sequence[str], later: Callable[[int, int], int],
                    close: Callable[[list[str]], Iterable[tuple[int, int]]] | None = None) -> list[tuple[int, int]]:
    """(first, later) for each text found to be a near-duplicate of an earlier one, in the
    order the plain all-pairs walk finds them: texts by length, each compared with the
    longer ones after it; a text already reported is skipped as a partner, and is not
    walked from again. `later(a, b)` says which of a found pair is the one reported.
    `close(norms)`, when given, names pairs of indexes among which are all those at the
    cutoff (`near_pairs.NearPairs`: kept from an earlier run); the walk is the same over them,
    since a pair below the cutoff changes nothing in it."""
    import numpy as np
    from rapidfuzz import fuzz

    norm = [normalise_for_duplicates(t) for t in texts]
    order = sorted(range(len(norm)), key=lambda i: len(norm[i]))
    rows: list[int]
    cols: list[int]
    if close is None:
        places = _candidates([norm[i] for i in order])  # places in `order`
        by_place = np.lexsort((places[1], places[0]))
        rows, cols = places[0][by_place].tolist(), places[1][by_place].tolist()
    else:
        place_of = [0] * len(norm)
        for at, i in enumerate(order):
            place_of[i] = at
        pairs = sorted({(min(place_of[i], place_of[j]), max(place_of[i], place_of[j])) for i, j in close(norm) if i != j})
        rows, cols = [p for p, _ in pairs], [q for _, q in pairs]
    out = []
    reported: set[int] = set()
    walking, skip = -1, False
    for place, other in zip(rows, cols):
        a, b = order[place], order[other]
        if place != walking:  # a text reported before its turn is not walked from
            walking, skip = place, a in reported
        if skip or b in reported:
            continue
        if fuzz.ratio(norm[a], norm[b], score_cutoff=DUPLICATE_SCORE) and says_the_same(norm[a], norm[b]):
            second = later(a, b)
            reported.add(second)
            out.append((a + b - second, second))
    return out


def near_duplicate(entries: Iterable[Entry], text: str) -> Entry | None:
    """The entry among `entries` whose text is the nearest near-duplicate of `text` (rapidfuzz
    ratio of the casefolded, whitespace-collapsed texts >= DUPLICATE_SCORE, and saying the same
    thing: `says_the_same`; the first among equals), or None. The one rule for `remember`, `n`
    in the TUI, import, the MCP tool and the doctor."""
    from rapidfuzz import fuzz, process

    pool = list(entries)
    if not pool:
        return None
    choices = [normalise_for_duplicates(e.text) for e in pool]
    norm = normalise_for_duplicates(text)
    found = process.extract(norm, choices, scorer=fuzz.ratio, score_cutoff=DUPLICATE_SCORE, limit=None)
    found.sort(key=lambda hit: (-hit[1], hit[2]))  # the best score, then the first among equals
    return next((pool[k] for _, _, k in found if says_the_same(norm, choices[k])), None)
