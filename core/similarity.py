"""The one near-duplicate rule (`remember`, `n` in the TUI, import, the MCP tool, the
doctor): rapidfuzz's ratio of the casefolded, whitespace-collapsed texts, at or above
DUPLICATE_SCORE.

Comparing every pair is quadratic (20,000 entries are 200 million ratios), so the pairs are
blocked first, without losing one, by two bounds that every near-duplicate pair meets:

- `fuzz.ratio(a, b) = 200 * lcs / (la + lb)` (lcs: the longest common subsequence), so a
  ratio >= s needs `lcs >= s/200 * (la + lb)`, and hence the shorter text to be at least
  s/(200-s) of the longer one (the length window).
- `lcs` is at most the characters the two texts have in common, counted with repeats, which
  is at most the same count over 32 buckets of characters: `sum(min(x, y))` of the two
  texts' bucket counts, and at most that sum over some of the buckets plus
  `min(rest_x, rest_y)` for the others taken together.

The texts are sorted by length; a block of them is compared with the columns of its length
window (numpy, a few small arrays of bytes at a time) by the second bound over the 20 buckets
that vary most and the rest together, and the few pairs that pass by the full count. The
bounds are compared in integers (`200 * lcs >= 90 * (la + lb)`), never rounded inwards. Only
the pairs left are judged by `fuzz.ratio` with the same cutoff, so the result is the
all-pairs result exactly (tests compare them on seeded corpora).
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
_ROWS, _COLS = 128, 1024  # texts per block: rows × columns of the length window
_DENSE = 20  # buckets compared for every pair of a block
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
    """Every text's character counts per bucket (one row each, in one pass over all the
    texts) and its length."""
    import numpy as np

    lengths = np.fromiter(map(len, norms), dtype=np.int64, count=len(norms))
    codes = np.frombuffer("".join(norms).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    owner = np.repeat(np.arange(len(norms), dtype=np.int64), lengths)
    counts = np.bincount(owner * _BUCKETS + codes % _BUCKETS, minlength=len(norms) * _BUCKETS)
    return counts.reshape(len(norms), _BUCKETS), lengths


def _fits(most: int) -> type[np.unsignedinteger]:
    """The smallest unsigned type that holds counts (and sums of counts) up to `most`."""
    import numpy as np

    return np.uint8 if most <= 0xFF else np.uint16 if most <= 0xFFFF else np.uint32


def _candidates(norms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j), i < j, of texts sorted by length that pass the common-characters
    bound: `ratio >= cutoff` with lcs raised to the characters in common per bucket.

    For a block of rows against the columns of their length window, the `_DENSE` buckets
    with the most variance are compared for every pair, and the others together
    (`min(rest_a, rest_b)`, at least their sum of minimums), against the smallest need of
    the row in that block; the few pairs left get the full count over every bucket."""
    import numpy as np

    n = len(norms)
    counts, lengths = _bucket_counts(norms)
    if n < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    dense = np.argsort(-counts.var(axis=0), kind="stable")[:_DENSE]
    rest = lengths - counts[:, dense].sum(axis=1)
    factor = DUPLICATE_SCORE / (200 - DUPLICATE_SCORE)
    highs = np.floor(lengths / factor + _SLACK).astype(np.int64)  # the length window's top
    typed: dict[type, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    rows_out: list[np.ndarray] = []
    cols_out: list[np.ndarray] = []
    for start in range(0, n, _ROWS):
        stop = min(n, start + _ROWS)
        end = int(np.searchsorted(lengths, highs[stop - 1], side="right"))
        for c0 in range(start, end, _COLS):
            c1 = min(end, c0 + _COLS)
            dtype = _fits(int(lengths[c1 - 1]))  # sorted: the block's longest text is its last column
            if dtype not in typed:
                typed[dtype] = (np.ascontiguousarray(counts[:, dense].T.astype(dtype)), rest.astype(dtype),
                                counts.astype(dtype))
            by_bucket, rests, full = typed[dtype]
            acc = np.minimum(rests[start:stop, None], rests[None, c0:c1])
            tmp = np.empty_like(acc)
            for bucket in by_bucket:
                np.minimum(bucket[start:stop, None], bucket[None, c0:c1], out=tmp)
                acc += tmp
            # the least any pair of the row needs: its shortest partner is the first column
            least = -(-_UNDER * (lengths[start:stop] + lengths[c0]) // _OVER)
            flat = np.flatnonzero(acc >= least.astype(dtype)[:, None])
            if not len(flat):
                continue
            rows, cols = np.divmod(flat, c1 - c0)
            rows += start
            cols += c0
            keep = cols > rows
            rows, cols = rows[keep], cols[keep]
            common = np.minimum(full[rows], full[cols]).sum(axis=1, dtype=np.int64)
            keep = _OVER * common >= _UNDER * (lengths[rows] + lengths[cols])
            rows_out.append(rows[keep])
            cols_out.append(cols[keep])
    if not rows_out:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(rows_out), np.concatenate(cols_out)


def _cross_candidates(row_norms: Sequence[str], col_norms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (r, c) of a text of `row_norms` and one of `col_norms` (indexes into each, in
    any order of lengths) that pass the common-characters bound, as `_candidates` finds them
    within one list: each block of rows (sorted by length) against the columns of its length
    window, the `_DENSE` buckets and the rest together first, the full count after."""
    import numpy as np

    empty = np.zeros(0, dtype=np.int64)
    if not row_norms or not col_norms:
        return empty, empty
    row_counts, row_lengths = _bucket_counts(row_norms)
    col_counts, col_lengths = _bucket_counts(col_norms)
    row_order = np.argsort(row_lengths, kind="stable")
    col_order = np.argsort(col_lengths, kind="stable")
    row_counts, row_lengths = row_counts[row_order], row_lengths[row_order]
    col_counts, col_lengths = col_counts[col_order], col_lengths[col_order]
    dense = np.argsort(-col_counts.var(axis=0), kind="stable")[:_DENSE]
    row_rest = row_lengths - row_counts[:, dense].sum(axis=1)
    col_rest = col_lengths - col_counts[:, dense].sum(axis=1)
    factor = DUPLICATE_SCORE / (200 - DUPLICATE_SCORE)
    lows = np.ceil(row_lengths * factor - _SLACK).astype(np.int64)  # the length window of each row
    highs = np.floor(row_lengths / factor + _SLACK).astype(np.int64)
    typed: dict[type, tuple[np.ndarray, ...]] = {}
    rows_out: list[np.ndarray] = []
    cols_out: list[np.ndarray] = []
    for start in range(0, len(row_norms), _ROWS):
        stop = min(len(row_norms), start + _ROWS)
        first = int(np.searchsorted(col_lengths, lows[start], side="left"))
        end = int(np.searchsorted(col_lengths, highs[stop - 1], side="right"))
        for c0 in range(first, end, _COLS):
            c1 = min(end, c0 + _COLS)
            dtype = _fits(max(int(row_lengths[stop - 1]), int(col_lengths[c1 - 1])))
            if dtype not in typed:
                typed[dtype] = (np.ascontiguousarray(row_counts[:, dense].T.astype(dtype)), row_rest.astype(dtype),
                                np.ascontiguousarray(col_counts[:, dense].T.astype(dtype)), col_rest.astype(dtype))
            row_buckets, row_rests, col_buckets, col_rests = typed[dtype]
            acc = np.minimum(row_rests[start:stop, None], col_rests[None, c0:c1])
            tmp = np.empty_like(acc)
            for mine, theirs in zip(row_buckets, col_buckets):
                np.minimum(mine[start:stop, None], theirs[None, c0:c1], out=tmp)
                acc += tmp
            # the least any pair of the row needs: its shortest partner is the block's first column
            least = -(-_UNDER * (row_lengths[start:stop] + col_lengths[c0]) // _OVER)
            flat = np.flatnonzero(acc >= least.astype(dtype)[:, None])
            if not len(flat):
                continue
            rows, cols = np.divmod(flat, c1 - c0)
            rows += start
            cols += c0
            common = np.minimum(row_counts[rows], col_counts[cols]).sum(axis=1, dtype=np.int64)
            keep = _OVER * common >= _UNDER * (row_lengths[rows] + col_lengths[cols])
            rows_out.append(row_order[rows[keep]])
            cols_out.append(col_order[cols[keep]])
    if not rows_out:
        return empty, empty
    return np.concatenate(rows_out), np.concatenate(cols_out)


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
    """Every pair (r, c) of a text of `row_norms` and one of `col_norms` at the cutoff."""
    from rapidfuzz import fuzz

    rows, cols = _cross_candidates(row_norms, col_norms)
    return [(r, c) for r, c in zip(rows.tolist(), cols.tolist())
            if fuzz.ratio(row_norms[r], col_norms[c], score_cutoff=DUPLICATE_SCORE)]


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
