"""Two fast ways through what the rule decided (`core.injection.Plan`), each held equal to
walking every candidate (`Plan.decisions`) by the tests (tests/core/test_injection.py,
test_hybrid.py, test_review.py):

- `runs`: the candidates in runs of one layer, score and status, for the JSON writer: tens of
  thousands of candidates whose statuses follow from a count once nothing more can be
  included, written a run at a time.
- `status_counts`: how many candidates get each status, from the scores alone (the TUI's
  left-out counts, the CLI's summary), without producing a candidate.

The rule's own steps are reached through `Fill` and `Decided`, never written again here but
for arithmetic on their counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Protocol

from .candidates import SUPERSEDED, CountedShared, inactive_status
from .model import CandidateStatus
from .relevance import share

if TYPE_CHECKING:
    from .candidates import Candidate, LayerCandidates
    from .injection import LineMaker
    from .injection_scores import FloatScores
    from .settings import Settings

# a candidate decided: (layer, position, score, status, (keyword, semantic) in hybrid retrieval or None)
Decision = tuple["LayerCandidates", int, float, CandidateStatus, "tuple[float, float] | None"]
# consecutive candidates of one layer with one score and status
Run = tuple["LayerCandidates", "Sequence[int]", float, CandidateStatus, "tuple[float, float] | None"]

INCLUDED, BELOW_GATE, MAX_ITEMS, BUDGET = (CandidateStatus.INCLUDED, CandidateStatus.BELOW_GATE,
                                           CandidateStatus.MAX_ITEMS, CandidateStatus.BUDGET)
ARCHIVED, UNREVIEWED = CandidateStatus.ARCHIVED, CandidateStatus.UNREVIEWED


class Fill(Protocol):
    """Steps 5 and 7–10 for one layer (`core.injection.LayerFill`), as `runs` drives it."""

    passed: int  # candidates that passed the gate so far
    limit: int | None  # the layer's max items

    @property
    def open(self) -> bool:
        """Whether a later candidate may still be included."""
        ...

    def passes(self, score: float) -> bool: ...

    def decide(self, pos: int, score: float) -> CandidateStatus:
        """The status of the next candidate in step-6 order (included ones are kept)."""
        ...


class Decided(Protocol):
    """What the rule decided (`core.injection.Plan`), as the result, the runs and the counts
    read it."""

    @property
    def q(self) -> frozenset[str]: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def layers(self) -> Sequence[tuple[LayerCandidates, Mapping[int, int], int]]:
        """(layer, |Q ∩ M| by position, allowance) in layer order."""
        ...

    @property
    def floats(self) -> Mapping[str, FloatScores]:
        """§13's scores, per layer where they are on."""
        ...

    @property
    def held(self) -> Mapping[str, frozenset[int]]:
        """The active positions held back at step 2, per layer."""
        ...

    @property
    def held_as(self) -> Mapping[str, Mapping[int, CandidateStatus]]:
        """... their status where it is not `unreviewed`."""
        ...

    @property
    def maker(self) -> LineMaker: ...

    def views(self) -> Sequence[LayerCandidates]: ...

    def decisions(self) -> Iterator[Decision]:
        """(layer, position, score, status, (keyword, semantic) or None) of every candidate, in
        layer order then sort order."""
        ...

    def fill(self, view: LayerCandidates, shared: Mapping[int, int], allowance: int) -> Fill: ...

    def layer_decisions(self, view: LayerCandidates, shared: Mapping[int, int], allowance: int) -> Iterator[Decision]: ...

    def archived(self, view: LayerCandidates) -> list[tuple[float, int]]:
        """The archived positions with their score, in step-6 order."""
        ...

    def passes(self, layer: str, score: float) -> bool: ...


def runs(plan: Decided) -> Iterator[Run]:
    """`plan.decisions()` as runs of consecutive candidates of one layer with one score and
    status: (layer, positions, score, status, (keyword, semantic) or None). A layer with §13
    scores or candidates held back is walked one candidate at a time."""
    nq = len(plan.q)
    for view, shared, allowance in plan.layers:
        if view.layer in plan.floats or plan.held.get(view.layer):
            for _, pos, score, status, parts in plan.layer_decisions(view, shared, allowance):
                yield view, (pos,), score, status, parts
            continue
        for run, score, status in layer_runs(view, shared, nq, plan.fill(view, shared, allowance)):
            yield view, run, score, status, None
        ordered = ((score, inactive_status(view, pos), pos) for score, pos in plan.archived(view))
        for (score, status), archived in groupby(ordered, key=itemgetter(0, 1)):
            yield view, [pos for _, _, pos in archived], score, status, None


def layer_runs(view: LayerCandidates, shared: Mapping[int, int], nq: int,
               fill: Fill) -> Iterator[tuple[Sequence[int], float, CandidateStatus]]:
    """One layer's active candidates in runs of one score and status (keyword scores,
    nothing held back). A run that passes the gate is decided one candidate at a time while
    one may still be included; after that its statuses follow from the count alone:
    `budget` up to max items, then `max_items`."""
    limit = fill.limit
    for n, run in view.in_order(shared, False):
        s = share(n, nq)
        if not fill.passes(s):
            yield run, s, BELOW_GATE
            continue
        i, size = 0, len(run)
        while i < size and fill.open:
            yield (run[i],), s, fill.decide(run[i], s)
            i += 1
        if i < size:  # nothing more is included: `budget` while max items allows, then `max_items`
            room = size - i if limit is None else max(0, min(size - i, limit - fill.passed))
            if room:
                yield run[i:i + room], s, BUDGET
            if i + room < size:
                yield run[i + room:], s, MAX_ITEMS
            fill.passed += size - i


def status_counts(plan: Decided, included: list[Candidate]) -> dict[str, int]:
    """The statuses `plan.decisions()` would give, counted from the scores alone: in a layer
    the passing candidates are those scoring at least the gate; the first max items of them
    are included or `budget`, the rest `max_items`."""
    out: Counter[str] = Counter()
    nq = len(plan.q)
    included_in = Counter(c.layer for c in included)
    for view, shared, _ in plan.layers:
        layer = view.layer
        limit = plan.settings.max_items.get(layer)
        held = plan.held.get(layer, frozenset())
        held_as = plan.held_as.get(layer, {})
        out[UNREVIEWED] += len(held) - len(held_as)
        for status in held_as.values():
            out[status] += 1
        n = view.n_active - len(held)
        passing = _passing(plan, view, shared, nq, held, n)
        capped = passing if limit is None else min(passing, max(limit, 0))
        out[BELOW_GATE] += n - passing
        out[MAX_ITEMS] += passing - capped
        out[INCLUDED] += included_in[layer]
        out[BUDGET] += capped - included_in[layer]
        superseded = sum(1 for pos in range(view.n_active, view.size) if inactive_status(view, pos) == SUPERSEDED)
        out[ARCHIVED] += view.size - view.n_active - superseded
        out[SUPERSEDED] += superseded
    return {status: k for status, k in out.items() if k}


def _passing(plan: Decided, view: LayerCandidates, shared: Mapping[int, int], nq: int, held: frozenset[int],
             n: int) -> int:
    """How many of the layer's `n` active candidates not held back pass the gate."""
    layer = view.layer
    floats = plan.floats.get(layer)
    if plan.passes(layer, 0.0):  # a gate of 0: every one
        return n
    if floats is not None:
        return floats.passing(lambda score: plan.passes(layer, score), held)
    # per distinct number of shared terms (a few), not per candidate (tens of thousands)
    counted = shared.histogram() if isinstance(shared, CountedShared) else Counter(shared.values())
    passing = sum(k for v, k in counted.items() if plan.passes(layer, share(v, nq)))
    if held and nq:
        passing -= sum(1 for p in held if plan.passes(layer, share(shared.get(p, 0), nq)))
    return passing
