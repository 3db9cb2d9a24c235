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
  texts' bucket counts, computed for a whole block of texts at once (numpy).

Only the pairs within both bounds are judged by `fuzz.ratio` with the same cutoff, so the
result is the all-pairs result exactly (a test compares them on a seeded corpus).
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
_ROWS = 32  # texts per block (a block's temporary array: rows × window × buckets)

T = TypeVar("T")


def normalise_for_duplicates(text: str) -> str:
    return " ".join(text.casefold().split())


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

    return np.minimum(a[:, None, :], b[None, :, :]).sum(axis=-1)


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
            if score and score > best_score:
                best_k, best_score = k, score
        return self.items[best_k] if best_k >= 0 else None


def _partners(norms: list[str]) -> list[list[int]]:
    """Per text (in `order`, by length), the later texts in that order that pass both bounds."""
    import numpy as np

    n = len(norms)
    lengths = np.array([len(t) for t in norms], dtype=np.int64)
    profiles = _profiles(norms)
    out: list[list[int]] = [[] for _ in range(n)]
    for start in range(0, n, _ROWS):
        stop = min(n, start + _ROWS)
        high = length_window(int(lengths[stop - 1]))[1]
        end = int(np.searchsorted(lengths, high, side="right"))
        bound = _common(profiles[start:stop], profiles[start:end])
        need = _need(lengths[start:stop, None], lengths[None, start:end])
        highs = np.array([length_window(int(x))[1] for x in lengths[start:stop]])
        ok = (bound >= need) & (lengths[None, start:end] <= highs[:, None])
        ok &= np.arange(start, end)[None, :] > np.arange(start, stop)[:, None]  # later in the order only
        rows, cols = np.nonzero(ok)
        for r, c in zip(rows.tolist(), cols.tolist()):
            out[start + r].append(start + c)
    return out


def duplicate_pairs(texts: Sequence[str], later: Callable[[int, int], int]) -> list[tuple[int, int]]:
    """(first, later) for each text found to be a near-duplicate of an earlier one, in the
    order the plain all-pairs walk finds them: texts by length, each compared with the
    longer ones after it; a text already reported is skipped as a partner, and is not
    walked from again. `later(a, b)` says which of a found pair is the one reported."""
    from rapidfuzz import fuzz

    norm = [normalise_for_duplicates(t) for t in texts]
    order = sorted(range(len(norm)), key=lambda i: len(norm[i]))
    partners = _partners([norm[i] for i in order])  # by place in `order`, ascending
    out = []
    reported: set[int] = set()
    for place, a in enumerate(order):
        if a in reported:
            continue
        for b in (order[p] for p in partners[place]):
            if b in reported:
                continue
            if fuzz.ratio(norm[a], norm[b], score_cutoff=DUPLICATE_SCORE):
                second = later(a, b)
                reported.add(second)
                out.append((a + b - second, second))
    return out


def near_duplicate(entries: Iterable[Entry], text: str) -> Entry | None:
    """The entry among `entries` whose text is the nearest near-duplicate of `text` (rapidfuzz
    ratio of the casefolded, whitespace-collapsed texts >= DUPLICATE_SCORE; the first among
    equals), or None. The one rule for `remember`, `n` in the TUI, import, the MCP tool and
    the doctor."""
    from rapidfuzz import fuzz, process

    pool = list(entries)
    if not pool:
        return None
    choices = [normalise_for_duplicates(e.text) for e in pool]
    best = process.extractOne(normalise_for_duplicates(text), choices, scorer=fuzz.ratio,
                              score_cutoff=DUPLICATE_SCORE)
    return pool[best[2]] if best else None
