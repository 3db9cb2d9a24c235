"""Focused injection's scores and order (SPEC §15, docs/injection.md "Focused injection"),
steps F2–F8: which candidates are in play, their keyword, relevance and adjusted score, the
cut-off, and the order in each layer. Steps F9–F12 (max items, lines, cost, budget, render,
flags) are §5's own: `core.injection.fill_focused` runs them over what `FocusedScores` gives.
The formulas are `core.focused`'s.

A large layer is read through its inverted index (`injection_narrowed`: `Narrowed`,
`Scorable`, `ByRelevance`), not entry by entry, when the layer's indexed terms allow it; see
`FocusedScores._scorable` and `_lifted`. Held equal to `reference_focused`
(tests/core/test_focused.py) both ways (`narrow_min`)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from itertools import chain, compress, count, repeat
from operator import ge
from typing import TYPE_CHECKING, NamedTuple

from . import focused
from .bitmaps import bitmap
from .candidates import Candidate, inactive_status
from .focused import Why
from .injection_narrowed import ByRelevance, Narrowed, Scorable
from .model import CandidateStatus, Entry

if TYPE_CHECKING:
    from .candidates import LayerCandidates
    from .injection import LineMaker
    from .injection_scores import ExtraScores

FOCUSED_NARROW_MIN = 256  # a layer of this many entries or more is narrowed (`Narrowed`) when it can be
BELOW_GATE, MAX_ITEMS, UNREVIEWED = CandidateStatus.BELOW_GATE, CandidateStatus.MAX_ITEMS, CandidateStatus.UNREVIEWED


class Scored(NamedTuple):
    """A candidate's F4–F6 scores, and what F6 read (`why` shows them)."""

    keyword: float  # F4
    semantic: float | None  # §13's score (F5), None without the semantic model
    lift: float  # F5
    relevance: float  # F5
    decay: float | None  # §13's decay factor (F6), None when decay is off
    score: float  # F6: the adjusted score F7 and F8 read
    importance: str  # F6


class Ahead:
    """F9 in a narrowed layer with max items: `room`, how many of its passing candidates that
    are not pinned can come before max items (the pinned come first), and `keys`, the F8 keys
    (score, relevance, −position: the first highest) of the best of them found so far, kept
    on a heap, the lowest first."""

    __slots__ = ("room", "keys")

    def __init__(self, room: int):
        self.room = room
        self.keys: list[tuple[float, float, int]] = []

    def keep(self, key: tuple[float, float, int]) -> None:
        """Count `key` among the best, when there is room for it or it beats the lowest."""
        if self.room <= 0:
            return
        if len(self.keys) < self.room:
            heapq.heappush(self.keys, key)
        elif key > self.keys[0]:
            heapq.heapreplace(self.keys, key)

    def closed_to(self, reach: float) -> bool:
        """Max items' worth come before every candidate that scores `reach` or less: there is no
        room, or the room is full of candidates scoring above it."""
        return self.room <= 0 or (len(self.keys) >= self.room and self.keys[0][0] > reach)

    def outrank(self, key: tuple[float, float, int]) -> bool:
        """Max items' worth come before a candidate whose F8 key is at most `key`."""
        return self.room <= 0 or (len(self.keys) >= self.room and self.keys[0] > key)


class FocusedScores:
    """Steps F2–F8 of docs/injection.md's focused rule over every layer at once (F4's df and
    F7's cut are the message's, across layers), each step a method, in the rule's order:

      F2. Candidates ... `_take_candidates` (`in_play`, `held`)
      F3. Terms ........ `q`; M: `_read_memories` (entries, or a layer's postings: `Narrowed`)
      F4. Keyword ...... `_term_weights`, `_keyword_of`
      F5. Relevance .... `_semantic_base`, `_relevance`
      F6. Score ........ `_score`, `_adjusted`
      F7. Cut-off ...... `_best`, `cut`, `_nearest`, `passes`
      F8. Order ........ `ranked`, `listed`

    `held_back`: each layer's active positions held back at step 2, with their statuses;
    `pinned_ids`: entries pinned by `memtui pin`, pinned like a file's `pinned: true`. A layer
    of `narrow_min` entries or more (`FOCUSED_NARROW_MIN`) whose index allows it is read
    through its postings (`Narrowed`), and only its candidates that can pass F7 are scored
    (`_score_or_walk`, `_score_walk`); the others are scored when listed."""

    def __init__(self, views: Mapping[str, LayerCandidates], query: str,
                 held_back: Mapping[str, tuple[frozenset[int], Mapping[int, CandidateStatus]]],
                 extra: Mapping[str, ExtraScores] | None = None, pinned_ids: frozenset[str] = frozenset(),
                 narrow_min: int | None = None, max_items: Mapping[str, int | None] | None = None):
        self.views = views
        self._take_candidates(held_back)  # F2
        self.q = focused.content_terms(query)  # F3: Q
        self.semantic = _each_layer(views, extra, lambda e: e.semantic)  # §13's scores, when given
        self.decay = _each_layer(views, extra, lambda e: e.decay)
        self._read_memories(pinned_ids, FOCUSED_NARROW_MIN if narrow_min is None else narrow_min)  # F3: M
        self.weight = self._term_weights()  # F4
        self.base = self._semantic_base()  # F5
        self.near = {layer: self._nearest(layer) for layer in views}  # F7: each layer's nearest in meaning
        self.scorable = self._scorable()  # which positions can score above 0 (a narrowed layer: few)
        self._keyword: dict[frozenset[str], float] = {}  # few distinct Q ∩ M: each one's keyword score found once
        self.scored: dict[str, dict[int, Scored]] = {layer: {} for layer in views}
        walks = self._score_or_walk()  # F4–F6
        self.cut = focused.cut_off(self._best(walks))  # F7
        self._score_the_passing(walks, max_items or {})  # F7, F9
        self.scopes = {layer: views[layer].scoped() for layer in views}  # SPEC §16: a scoped file's globs

    # ------------------------------------------------------------------ F2, F3: the candidates and their terms
    def _take_candidates(self, held_back: Mapping[str, tuple[frozenset[int], Mapping[int, CandidateStatus]]]) -> None:
        """F2. Candidates: each layer's active entries (positions 0 .. n_active − 1, in base
        order), less those held back at step 2 (unreviewed, out of scope, expired): `in_play`;
        the held back in `held` (ascending; `held_set`, as a set) and their statuses in
        `held_as`."""
        self.in_play: dict[str, list[int]] = {}
        self.held: dict[str, list[int]] = {}
        self.held_set: dict[str, frozenset[int]] = {}
        self.held_as: dict[str, Mapping[int, CandidateStatus]] = {}
        for layer, view in self.views.items():
            out, self.held_as[layer] = held_back.get(layer, (frozenset(), {}))
            self.in_play[layer] = [p for p in range(view.n_active) if p not in out] if out else list(range(view.n_active))
            self.held[layer] = sorted(out)
            self.held_set[layer] = frozenset(out)

    def _read_memories(self, pinned_ids: frozenset[str], narrow_min: int) -> None:
        """F3's M of each candidate, and which are pinned (a file's `pinned: true` or
        `alwaysApply: true`, or `memtui pin`: `pinned_ids`). A layer of `narrow_min` entries or
        more whose index tells what M reads is read through its postings (`narrow`: `Narrowed`);
        every other layer's entries are made (`entries`), with their M (`memory_terms`)."""
        self.narrow: dict[str, Narrowed] = {}
        for layer, view in self.views.items():
            found = Narrowed.of(view, self.q, pinned_ids) if view.size >= narrow_min else None
            if found is not None:
                self.narrow[layer] = found
        entries = {layer: [view.entry(p) for p in range(view.size)] for layer, view in self.views.items()
                   if layer not in self.narrow}
        self.entries = entries
        self.pinned = {layer: [e.pinned or e.id in pinned_ids for e in es] for layer, es in entries.items()}
        self.memory_terms = {layer: [_content_terms(e) for e in es] for layer, es in entries.items()}

    # ------------------------------------------------------------------ F4, F5: keyword and relevance
    def _term_weights(self) -> dict[str, float]:
        """F4's weight of each term of Q, `w(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))`
        (`focused.idf`): N, the candidates in play; df(t), how many of them hold t in M (in a
        narrowed layer, counted from its postings less the held back)."""
        n = sum(map(len, self.in_play.values()))
        df = focused.document_frequency((self.memory_terms[layer][p] for layer, ps in self.in_play.items()
                                         if layer not in self.narrow for p in ps), self.q)
        for layer, narrowed in self.narrow.items():
            for t in self.q:
                df[t] += narrowed.df(t, self.held[layer])
        return {t: focused.idf(df[t], n) for t in self.q}

    def _semantic_base(self) -> float:
        """F5's `base`: the lower median of the semantic scores of the candidates in play (0
        without the semantic score)."""
        known: list[float] = []
        for layer, ps in self.in_play.items():
            sem = self.semantic[layer]
            if sem is not None:  # every active position in play, or some held back
                known += sem[:len(ps)] if len(ps) == self.views[layer].n_active else [sem[p] for p in ps]
        return focused.lower_median(known)

    def _relevance(self, layer: str, pos: int) -> tuple[float, float | None, float, float]:
        """F4, F5 for one candidate: (keyword, semantic, lift, relevance)."""
        kw = self._keyword_of(self.q & self._terms(layer, pos))
        sems = self.semantic[layer]
        sem = sems[pos] if sems is not None else None
        lift = focused.semantic_lift(sem, self.base) if sem is not None else 0.0
        return kw, sem, lift, focused.relevance(kw, lift)

    def _keyword_of(self, shared: frozenset[str]) -> float:
        """F4's keyword score of a candidate whose Q ∩ M is `shared`, found once per distinct one."""
        kw = self._keyword.get(shared)
        if kw is None:
            kw = self._keyword[shared] = focused.keyword_score(self.q, shared, self.weight)
        return kw

    def _terms(self, layer: str, pos: int) -> frozenset[str]:
        """F3's M of a candidate (in a narrowed layer, Q ∩ M: all that F4 reads of it)."""
        narrowed = self.narrow.get(layer)
        return narrowed.terms(pos) if narrowed is not None else self.memory_terms[layer][pos]

    # ------------------------------------------------------------------ F6: the score
    def _score(self, layer: str, pos: int) -> Scored:
        """F4–F6 for one candidate."""
        kw, sem, lift, rel = self._relevance(layer, pos)
        dec, score, imp = self._adjusted(layer, pos, rel)
        return Scored(kw, sem, lift, rel, dec, score, imp)

    def _adjusted(self, layer: str, pos: int, relevance: float) -> tuple[float | None, float, str]:
        """F6 for one candidate of this relevance: (decay, score, importance)."""
        decays = self.decay[layer]
        dec = decays[pos] if decays is not None else None
        imp = self._importance(layer, pos)
        return dec, focused.adjusted(relevance, imp, dec, self.is_pinned(layer, pos)), imp

    def _scored(self, layer: str, pos: int) -> Scored:
        """A candidate's F4–F6 scores, found once (a narrowed layer's rest when first asked)."""
        sc = self.scored[layer]
        found = sc.get(pos)
        if found is None:
            found = sc[pos] = self._score(layer, pos)
        return found

    def _importance(self, layer: str, pos: int) -> str:
        """F6's importance of a candidate (read without making its entry in a narrowed layer)."""
        return self.views[layer].shown(pos).importance if layer in self.narrow else self.entries[layer][pos].importance

    def is_pinned(self, layer: str, pos: int) -> bool:
        """Pinned: its file's `pinned: true` or `alwaysApply: true`, or `memtui pin`."""
        narrowed = self.narrow.get(layer)
        return pos in narrowed.pinned if narrowed is not None else self.pinned[layer][pos]

    # ------------------------------------------------------------------ which candidates are scored
    def _scorable(self) -> dict[str, Container[int]]:
        """The positions of each layer that can score above 0: every one, or in a narrowed
        layer those sharing a term of Q, those lifted to the floor or nearest in meaning
        (`_lifted`) and those listed apart (pinned, held back, archived). The rest score 0,
        or under the floor on meaning alone."""
        scorable: dict[str, Container[int]] = {layer: range(view.size) for layer, view in self.views.items()}
        for layer, narrowed in self.narrow.items():
            lifted = bitmap(sorted(self._lifted(layer)), narrowed.n_active)
            scorable[layer] = Scorable(narrowed.sharing | lifted, narrowed.pinned.union(self.held[layer], narrowed.archived))
        return scorable

    def _lifted(self, layer: str) -> set[int]:
        """A narrowed layer's entries that, sharing no term of Q, can still pass F7 on meaning
        alone: a semantic lift of at least the floor (their relevance is their lift), and the
        layer's nearest. Those sharing no term and lifted less cannot pass: not scored until
        listed. Without the semantic score, none (they all score 0)."""
        sems = self.semantic[layer]
        if sems is None:
            return set()
        near, out, base = self.near[layer], self.held_set[layer], self.base
        least = base + (focused.FLOOR - 0.001) * (1.0 - base)  # below it, a lift rounds under the floor
        sure = base + (focused.FLOOR + 0.001) * (1.0 - base) if base < 1.0 else 2.0  # from it, it rounds to the floor or over
        over = compress(range(self.views[layer].n_active), map(ge, sems, repeat(least)))  # in C: few pass
        lifted = {p for p in over if p not in out and (sems[p] >= sure or focused.semantic_lift(sems[p], base) >= focused.FLOOR)}
        return lifted if near is None else lifted | {near}

    def _score_or_walk(self) -> dict[str, ByRelevance]:
        """F4–F6 of every candidate of a layer read entry by entry. Of a narrowed layer, F4–F6
        of those listed apart (pinned, held back, archived), and the others that can score
        above 0 (sharing a term of Q, or lifted) as a walk in relevance order (F4, F5 only:
        `ByRelevance`), returned: F6's score is at most the relevance × its importance factor
        (`_reach`), so it is found only for those that could set F7's best or pass its cut
        (`_best`, `_score_walk`)."""
        walks: dict[str, ByRelevance] = {}
        for layer, view in self.views.items():
            narrowed = self.narrow.get(layer)
            if narrowed is None:
                for p in range(view.size):
                    self._scored(layer, p)
                continue
            scorable = self.scorable[layer]
            assert isinstance(scorable, Scorable)
            apart = scorable.others  # pinned, held back or archived
            for p in sorted(apart):
                self._scored(layer, p)
            walked = scorable.bits & ~bitmap(sorted(p for p in apart if p < narrowed.n_active), narrowed.n_active)
            walks[layer] = ByRelevance(narrowed.parts(walked, self.weight), self.semantic[layer], self.base)
        return walks

    # ------------------------------------------------------------------ F7: the cut-off
    def _contends(self, layer: str, pos: int) -> bool:
        """A candidate F7's best is taken over: in play and not pinned."""
        return pos < self.views[layer].n_active and pos not in self.held_set[layer] and not self.is_pinned(layer, pos)

    def _best(self, walks: Mapping[str, ByRelevance]) -> float:
        """F7's `best`: the highest F6 score among the candidates in play and not pinned (0 if
        none). Of those scored, then of the narrowed layers' walks merged by relevance, read
        while one could still beat it (at the highest importance) and scored when its own
        importance lets it, then of the rest (`_best_of_the_rest`)."""
        best = 0.0
        for layer, sc in self.scored.items():
            for p, found in sc.items():
                if self._contends(layer, p):
                    best = max(best, found.score)
        for neg, layer, p in heapq.merge(*(_tagged(layer, walk) for layer, walk in walks.items())):
            if _reach(-neg) < best:
                break
            if _reach(-neg, self.views[layer].rank[p]) >= best:  # else its importance keeps it under the best
                best = max(best, self._scored(layer, p).score)
        return self._best_of_the_rest(best)

    def _best_of_the_rest(self, best: float) -> float:
        """F7's best over every candidate in play and not pinned, given `best` over those
        scored. The rest (a narrowed layer's entries sharing no term, lifted under the floor)
        score at most their lift × the highest importance factor: they are read, by
        semantic score, only while one of them could beat `best` (a message whose best match
        is that weak)."""
        def reach(sem: float) -> float:  # the highest score a rest entry of this semantic score can have
            return _reach(focused.semantic_lift(sem, self.base))

        if _reach(focused.FLOOR) < best:  # the rest are lifted under the floor (`_lifted`): none can beat it
            return best
        rest: list[tuple[float, str, int]] = []
        for layer in self.narrow:
            sems, scorable = self.semantic[layer], self.scorable[layer]
            if sems is not None:
                rest += [(sems[p], layer, p) for p in self.in_play[layer] if p not in scorable]
        if not rest or reach(max(rest)[0]) < best:
            return best
        for sem, layer, p in sorted(rest, key=lambda r: -r[0]):
            if reach(sem) < best:
                break
            best = max(best, self._scored(layer, p).score)
        return best

    def _nearest(self, layer: str) -> int | None:
        """F7's nearest in meaning of a user or project layer (`focused.nearest`): of its
        candidates in play and not pinned, the first of the highest semantic score, found in C.
        None in the conversation layer, or without the semantic score."""
        sems = self.semantic[layer]
        if layer not in focused.NEAREST_LAYERS or sems is None:
            return None
        ps = self.in_play[layer]
        narrowed = self.narrow.get(layer)
        pinned = narrowed.pinned if narrowed is not None else frozenset(compress(count(), self.pinned[layer]))
        if not pinned.isdisjoint(ps):
            ps = [p for p in ps if p not in pinned]
        if not ps:
            return None
        top = max(map(sems.__getitem__, ps))
        pos = ps[list(map(sems.__getitem__, ps)).index(top)]
        return focused.nearest([(pos, top, focused.semantic_lift(top, self.base))])

    def _score_the_passing(self, walks: Mapping[str, ByRelevance], max_items: Mapping[str, int | None]) -> None:
        """Every candidate that can pass F7 scored (what F8 ranks): each layer's nearest in
        meaning (it passes whatever the cut), then each narrowed layer's walk (`_score_walk`),
        where a layer with max items (F9) keeps count of its passing candidates (`Ahead`)."""
        for layer, near in self.near.items():
            if near is not None:
                self._scored(layer, near)
        ahead = {layer: self._passing_ahead(layer, limit) for layer, limit in max_items.items()
                 if layer in self.narrow and limit is not None}
        for layer, walk in walks.items():
            self._score_walk(layer, walk, ahead.get(layer))

    def _passing_ahead(self, layer: str, limit: int) -> Ahead:
        """For F9's `limit` in a narrowed layer: `Ahead`, with the passing candidates not pinned
        that are scored so far."""
        room = limit - sum(1 for p in self.narrow[layer].pinned
                           if p < self.views[layer].n_active and p not in self.held_set[layer])
        ahead = Ahead(room)
        for p, found in self.scored[layer].items():
            if self._contends(layer, p) and self.passes(layer, p):
                ahead.keep((found.score, found.relevance, -p))
        return ahead

    def _score_walk(self, layer: str, walk: ByRelevance, ahead: Ahead | None) -> None:
        """F7 in a narrowed layer: F6 of each candidate of its walk (the highest relevance
        first) that can pass the cut. The walk stops at the first whose relevance is under the
        floor, or that could not reach the cut at the layer's highest importance (every one
        after it is no higher); a candidate whose own importance keeps it under the cut is
        passed over. With max items (`ahead`), a candidate that max items' worth of passing
        candidates outrank whatever its score is past max items: not scored (`listed` says so),
        and once that holds at the highest importance, the walk stops."""
        narrowed, sc, rank, cut = self.narrow[layer], self.scored[layer], self.views[layer].rank, self.cut
        for rel, p in walk:
            if rel < focused.FLOOR:
                break
            most = _reach(rel, factor=narrowed.highest_factor)  # what this one, or any after it, can score at most
            if most < cut:
                break
            if p in sc:  # scored already (and counted in `ahead`)
                continue
            reach = _reach(rel, rank[p])
            if reach < cut:  # its importance keeps it under the cut
                continue
            if ahead is not None:
                if ahead.closed_to(most):
                    break
                if ahead.outrank((reach, rel, -p)):
                    continue
            self._scored(layer, p)
            if ahead is not None and self.passes(layer, p):
                ahead.keep((sc[p].score, rel, -p))

    def passes(self, layer: str, pos: int) -> bool:
        """F7: pinned, its layer's nearest in meaning, or relevant enough and above the cut."""
        found = self._scored(layer, pos)
        return focused.passes(found.relevance, found.score, self.cut, self.is_pinned(layer, pos), pos == self.near[layer])

    # ------------------------------------------------------------------ F8: the order, and what is listed
    def ranked(self, layer: str) -> list[int]:
        """F8. Order: pinned first, then the adjusted score, the relevance, the base order. In
        a narrowed layer, only those passing F7 (what steps F9–F12 read; `listed` orders the
        rest)."""
        sc = self.scored[layer]
        if layer in self.narrow:
            return self._in_f8_order(layer, (p for p in self.in_play[layer] if p in sc and self.passes(layer, p)))
        return self._in_f8_order(layer, self.in_play[layer])

    def _in_f8_order(self, layer: str, ps: Iterable[int]) -> list[int]:
        """`ps` sorted by F8's key: pinned first, the score descending, the relevance
        descending, the position (its place in the base order)."""
        return sorted(ps, key=lambda p: self._key(layer, p))

    def _key(self, layer: str, p: int) -> tuple[bool, float, float, int]:
        """F8's key of a candidate."""
        found = self._scored(layer, p)
        return not self.is_pinned(layer, p), -found.score, -found.relevance, p

    def why(self, layer: str, p: int) -> Why:
        """The parts of a candidate's score (`preview --json`'s `why`)."""
        found = self.scored[layer].get(p)
        if found is None and (self.semantic[layer] is not None or p in self.scorable[layer]):
            found = self._scored(layer, p)  # a narrowed layer's: scored when listed
        if found is None:  # a narrowed layer's entry sharing no term, not pinned, no semantic score: F4, F5 give 0
            kw, sem, lift, rel = 0.0, None, 0.0, 0.0
            dec, score, imp = self._adjusted(layer, p, rel)
        else:
            kw, sem, lift, rel, dec, score, imp = found
        globs = self.scopes[layer].get(p)
        scope = f"paths: {', '.join(globs)}" if globs else "workspace"
        return Why(kw, sem, lift, rel, imp, dec, self.is_pinned(layer, p), score, self.cut, scope, p == self.near[layer])

    def included(self, layer: str, maker: LineMaker, pos: int, score: float) -> Candidate:
        """An included candidate (`LayerFill.make`): its score is F6's."""
        return self.candidate(layer, pos, CandidateStatus.INCLUDED, maker)

    def candidate(self, layer: str, pos: int, status: CandidateStatus, maker: LineMaker) -> Candidate:
        """A candidate of this status, its score F6's, with its `why`."""
        w = self.why(layer, pos)
        return Candidate(self.views[layer], pos, w.score, status, maker, None, w)

    def listed(self, layer: str, ranked: list[int], statuses: Mapping[int, Candidate], maker: LineMaker) -> list[Candidate]:
        """The layer's candidates: in play in F8's order (`_in_order`), `below_gate` unless
        passing (`statuses`: those steps F9–F12 placed); then the held back and the archived,
        by score."""
        view = self.views[layer]
        # not placed: below the gate, or passing but outranked by max items' worth (never scored then)
        out = [statuses.get(p) or self.candidate(layer, p, MAX_ITEMS if self.passes(layer, p) else BELOW_GATE, maker)
               for p in self._in_order(layer, ranked)]
        held_as = self.held_as[layer]
        out += [self.candidate(layer, p, held_as.get(p, UNREVIEWED), maker) for p in self._by_score(layer, self.held[layer])]
        out += [self.candidate(layer, p, inactive_status(view, p), maker)
                for p in self._by_score(layer, range(view.n_active, view.size))]
        return out

    def _in_order(self, layer: str, ranked: list[int]) -> Iterable[int]:
        """Every candidate in play of a layer in F8's order: `ranked`, outside a narrowed
        layer. In a narrowed layer with the semantic score every one scores, sorted; without
        it, those scoring above 0 or pinned, sorted, then the rest (all scoring 0, not
        pinned) in base order."""
        if layer not in self.narrow:
            return ranked
        if self.semantic[layer] is not None:
            return self._in_f8_order(layer, self.in_play[layer])
        scorable = self.scorable[layer]
        head = self._in_f8_order(layer, (p for p in self.in_play[layer] if p in scorable and self._above_zero(layer, p)))
        first = set(head)
        return chain(head, (p for p in self.in_play[layer] if p not in first))

    def _above_zero(self, layer: str, p: int) -> bool:
        """Pinned, or scoring above 0 (F6 or F5)."""
        if self.is_pinned(layer, p):
            return True
        found = self._scored(layer, p)
        return bool(found.score or found.relevance)

    def _by_score(self, layer: str, ps: Iterable[int]) -> list[int]:
        """Positions by their F6 score, the highest first (then in base order)."""
        sc = self.scored[layer]
        return sorted(ps, key=lambda p: (-sc[p].score, p))


def _tagged(layer: str, order: ByRelevance) -> Iterator[tuple[float, str, int]]:
    """`order` as (−relevance, layer, position), to merge the layers' walks."""
    for rel, p in order:
        yield -rel, layer, p


def _reach(relevance: float, rank: int | None = None, factor: float | None = None) -> float:
    """The highest F6 score a candidate of this relevance can have (no decay; of the importance
    of this rank, or at most this `factor`, else the highest importance): it cannot set F7's
    best or pass the cut under it."""
    if factor is None:
        factor = focused.TOP_FACTOR if rank is None else focused.RANK_FACTOR.get(rank, focused.TOP_FACTOR)
    return round(relevance * factor, focused.DIGITS)


def _each_layer(views: Mapping[str, LayerCandidates], extra: Mapping[str, ExtraScores] | None,
                field: Callable[[ExtraScores], Sequence[float] | None]) -> dict[str, list[float] | None]:
    """One of §13's scores (`field` of each layer's `ExtraScores`) as a list per layer, or None
    where it is not given."""
    given = extra or {}
    out: dict[str, list[float] | None] = {}
    for layer in views:
        e = given.get(layer)
        scores = field(e) if e is not None else None
        out[layer] = list(scores) if scores is not None else None
    return out


def _content_terms(e: Entry) -> frozenset[str]:
    return focused.entry_content_terms(e.text, e.section, e.name, e.description, e.tags)
