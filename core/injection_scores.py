"""SPEC §13 (opt-in) as the rule reads it: `ExtraScores` hands `core.injection.inject`, per
layer, the semantic scores and decay factors computed elsewhere (`core.retrieval`);
`FloatScores` then gives steps 4 and 6 as floats: score = max(keyword, semantic), the gate
on it, the order on it times the decay. Without them the rule is §5 exactly."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .candidates import CountedShared
from .relevance import score as relevance_score
from .relevance import share

if TYPE_CHECKING:
    from .candidates import LayerCandidates


@dataclass(frozen=True)
class ExtraScores:
    """SPEC §13 for one layer, computed outside the rule (the model and the injection history
    are not the rule's): one value per position, the active ones then the archived ones.
    `semantic`: the rounded clipped cosine (hybrid retrieval), or None; `decay`: the factor
    `0.5 ** (age / halfLifeDays)` step 6 multiplies the score by, or None."""

    semantic: Sequence[float] | None = None
    decay: Sequence[float] | None = None


class FloatScores:
    """Steps 4 and 6 of one layer when §13 is on: every position's score as a float
    (`max(keyword, semantic)`), and the score its order uses (decayed, or the same)."""

    def __init__(self, view: LayerCandidates, shared: Mapping[int, int], q: frozenset[str], extra: ExtraScores):
        n, nq = view.size, len(q)
        keyword = [0.0] * n
        for pos, k in shared.items():
            keyword[pos] = share(k, nq)
        for pos in range(view.n_active, n):
            keyword[pos] = relevance_score(q, view.archived_terms(pos))
        self.keyword = keyword
        self.semantic = None if extra.semantic is None else [float(v) for v in extra.semantic]
        if self.semantic is not None:
            if len(self.semantic) != n:
                raise ValueError(f"{view.layer}: {len(self.semantic)} semantic scores for {n} candidates")
            self.score = [k if k >= s else s for k, s in zip(keyword, self.semantic)]
        else:
            self.score = keyword
        if extra.decay is not None:
            if len(extra.decay) != n:
                raise ValueError(f"{view.layer}: {len(extra.decay)} decay factors for {n} candidates")
            self.order = [s * d for s, d in zip(self.score, extra.decay)]
        else:
            self.order = self.score
        self.n_active = view.n_active

    def parts(self, pos: int) -> tuple[float, float] | None:
        """(keyword, semantic) of a position in hybrid retrieval, else None."""
        if self.semantic is None:
            return None
        return self.keyword[pos], self.semantic[pos]

    def in_order(self, rank: Sequence[int], scored_only: bool) -> Iterator[int]:
        """Active positions in step-6 order: importance, the (decayed) score descending, base
        order; with `scored_only`, only those scoring above 0. Lazy: a heap."""
        score, order = self.score, self.order
        positions = range(self.n_active)
        heap = [(rank[p], -order[p], p) for p in positions if not scored_only or score[p] > 0]
        heapq.heapify(heap)
        while heap:
            yield heapq.heappop(heap)[2]

    def archived_order(self, rank: Sequence[int], size: int) -> list[tuple[float, int]]:
        ordered = sorted(range(self.n_active, size), key=lambda p: (rank[p], -self.order[p], p))
        return [(self.score[p], p) for p in ordered]

    def held_order(self, rank: Sequence[int], held: frozenset[int]) -> list[int]:
        """The unreviewed positions (SPEC §12) in step-6 order, listed after the layer's others."""
        return sorted(held, key=lambda p: (rank[p], -self.order[p], p))

    def passing(self, passes: Callable[[float], bool], held: frozenset[int] = frozenset()) -> int:
        """Active positions whose score `passes` the gate, the unreviewed ones left out."""
        score = self.score
        return sum(1 for p in range(self.n_active) if p not in held and passes(score[p]))

    def best(self, held: frozenset[int] = frozenset()) -> float:
        """The best active score, the unreviewed ones left out."""
        if not held:
            return max(self.score[: self.n_active], default=0.0)
        return max((self.score[p] for p in range(self.n_active) if p not in held), default=0.0)


def best_score(shared: Mapping[int, int], nq: int, held: frozenset[int], floats: FloatScores | None) -> float:
    """The best score of the layer's active candidates not held back."""
    if floats is not None:
        return floats.best(held)
    if held:
        return share(max((n for p, n in shared.items() if p not in held), default=0), nq)
    return share(shared.top() if isinstance(shared, CountedShared) else max(shared.values(), default=0), nq)
