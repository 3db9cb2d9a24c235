"""The injection (SPEC §5, exact): what Muse appends to its system prompt for a message.

`inject` is the rule, in the SPEC's order; each step it names is defined below it, in order:

  1. Switch ......... `inject`, first lines
  2. Candidates ..... `EntryLayer` (a layer's candidates the plain way: `candidates.LayerCandidates`
                      says what the rule reads of a layer), `held_back`, `inactive_status`
  3. Terms .......... `relevance.terms`
  4. Score .......... `LayerCandidates.shared` (|Q ∩ M|), `relevance.share` (|Q ∩ M| / |Q|)
  5. Gate ........... `passes_gate`
  6. Order .......... `base_key`, `in_order`, `archived_order`
  7. Max items ...... `over_max_items`
  8. Lines .......... `make_line`, `LineMaker`
  9. Cost ........... `est`, `block_cost`
 10. Budget ......... `Budget`, `LayerFill`
 11. Render ......... `render`
 12. Flags .......... `disabled_reason`, `flags`

The text needs only the candidates up to the last that can be included (`LayerFill.settle`);
the others are decided when asked for (`Plan.decisions`, every candidate one by one). Beside
the rule, in modules of their own, each held equal to it by the tests: the result and its
candidates (`injection_result`, `candidates`), the JSON written a run at a time
(`injection_json`), the runs and status counts from the scores alone (`injection_runs`).

SPEC §13 (opt-in): `ExtraScores` hands the rule, per layer, semantic scores and decay factors
computed elsewhere (`core.retrieval`); `FloatScores` (`injection_scores`) then gives steps 4–6
as floats. SPEC §12, §16, §18: the unreviewed, out-of-scope and expired entries are held back
at step 2 (`held_back`) and listed after their layer's other candidates. SPEC §15 (focused
injection): `injection_focused.FocusedScores` gives steps F2–F8; F9–F12 are steps 7–12 here.

How a layer's candidates are found fast (an inverted index over the terms, each line made
once, the state kept between processes) is not here: `core.store.layer_index` implements
`LayerCandidates` for that, and `core.serve` answers a workspace from it. Both import this
module; it imports neither (an import-linter contract says so).
"""

from __future__ import annotations

import logging
import math
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from itertools import groupby
from typing import TYPE_CHECKING

from . import injection_lines
from .candidates import Candidate, LayerCandidates, Made, Shown, candidate_fields, inactive_status
from .injection_result import InjectionResult
from .injection_scores import ExtraScores, FloatScores, best_score
from .model import IMPORTANCE_RANK, LAYERS, CandidateStatus, Entry, Layer
from .outbound import redact_line as redact
from .paths import Problem
from .relevance import focus_of, share, terms, terms_of
from .relevance import score as relevance_score
from .scope import Context, Files
from .scope import left_out as out_of_scope
from .settings import Settings

if TYPE_CHECKING:
    from .injection_runs import Decision
    from .relevance import Focus

__all__ = ["ARCHIVED", "BELOW_GATE", "BUDGET", "EXPIRED", "HEADERS", "INCLUDED", "MAX_ITEMS", "OUT_OF_SCOPE",
           "SUPERSEDED", "TITLE", "UNREVIEWED", "Budget", "Candidate", "EntryLayer", "ExtraScores", "FloatScores",
           "InjectionResult", "LayerCandidates", "LayerFill", "LineMaker", "Made", "Plan", "Shown", "archived_order",
           "base_key", "block_cost", "candidate_fields", "disabled_reason", "est", "held_back", "inactive_status",
           "inject", "make_line", "over_max_items", "passes_gate", "render"]

log = logging.getLogger("memtui.injection")

TITLE = "## Memory"
HEADERS: dict[str, str] = {Layer.USER: "### User Preferences", Layer.PROJECT: "### Project Knowledge",
                           Layer.CONVERSATION: "### Relevant Context"}
ELLIPSIS = "…"

INCLUDED, BELOW_GATE, MAX_ITEMS, BUDGET, ARCHIVED = (CandidateStatus.INCLUDED, CandidateStatus.BELOW_GATE,
                                                     CandidateStatus.MAX_ITEMS, CandidateStatus.BUDGET,
                                                     CandidateStatus.ARCHIVED)
UNREVIEWED, OUT_OF_SCOPE = CandidateStatus.UNREVIEWED, CandidateStatus.OUT_OF_SCOPE
SUPERSEDED, EXPIRED = CandidateStatus.SUPERSEDED, CandidateStatus.EXPIRED


# ---------------------------------------------------------------------- the rule
def inject(layers: Mapping[str, Sequence[Entry] | LayerCandidates], settings: Settings, query: str,
           workspace: str = "", failed_layers: frozenset[str] = frozenset(),
           errors: list[Problem] | None = None, extra: Mapping[str, ExtraScores] | None = None,
           unreviewed: frozenset[str] = frozenset(), files: Files = (),
           expired: frozenset[str] = frozenset(), pinned: frozenset[str] = frozenset(),
           narrow_min: int | None = None) -> InjectionResult:
    """SPEC §5 steps 1–12 over already-loaded layers: each a sequence of entries or a
    `LayerCandidates` (the prepared index's, the store's). `extra`: the §13 semantic scores
    and decay factors of a layer, computed by the caller (without it, §5 exactly).
    `unreviewed`: ids of entries left out as candidates with status `unreviewed` (SPEC §12).
    `files`: the files in context (SPEC §16), workspace-relative, or a function giving them
    (called only when a layer has scoped entries). `expired`: ids left out with status
    `expired` (SPEC §18). The three are held back at step 2 and listed after the layer's
    other candidates. `pinned`: ids pinned with `memtui pin` (§18), always present in focused
    mode like a file's `pinned: true` (§5 has no pins). `narrow_min`: focused mode's
    `FOCUSED_NARROW_MIN` (tests lower it)."""
    started = time.perf_counter()
    result = InjectionResult(workspace=workspace, query=query, enabled=settings.enabled,
                             budget=dict(settings.budget), errors=list(errors or []),
                             enabled_why=settings.enabled_why)
    if not settings.enabled or settings.private:  # 1. Switch (SPEC §18: private mode injects nothing, said so)
        result.disabled_reason = "switch_off" if not settings.enabled else "private"
        result._candidates = []
        return _finish(result, started)
    context = Context(files)
    views: dict[str, LayerCandidates] = {layer: _candidates(layer, layers.get(layer, ())) for layer in LAYERS}  # 2. Candidates ...
    held: dict[str, tuple[frozenset[int], dict[int, CandidateStatus]]] = {
        layer: held_back(view, unreviewed, expired, context) for layer, view in views.items()}  # ... less those held back
    if settings.injection == "focused":  # SPEC §15: steps F2–F8 (docs/injection.md), then 7–10 as here
        blocks, any_candidates, any_passing = fill_focused(result, views, held, settings, query, extra, pinned, narrow_min)
    else:
        blocks, any_candidates, any_passing = fill_layers(result, views, held, settings, query, extra)
    if context.asked or (not callable(files) and files):
        result.files = context.files
    result.text = render(blocks)  # 11. Render
    flags(result, failed_layers >= set(LAYERS), any_candidates, any_passing)  # 12. Flags
    return _finish(result, started)


def fill_layers(result: InjectionResult, views: Mapping[str, LayerCandidates],
                held: Mapping[str, tuple[frozenset[int], dict[int, CandidateStatus]]], settings: Settings,
                query: str, extra: Mapping[str, ExtraScores] | None
                ) -> tuple[list[tuple[str, list[str]]], bool, bool]:
    """Steps 3–10 over the layers in order: the blocks of included lines, whether there were
    candidates, and whether any passed the gate. What was decided is kept as `result._plan`."""
    q = terms(query)  # 3. Terms
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    budget = Budget(settings)
    blocks: list[tuple[str, list[str]]] = []
    any_candidates = any_passing = False
    plan = Plan(q, settings, maker)
    for layer in LAYERS:
        view, (out, out_as) = views[layer], held[layer]
        shared = view.shared(q)  # 4. Score: |Q ∩ M| of the entries sharing a term (the others score 0)
        layer_extra = extra.get(layer) if extra else None
        floats = None if layer_extra is None else FloatScores(view, shared, q, layer_extra)  # §13
        n_live = view.n_active - len(out)
        any_candidates |= bool(n_live)
        best = best_score(shared, len(q), out, floats)  # for step 12's `low_relevance`
        any_passing |= bool(n_live) and passes_gate(best, settings.gate.get(layer, 0.0))
        allowance = budget.allowance(layer)  # 10. Budget
        plan.add(view, shared, allowance, floats, out, out_as)
        fill = plan.fill(view, shared, allowance)  # 5–10 for the layer
        # with a gate above 0, a candidate sharing no term is below it and changes nothing: not walked
        result.truncated |= fill.settle(in_order(view, shared, len(q), floats, out, scored_only=fill.gate > 0))
        if fill.included:
            blocks.append((HEADERS[layer], [c.line for c in fill.included]))
            result.included += fill.included
        result.layer_budget[layer] = (fill.used, allowance, budget.carry)
        budget.spend(allowance, fill.used)
    result._plan = plan
    return blocks, any_candidates, any_passing


# ---------------------------------------------------------------------- 2. Candidates
class EntryLayer:
    """`LayerCandidates` over a plain sequence of entries, computed the plain way: every entry
    scored, every list sorted."""

    def __init__(self, layer: str, entries: Sequence[Entry]):
        active = sorted((e for e in entries if not e.archived), key=base_key)
        archived = sorted((e for e in entries if e.archived), key=base_key)
        self.layer = layer
        self.entries = [*active, *archived]
        self.n_active = len(active)
        self.size = len(self.entries)
        self.rank = [IMPORTANCE_RANK.get(e.importance, 1) for e in self.entries]
        self.terms = [terms_of(e) for e in self.entries]
        self._made: dict[tuple[tuple[int, bool], int], Made] = {}

    def shared(self, q: frozenset[str]) -> dict[int, int]:
        out = {}
        for pos in range(self.n_active):
            n = len(q & self.terms[pos])
            if n:
                out[pos] = n
        return out

    def in_order(self, shared: Mapping[int, int], scored_only: bool) -> Iterator[tuple[int, Sequence[int]]]:
        positions = shared if scored_only else range(self.n_active)
        ordered = sorted(positions, key=lambda p: (self.rank[p], -shared.get(p, 0), p))
        for n, run in groupby(ordered, key=lambda p: shared.get(p, 0)):
            yield n, list(run)

    def archived_terms(self, pos: int) -> frozenset[str]:
        return self.terms[pos]

    def focus(self) -> Focus:
        """What focused injection needs to narrow to the entries sharing a term (`Focus`)."""
        return focus_of(self.entries)

    def scoped(self) -> dict[int, tuple[str, ...]]:
        return {p: e.paths for p, e in enumerate(self.entries[: self.n_active]) if e.paths}

    def positions_of(self, ids: frozenset[str]) -> frozenset[int]:
        return frozenset(p for p in range(self.n_active) if self.entries[p].id in ids)

    def review_fields(self, pos: int) -> tuple[str, str, str, str]:
        e = self.entries[pos]
        return e.layer, e.id, e.text, e.source

    def entry(self, pos: int) -> Entry:
        return self.entries[pos]

    def shown(self, pos: int) -> Shown:
        e = self.entries[pos]
        return Shown(e.id, e.source_ref, e.importance, e.updated_iso)

    def made(self, pos: int, maker: LineMaker) -> Made:
        made = self._made.get((maker.key, pos))
        if made is None:
            made = self._made[(maker.key, pos)] = maker.made(self.entries[pos].text)
        return made


def _candidates(layer: str, given: Sequence[Entry] | LayerCandidates) -> LayerCandidates:
    return EntryLayer(layer, given) if isinstance(given, Sequence) else given


def held_back(view: LayerCandidates, unreviewed: frozenset[str], expired: frozenset[str],
              context: Context) -> tuple[frozenset[int], dict[int, CandidateStatus]]:
    """Step 2's active entries held back, listed after the layer's other candidates: the
    expired (SPEC §18), else those whose file's scope matches no file in context (§16), else
    the unreviewed (§12). The positions, and the status of each that is not `unreviewed`."""
    gone = view.positions_of(expired) if expired else frozenset()
    scoped_out = out_of_scope(view.scoped(), context)
    held = (view.positions_of(unreviewed) if unreviewed else frozenset()) | scoped_out | gone
    held_as = {pos: OUT_OF_SCOPE for pos in scoped_out}
    held_as.update((pos, EXPIRED) for pos in gone)
    return held, held_as


# ---------------------------------------------------------------------- 5. Gate
def passes_gate(score: float, gate: float) -> bool:
    return score >= gate


# ---------------------------------------------------------------------- 6. Order
def base_key(entry: Entry) -> tuple[int, float, tuple[str] | tuple[str, int]]:
    """Step 6 without the score: importance, `updated_at` descending, then the root-relative
    path and position in the file (conversation: the memory id)."""
    if entry.layer == Layer.CONVERSATION:
        place: tuple[str] | tuple[str, int] = (entry.id,)
    else:
        place = (entry.rel_path, entry.line_start)
    return (IMPORTANCE_RANK.get(entry.importance, 1), -entry.updated_at, place)


def in_order(view: LayerCandidates, shared: Mapping[int, int], nq: int, floats: FloatScores | None,
             held: frozenset[int], scored_only: bool) -> Iterator[tuple[int, float]]:
    """The layer's active candidates not held back, in step-6 order, with their score. With
    `scored_only`, only those sharing a term with the query (the others score 0)."""
    if floats is None:
        ordered = ((pos, s) for n, run in view.in_order(shared, scored_only) for s in (share(n, nq),) for pos in run)
    else:
        score = floats.score
        ordered = ((pos, score[pos]) for pos in floats.in_order(view.rank, scored_only))
    return ordered if not held else ((pos, s) for pos, s in ordered if pos not in held)


def archived_order(view: LayerCandidates, q: frozenset[str]) -> list[tuple[float, int]]:
    """The archived candidates, scored and in step-6 order, listed last in their layer."""
    scored = [(relevance_score(q, view.archived_terms(p)), p) for p in range(view.n_active, view.size)]
    scored.sort(key=lambda t: (view.rank[t[1]], -t[0], t[1]))
    return scored


# ---------------------------------------------------------------------- 7. Max items
def over_max_items(passed: int, limit: int | None) -> bool:
    """True for the `passed`-th passing candidate when the layer allows fewer."""
    return limit is not None and passed > limit


# ---------------------------------------------------------------------- 8. Lines
def make_line(text: str, max_chars: int, redact_secrets: bool) -> tuple[str, bool, int]:
    """One line, secrets redacted, clamped to `max_chars` code points: (line, clipped, redacted)."""
    one_line = " ".join(text.split())
    redacted = 0
    if redact_secrets:
        one_line, redacted = redact(one_line)
    clipped = len(one_line) > max_chars
    if clipped:
        one_line = one_line[: max_chars - 1] + ELLIPSIS
    return "- " + one_line, clipped, redacted


class LineMaker:
    """Steps 8 and 9 with the settings they need; remembers nothing but them."""

    def __init__(self, max_chars: int, redact_secrets: bool):
        self.max_chars = max_chars
        self.redact_secrets = redact_secrets
        self.key = (max_chars, bool(redact_secrets))

    def __call__(self, text: str) -> tuple[str, bool, int]:
        return make_line(text, self.max_chars, self.redact_secrets)

    def made(self, text: str) -> Made:
        line, clipped, redacted = self(text)
        return Made(line, clipped, redacted, est(line))

    def made_many(self, texts: Sequence[str]) -> list[Made]:
        """`[self.made(text) for text in texts]`, made in bulk (`injection_lines`)."""
        return injection_lines.made_many(texts, self.max_chars, self.redact_secrets, est)


# ---------------------------------------------------------------------- 9. Cost
def est(line: str) -> int:
    """Tokens of one line: wide characters count 1, the rest 1 per 4 (rounded up)."""
    if line.isascii():
        return -(-len(line) // 4)
    wide = sum(map(_WIDE.__getitem__, line))
    return wide + math.ceil((len(line) - wide) / 4)


class _Wide(dict[str, int]):
    """1 for a wide character (East Asian width W or F), else 0; asked of unicodedata once per character."""

    def __missing__(self, ch: str) -> int:
        wide = self[ch] = 1 if unicodedata.east_asian_width(ch) in ("W", "F") else 0
        return wide


_WIDE = _Wide()


def block_cost(text: str) -> int:
    return sum(est(line) for line in text.split("\n")) if text else 0


# ---------------------------------------------------------------------- 10. Budget
class Budget:
    """`remaining` and `carry` across the layers: each layer's allowance, then what it used."""

    def __init__(self, settings: Settings):
        self.caps = settings.budget
        self.remaining = settings.budget["total"] - est(TITLE)
        self.carry = 0

    def allowance(self, layer: str) -> int:
        return min(self.caps.get(layer, 0) + self.carry, self.remaining)

    def spend(self, allowance: int, used: int) -> None:
        self.carry = allowance - used
        self.remaining -= used


class LayerFill:
    """Steps 5 and 7–10 for one layer: each candidate, taken in step-6 order, gets its status.
    `make`: the candidate an included position becomes (a plain `Candidate` by default)."""

    def __init__(self, view: LayerCandidates, settings: Settings, allowance: int, maker: LineMaker,
                 make: Callable[[int, float], Candidate] | None = None):
        self.view = view
        self.gate = settings.gate.get(view.layer, 0.0)
        self.limit = settings.max_items.get(view.layer)
        self.allowance = allowance
        self.maker = maker
        self.make = make or (lambda pos, score: Candidate(view, pos, score, INCLUDED, maker))
        self.header = est(HEADERS[view.layer])
        self.used = 0
        self.passed = 0
        self.fits = True
        self.included: list[Candidate] = []

    def passes(self, score: float) -> bool:  # 5. Gate
        return passes_gate(score, self.gate)

    def decide(self, pos: int, score: float) -> CandidateStatus:
        """The status of the next candidate in order: `below_gate`, or as `place` says."""
        if not passes_gate(score, self.gate):
            return BELOW_GATE
        return self.place(pos, score)

    def place(self, pos: int, score: float) -> CandidateStatus:
        """The status of the next candidate in play (it passed the gate): steps 7, 9 and 10."""
        self.passed += 1
        if over_max_items(self.passed, self.limit):  # 7. Max items
            return MAX_ITEMS
        if not self.fits:  # 10. after the first that does not fit, every one is `budget`
            return BUDGET
        # 9. Cost: its line; the first included also pays for the layer's header line
        cost = self.view.made(pos, self.maker).tokens + (0 if self.included else self.header)
        if self.used + cost > self.allowance:
            self.fits = False
            return BUDGET
        self.used += cost
        self.included.append(self.make(pos, score))
        return INCLUDED

    @property
    def open(self) -> bool:
        """Whether a later candidate may still be included (none fails to fit, max items not reached)."""
        return self.fits and (self.limit is None or self.passed < self.limit)

    def walk(self, ordered: Iterable[tuple[int, float]]) -> Iterator[tuple[int, float, CandidateStatus]]:
        """(position, score, status) of each of `ordered` (`in_order`)."""
        for pos, score in ordered:
            yield pos, score, self.decide(pos, score)

    def settle(self, ordered: Iterable[tuple[int, float]]) -> bool:
        """Walk until nothing later in the layer can be included; True if any candidate got
        `budget`. That is at the first `budget` (nothing fits after it) or once max items
        passed (every later passing candidate is `max_items`, never `budget`)."""
        for _, _, status in self.walk(ordered):
            if status == BUDGET:
                return True
            if not self.open:
                return False
        return False


# ---------------------------------------------------------------------- 11. Render
def render(blocks: list[tuple[str, list[str]]]) -> str:
    """`## Memory`, then per layer with an included item a blank line, its header and its
    lines, joined by newlines; empty when nothing is included."""
    if not blocks:
        return ""
    lines = [TITLE]
    for header, layer_lines in blocks:
        lines += ["", header, *layer_lines]
    return "\n".join(lines)


# ---------------------------------------------------------------------- 12. Flags
def disabled_reason(count: int, every_layer_failed: bool, any_candidates: bool, any_passing: bool) -> str | None:
    if count:
        return None
    if every_layer_failed:
        return "query_failed"
    if not any_candidates:
        return "empty_result"
    if not any_passing:
        return "low_relevance"
    return "over_budget"


def flags(result: InjectionResult, every_layer_failed: bool, any_candidates: bool, any_passing: bool) -> None:
    """`count`, `redacted`, `truncated` (a `budget` status set it already; a clipped line
    too), `tokens`, `chars` and `disabled_reason` of the rendered text."""
    result.count = len(result.included)
    result.redacted = sum(c.redacted for c in result.included)
    result.truncated |= any(c.clipped for c in result.included)
    result.tokens = block_cost(result.text)
    result.chars = len(result.text)
    result.disabled_reason = disabled_reason(result.count, every_layer_failed, any_candidates, any_passing)


def _finish(result: InjectionResult, started: float) -> InjectionResult:
    """Each injection logs its statistics, never memory text."""
    result.retrieval_ms += (time.perf_counter() - started) * 1000
    log.info(
        "injection count=%d chars=%d tokens=%d retrieval_ms=%.2f disabled_reason=%s",
        result.count, result.chars, result.tokens, result.retrieval_ms, result.disabled_reason,
    )
    return result


# ---------------------------------------------------------------------- every candidate, when asked for
class Plan:
    """What `fill_layers` decided, kept so that every candidate can be produced when asked
    for: each layer's view, shared counts, allowance, §13 scores and the positions held back.
    The result reads it (`injection_runs.Decided`) one candidate at a time (`decisions`), in
    runs for the JSON, or only counted (`injection_runs`)."""

    def __init__(self, q: frozenset[str], settings: Settings, maker: LineMaker):
        self.q = q
        self.settings = settings
        self.maker = maker
        self.layers: list[tuple[LayerCandidates, Mapping[int, int], int]] = []
        self.floats: dict[str, FloatScores] = {}
        self.held: dict[str, frozenset[int]] = {}  # layer -> active positions held back (unreviewed, out of scope, expired)
        self.held_as: dict[str, Mapping[int, CandidateStatus]] = {}  # ... their status where it is not `unreviewed`

    def add(self, view: LayerCandidates, shared: Mapping[int, int], allowance: int, floats: FloatScores | None,
            held: frozenset[int], held_as: Mapping[int, CandidateStatus]) -> None:
        self.layers.append((view, shared, allowance))
        if floats is not None:
            self.floats[view.layer] = floats
        self.held[view.layer], self.held_as[view.layer] = held, held_as

    def views(self) -> list[LayerCandidates]:
        return [view for view, _, _ in self.layers]

    def fill(self, view: LayerCandidates, shared: Mapping[int, int], allowance: int) -> LayerFill:
        """A new walk through the layer, as `fill_layers` made it."""
        floats = self.floats.get(view.layer)
        if floats is None:
            return LayerFill(view, self.settings, allowance, self.maker)
        return LayerFill(view, self.settings, allowance, self.maker,
                         lambda pos, score: Candidate(view, pos, score, INCLUDED, self.maker, floats.parts(pos)))

    def passes(self, layer: str, score: float) -> bool:
        return passes_gate(score, self.settings.gate.get(layer, 0.0))

    def archived(self, view: LayerCandidates) -> list[tuple[float, int]]:
        floats = self.floats.get(view.layer)
        return archived_order(view, self.q) if floats is None else floats.archived_order(view.rank, view.size)

    def decisions(self) -> Iterator[Decision]:
        """Every candidate as (layer, position, score, status, (keyword, semantic) in hybrid
        retrieval or None), in layer order then sort order."""
        for view, shared, allowance in self.layers:
            yield from self.layer_decisions(view, shared, allowance)

    def layer_decisions(self, view: LayerCandidates, shared: Mapping[int, int], allowance: int) -> Iterator[Decision]:
        """One layer's candidates: the active ones in step-6 order (steps 5, 7–10), then those
        held back at step 2, then the archived (step 2), each in step-6 order."""
        layer, nq, rank = view.layer, len(self.q), view.rank
        floats, held, held_as = self.floats.get(layer), self.held.get(layer, frozenset()), self.held_as.get(layer, {})
        fill = self.fill(view, shared, allowance)
        parts = floats.parts if floats is not None else _no_parts
        for pos, score, status in fill.walk(in_order(view, shared, nq, floats, held, scored_only=False)):
            yield view, pos, score, status, parts(pos)
        if floats is None:
            for pos in sorted(held, key=lambda p: (rank[p], -shared.get(p, 0), p)):
                yield view, pos, share(shared.get(pos, 0), nq), held_as.get(pos, UNREVIEWED), None
        else:
            for pos in floats.held_order(rank, held):
                yield view, pos, floats.score[pos], held_as.get(pos, UNREVIEWED), parts(pos)
        for score, pos in self.archived(view):
            yield view, pos, score, inactive_status(view, pos), parts(pos)


def _no_parts(pos: int) -> None:
    return None


def _joined(listings: Sequence[Callable[[], list[Candidate]]]) -> list[Candidate]:
    return [c for listing in listings for c in listing()]


# ---------------------------------------------------------------------- SPEC §15: focused
def fill_focused(result: InjectionResult, views: Mapping[str, LayerCandidates],
                 held: Mapping[str, tuple[frozenset[int], dict[int, CandidateStatus]]], settings: Settings,
                 query: str, extra: Mapping[str, ExtraScores] | None, pinned: frozenset[str],
                 narrow_min: int | None) -> tuple[list[tuple[str, list[str]]], bool, bool]:
    """`memory.injection: "focused"` (docs/injection.md): F2–F8 score and order each layer's
    candidates and say which pass the cut (`FocusedScores`, in place of steps 3–6); F9–F10
    are steps 7–10, by the same `LayerFill`. Returns what `fill_layers` does; the candidates
    are listed (`FocusedScores.listed`) when asked for."""
    from .injection_focused import FocusedScores  # loaded in focused mode only: the §5 hook never pays for it

    scores = FocusedScores(views, query, held, extra, pinned, narrow_min, settings.max_items)
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    budget = Budget(settings)
    blocks: list[tuple[str, list[str]]] = []
    listings: list[Callable[[], list[Candidate]]] = []
    any_candidates = any_passing = False
    for layer in LAYERS:
        ranked = scores.ranked(layer)  # F8. Order
        allowance = budget.allowance(layer)  # F10. Budget, as step 10
        fill = LayerFill(views[layer], settings, allowance, maker, partial(scores.included, layer, maker))
        decided: dict[int, Candidate] = {}  # the candidates passing F7, with their status
        any_candidates |= bool(scores.in_play[layer])
        for pos in ranked:
            if not scores.passes(layer, pos):  # F7. Cut-off: `below_gate`
                continue
            any_passing = True
            status = fill.place(pos, 0.0)  # F9, F10: steps 7–10
            decided[pos] = fill.included[-1] if status == INCLUDED else scores.candidate(layer, pos, status, maker)
            result.truncated |= status == BUDGET
        listings.append(partial(scores.listed, layer, ranked, decided, maker))
        if fill.included:
            blocks.append((HEADERS[layer], [c.line for c in fill.included]))
            result.included += fill.included
        result.layer_budget[layer] = (fill.used, allowance, budget.carry)
        budget.spend(allowance, fill.used)
    if scores.narrow:  # the candidates are made when listed
        result._lazy = partial(_joined, listings)
    else:
        result._candidates = _joined(listings)
    return blocks, any_candidates, any_passing
