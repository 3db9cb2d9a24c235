"""Focused injection's narrowing (docs/injection.md, "How the engine reads a large store"): a
large layer read through its inverted index, not entry by entry. `Narrowed` holds, for each
term of Q, the bitmap of the active positions holding it, and from those a position's Q ∩ M
(F3, all that F4 reads of M), F4's df(t), and the positions grouped by Q ∩ M with each
group's keyword score (`Narrowed.parts`); `Scorable` answers which positions can score above
0; `ByRelevance` walks a layer's candidates in non-increasing F5 relevance, made only as far
as they are read. `injection_focused.FocusedScores` reads a layer through these when it can;
tests/core/test_focused_order.py holds each to its plain meaning."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from itertools import chain, islice, repeat
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from . import focused
from .bitmaps import bitmap, flags, positions

if TYPE_CHECKING:
    from .candidates import LayerCandidates
    from .relevance import Focus


@runtime_checkable
class Bitmapped(Protocol):
    """A layer's `shared` answer that keeps its positions as a bitmap (the prepared index's
    `LevelCounts`): `any`, every position counted."""

    any: int


@runtime_checkable
class Focusable(Protocol):
    """A layer that can tell what focused injection's narrowing needs (`Focus`), or None."""

    def focus(self) -> Focus | None: ...


class Narrowed:
    """One layer of focused injection read through its inverted index, not entry by entry.
    An entry sharing no term of Q has keyword 0 (F4), so its relevance is its semantic lift
    (F5; 0 without the semantic score): unless pinned, or lifted to the floor, or its layer's
    nearest in meaning, it is `below_gate` (F7), and without the semantic score it sorts
    after every other in play (F8). So only the entries holding a term of Q (found by the
    postings of the §5 terms whose content term it is, `focused.stored_forms`), the pinned,
    the held back, the archived and those lifted (`FocusedScores._lifted`) are scored; F4's
    df(t) is the number of postings in play. Valid when the layer's indexed terms cover what
    M reads (`Focus.covers`)."""

    def __init__(self, view: LayerCandidates, q: frozenset[str], focus: Focus, pinned_ids: frozenset[str]):
        self.n_active = view.n_active
        self.rank = view.rank
        self.q = q
        # each term of Q: the bitmap of the active positions holding it (bit p: position p)
        self.holds = {t: bits_of(view.shared(focused.stored_forms(t)), view.n_active) for t in sorted(q)}
        self._flags: dict[str, bytes] = {}
        self.archived = {p: frozenset(map(focused.content_term, view.archived_terms(p))).difference(("",))
                         for p in range(view.n_active, view.size)}
        pinned = set(focus.pinned)
        if pinned_ids:
            pinned |= view.positions_of(pinned_ids)
            pinned.update(p for p in self.archived if view.shown(p).id in pinned_ids)
        self.pinned = frozenset(pinned)
        self.sharing = 0  # the bitmap of the active positions holding a term of Q
        for bits in self.holds.values():
            self.sharing |= bits

    @classmethod
    def of(cls, view: LayerCandidates, q: frozenset[str], pinned_ids: frozenset[str]) -> Narrowed | None:
        """The layer narrowed, when its index tells what focused M reads (`focus()`)."""
        found = view.focus() if isinstance(view, Focusable) else None
        return cls(view, q, found, pinned_ids) if found is not None and found.covers else None

    def terms(self, pos: int) -> frozenset[str]:
        """Q ∩ M of a position (all that F4's keyword score reads of M)."""
        if pos >= self.n_active:
            return self.archived[pos] & self.q
        return frozenset(t for t in self.holds if pos < len(f := self._flag(t)) and f[pos])

    def _flag(self, t: str) -> bytes:
        found = self._flags.get(t)
        if found is None:
            found = self._flags[t] = flags(self.holds[t])
        return found

    def df(self, t: str, held: Sequence[int]) -> int:
        """F4's df(t) in this layer: its active positions holding `t`, less the `held` back."""
        f = self._flag(t) if held else b""
        return self.holds[t].bit_count() - sum(1 for p in held if p < len(f) and f[p])

    @cached_property
    def highest_factor(self) -> float:
        """F6's highest importance factor among the layer's active entries (of the set of their
        ranks): none of its candidates scores above its relevance × this. Found when first
        asked for (the first walked candidate at the floor or above), once."""
        ranks = set(islice(self.rank, self.n_active))
        return max((focused.RANK_FACTOR.get(r, focused.TOP_FACTOR) for r in ranks), default=focused.TOP_FACTOR)

    def parts(self, live: int, weight: Mapping[str, float]) -> list[tuple[float, list[int]]]:
        """The positions of the bitmap `live` grouped by Q ∩ M (`terms`), each group with its
        F4 keyword score (`weight`: F4's weight of each term of Q) and its positions, ascending.
        Eight terms at a time, each position's byte of which of them it holds (one bit per
        term, laid over the terms' `flags` as big integers) is read in C; a group's keyword
        score is the share of the weights its bytes name."""
        if not live:
            return []
        ps = positions(live, 0, live.bit_length())
        terms = [t for t, bits in self.holds.items() if bits]
        codes: list[bytes] = []  # per chunk of eight terms, byte p: which of them position p holds
        named: list[list[tuple[float, ...]]] = []  # per chunk, per byte: the weights of the terms it names
        for at in range(0, len(terms), 8):
            chunk = terms[at:at + 8]
            code = 0
            for bit, t in enumerate(chunk):
                code |= int.from_bytes(self._flag(t), "little") << bit
            codes.append(code.to_bytes(max(self.n_active, 1), "little"))
            named.append([tuple(weight[t] for bit, t in enumerate(chunk) if c >> bit & 1) for c in range(1 << len(chunk))])
        groups: dict[tuple[int, ...], list[int]] = {}
        for p, key in zip(ps, zip(*(map(c.__getitem__, ps) for c in codes)) if codes else repeat(())):
            group = groups.get(key)
            if group is None:
                groups[key] = [p]
            else:
                group.append(p)
        total = math.fsum(weight[t] for t in sorted(self.q))
        return [(focused.weight_share(chain.from_iterable(map(list.__getitem__, named, key)), total), group)
                for key, group in groups.items()]


class Scorable:
    """Which positions of a narrowed layer can score above 0 (`FocusedScores.scorable`): the
    active ones of a bitmap (sharing a term of Q, or lifted) and a few others (pinned, held
    back, archived), asked one at a time."""

    def __init__(self, bits: int, others: frozenset[int]):
        self.bits, self.others = bits, others
        self._flags: bytes | None = None

    def __contains__(self, pos: object) -> bool:
        if pos in self.others:
            return True
        if self._flags is None:
            self._flags = flags(self.bits)
        return isinstance(pos, int) and 0 <= pos < len(self._flags) and bool(self._flags[pos])


class ByRelevance:
    """A narrowed layer's candidates in play that may pass F7 (sharing a term of Q, or lifted),
    as (relevance, position) in non-increasing relevance, made only as far as they are read:
    the positions come in parts of one keyword score (one Q ∩ M, `Narrowed.parts`), where F5's
    relevance rises with the semantic score (every step of `semantic_lift` and `relevance` is
    monotone), so a part is sorted by semantic score only once the walk reaches its best, and
    the parts are merged on a heap. Without the semantic score a part's relevance is its
    keyword score, its positions ascending. Each iteration walks from the start."""

    def __init__(self, parts: Sequence[tuple[float, Sequence[int]]], semantic: Sequence[float] | None, base: float):
        self.parts, self.semantic, self.base = parts, semantic, base
        self._walk: list[tuple[float, int]] | None = None  # every position at once, kept for the next walk
        self._heap: list[tuple[float, int, int]] | None = None  # each part's best, kept
        self._runs: dict[int, list[int]] = {}  # a part by semantic score, kept once sorted
        self._by: list[tuple[float, list[Sequence[int]]]] | None = None  # without it: the parts by relevance

    def relevance(self, kw: float, sem: float) -> float:
        return focused.relevance(kw, focused.semantic_lift(sem, self.base))

    def __iter__(self) -> Iterator[tuple[float, int]]:
        if self.semantic is None:
            yield from self._by_keyword()
        elif self._walk is not None or len(self.parts) * 4 > sum(len(ps) for _, ps in self.parts):
            yield from self._all_at_once(self.semantic)  # small parts (a long message)
        else:
            yield from self._merged(self.semantic)

    def _by_keyword(self) -> Iterator[tuple[float, int]]:
        """Without the semantic score: a part's relevance is its keyword score; the parts of
        one relevance together, their positions ascending."""
        if self._by is None:
            by: dict[float, list[Sequence[int]]] = {}
            for kw, ps in self.parts:
                by.setdefault(focused.relevance(kw, 0.0), []).append(ps)
            self._by = sorted(by.items(), reverse=True)
        for rel, runs_of in self._by:
            yield from zip(repeat(rel), sorted(chain.from_iterable(runs_of)))

    def _all_at_once(self, sems: Sequence[float]) -> Iterator[tuple[float, int]]:
        """Every position's relevance, sorted at once (kept for the next walk)."""
        if self._walk is None:
            self._walk = [(-neg, p) for neg, p in sorted((-self.relevance(kw, sems[p]), p)
                                                          for kw, ps in self.parts for p in ps)]
        yield from self._walk

    def _merged(self, sems: Sequence[float]) -> Iterator[tuple[float, int]]:
        """The parts merged on a heap of (−relevance, position, part): a part not yet sorted by
        semantic score stands on it as its best, position −1, and is sorted when it comes
        first."""
        if self._heap is None:
            self._heap = [(-self.relevance(kw, max(map(sems.__getitem__, ps))), -1, i)
                          for i, (kw, ps) in enumerate(self.parts)]
            heapq.heapify(self._heap)
        heap = list(self._heap)
        runs: dict[int, Iterator[int]] = {}
        while heap:
            neg, p, i = heap[0]
            if p >= 0:
                yield -neg, p
            run = runs.get(i)
            if run is None:
                ordered = self._runs.get(i)
                if ordered is None:
                    ordered = self._runs[i] = sorted(self.parts[i][1], key=sems.__getitem__, reverse=True)
                run = runs[i] = iter(ordered)
            nxt = next(run, None)
            if nxt is None:
                heapq.heappop(heap)
            else:
                heapq.heapreplace(heap, (-self.relevance(self.parts[i][0], sems[nxt]), nxt, i))


def bits_of(shared: Mapping[int, int], n_active: int) -> int:
    """The bitmap of the positions of a layer's `shared` (its own, when it counts in bitmaps)."""
    return shared.any if isinstance(shared, Bitmapped) else bitmap(sorted(shared), n_active)
