"""Focused injection's scores and order (SPEC §15, docs/injection.md "Focused injection"),
steps F2–F8: which candidates are in play, their keyword, relevance and adjusted score, the
cut-off, and the order in each layer. Steps F9–F12 (max items, lines, cost, budget, render,
flags) are §5's own: `core.injection.inject` runs them over what `FocusedScores` gives. The
formulas are `core.focused`'s.

A large layer is read through its inverted index (`Narrowed`), not entry by entry, when the
layer's indexed terms allow it; see `Narrowed` and `FocusedScores._lifted`. Held equal to
`reference_focused` (tests/core/test_focused.py) both ways (`narrow_min`)."""

from __future__ import annotations

import heapq
import math
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from itertools import chain, compress, count, islice, repeat
from operator import ge
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from . import focused
from .bitmaps import bitmap, flags, positions
from .candidates import Candidate, inactive_status
from .focused import Why
from .model import IMPORTANCE_RANK, CandidateStatus, Entry

if TYPE_CHECKING:
    from .candidates import LayerCandidates
    from .injection import LineMaker
    from .injection_scores import ExtraScores
    from .relevance import Focus

FOCUSED_NARROW_MIN = 256  # a layer of this many entries or more is narrowed (`Narrowed`) when it can be
BELOW_GATE, MAX_ITEMS, UNREVIEWED = CandidateStatus.BELOW_GATE, CandidateStatus.MAX_ITEMS, CandidateStatus.UNREVIEWED

# a candidate's scores: (keyword, semantic, lift, relevance, decay, adjusted score, importance)
Scored = tuple[float, "float | None", float, float, "float | None", float, str]


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
        self.q = q
        # each term of Q: the bitmap of the active positions holding it (bit p: position p)
        self.holds = {t: _bits(view.shared(focused.stored_forms(t)), view.n_active) for t in sorted(q)}
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
        f = self._flag(t) if held else b""
        return self.holds[t].bit_count() - sum(1 for p in held if p < len(f) and f[p])

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


class FocusedScores:
    """Steps F2–F8 over every layer at once (F4's df and F7's cut are the message's, across
    layers). `held_back`: each layer's active positions held back at step 2, with their
    statuses; `pinned_ids`: entries pinned by `memtui pin`, pinned like a file's `pinned: true`.
    A layer of `narrow_min` entries or more (`FOCUSED_NARROW_MIN`) whose index allows it is
    read through its postings (`Narrowed`)."""

    def __init__(self, views: Mapping[str, LayerCandidates], query: str,
                 held_back: Mapping[str, tuple[frozenset[int], Mapping[int, CandidateStatus]]],
                 extra: Mapping[str, ExtraScores] | None = None, pinned_ids: frozenset[str] = frozenset(),
                 narrow_min: int | None = None, max_items: Mapping[str, int | None] | None = None):
        self.views = views
        # F2. Candidates: the active entries of each layer, less those held back (unreviewed, out of scope, expired)
        self.in_play: dict[str, list[int]] = {}
        self.held: dict[str, list[int]] = {}
        self.held_as: dict[str, Mapping[int, CandidateStatus]] = {}
        for layer, view in views.items():
            out, self.held_as[layer] = held_back.get(layer, (frozenset(), {}))
            self.in_play[layer] = [p for p in range(view.n_active) if p not in out] if out else list(range(view.n_active))
            self.held[layer] = sorted(out)
        # F3. Terms
        q = self.q = focused.content_terms(query)
        given = extra or {}
        self.semantic = {layer: (list(e.semantic) if e is not None and e.semantic is not None else None)
                         for layer in views for e in (given.get(layer),)}
        self.decay = {layer: (list(e.decay) if e is not None and e.decay is not None else None)
                      for layer in views for e in (given.get(layer),)}
        least = FOCUSED_NARROW_MIN if narrow_min is None else narrow_min
        self.narrow: dict[str, Narrowed] = {}
        for layer, view in views.items():
            found = Narrowed.of(view, q, pinned_ids) if view.size >= least else None
            if found is not None:
                self.narrow[layer] = found
        entries = {layer: [view.entry(p) for p in range(view.size)] for layer, view in views.items()
                   if layer not in self.narrow}
        self.entries = entries
        self.pinned = {layer: [e.pinned or e.id in pinned_ids for e in es] for layer, es in entries.items()}
        self.memory_terms = {layer: [_content_terms(e) for e in es] for layer, es in entries.items()}
        # F4. Keyword: each query term weighed by how rare it is among the candidates in play
        n = sum(map(len, self.in_play.values()))
        df = focused.document_frequency((self.memory_terms[layer][p] for layer, ps in self.in_play.items()
                                         if layer not in self.narrow for p in ps), q)
        for layer, nw in self.narrow.items():
            for t in q:
                df[t] += nw.df(t, self.held[layer])
        self.weight = {t: focused.idf(df[t], n) for t in q}
        # F5. Relevance: the semantic score (§13, when given) lifts the keyword score
        known: list[float] = []
        for layer, ps in self.in_play.items():
            sem = self.semantic[layer]
            if sem is not None:  # every active position in play, or some held back
                known += sem[:len(ps)] if len(ps) == views[layer].n_active else [sem[p] for p in ps]
        self.base = focused.lower_median(known)
        # F7. ... in the user and project layers, the closest in meaning (with the semantic score)
        self.near = {layer: self._nearest(layer, sems) if layer in focused.NEAREST_LAYERS and sems is not None else None
                     for layer in views for sems in (self.semantic[layer],)}
        # the positions that can score above 0: every one, or in a narrowed layer those sharing a term of Q,
        # lifted to the floor, or listed apart (the rest score 0, or under the floor on meaning alone)
        self.scorable: dict[str, Container[int]] = {layer: range(view.size) for layer, view in views.items()}
        for layer, nw in self.narrow.items():
            lifted = bitmap(sorted(self._lifted(layer)), nw.n_active)
            self.scorable[layer] = Scorable(nw.sharing | lifted, nw.pinned.union(self.held[layer], nw.archived))
        self._keyword: dict[frozenset[str], float] = {}  # few distinct Q ∩ M: each one's keyword score found once
        self.scored: dict[str, dict[int, Scored]] = {layer: {} for layer in views}
        # A narrowed layer's in play and not pinned are walked in relevance order (F4, F5: `ByRelevance`):
        # F6's score is at most the relevance × its importance factor (`_reach`), so it is found only for
        # those that could set F7's best or pass its cut; the others are scored when listed.
        orders: dict[str, ByRelevance] = {}
        for layer in views:
            if layer not in self.narrow:
                for p in range(views[layer].size):
                    self._scored(layer, p)
                continue
            nw, scorable = self.narrow[layer], self.scorable[layer]
            assert isinstance(scorable, Scorable)
            apart = scorable.others  # pinned, held back or archived
            for p in sorted(apart):
                self._scored(layer, p)
            parts = nw.parts(scorable.bits & ~bitmap(sorted(p for p in apart if p < nw.n_active), nw.n_active),
                             self.weight)
            orders[layer] = ByRelevance(parts, self.semantic[layer], self.base)
        # F7. Cut-off: relative to the best adjusted score of the message (pinned ones aside)
        best = 0.0
        for layer, sc in self.scored.items():
            out, n_active = frozenset(self.held[layer]), views[layer].n_active
            for p, got in sc.items():
                if p < n_active and p not in out and not self.is_pinned(layer, p):
                    best = max(best, got[5])
        for neg, layer, p in heapq.merge(*(_tagged(layer, order) for layer, order in orders.items())):
            if _reach(-neg) < best:
                break
            if _reach(-neg, views[layer].rank[p]) >= best:  # else its importance keeps it under the best
                best = max(best, self._scored(layer, p)[5])
        self.cut = focused.cut_off(self._best_of_the_rest(best))
        for layer, near in self.near.items():
            if near is not None:
                self._scored(layer, near)
        # Those that can pass F7 are scored, but in a layer with a limit (F9), not one that at least
        # that many passing candidates outrank whatever its score: it is past max items (`listed`).
        ahead = {layer: self._passing_ahead(layer, limit) for layer, limit in (max_items or {}).items()
                 if layer in self.narrow and limit is not None}
        for layer, order in orders.items():
            sc, top, rank, cut = self.scored[layer], ahead.get(layer), views[layer].rank, self.cut
            highest = _highest_factor(rank, views[layer].n_active)
            for rel, p in order:
                if rel < focused.FLOOR or _reach(rel, factor=highest) < cut:
                    break  # and so is every one after it: their relevance is no higher
                if p in sc:  # scored already (and counted in `ahead`)
                    continue
                reach = _reach(rel, rank[p])
                if reach < cut:  # its importance keeps it under the cut
                    continue
                if top is not None and (top[0] <= 0 or len(top[1]) >= top[0] and top[1][0][0] > _reach(rel, factor=highest)):
                    break  # and so is every one after it: their reach is no higher, the heap's least no lower
                if top is not None and len(top[1]) >= top[0] and top[1][0] > (reach, rel, -p):
                    continue  # at least max items' worth come before it in F8's order, whatever its score
                self._scored(layer, p)
                if top is not None and self.passes(layer, p):
                    _keep_highest(top, (sc[p][5], rel, -p))
        self.scopes = {layer: views[layer].scoped() for layer in views}  # SPEC §16: a scoped file's globs

    def _passing_ahead(self, layer: str, limit: int) -> tuple[int, list[tuple[float, float, int]]]:
        """For F9's `limit` in a narrowed layer: how many of its passing candidates that are not
        pinned can still come before max items (the pinned come first), and the F8 keys of the
        best of those found so far (`_keep_highest`: a heap, the lowest first)."""
        held, n_active = set(self.held[layer]), self.views[layer].n_active
        room = limit - sum(1 for p in self.narrow[layer].pinned if p < n_active and p not in held)
        top: tuple[int, list[tuple[float, float, int]]] = (room, [])
        for p, found in self.scored[layer].items():
            if p < n_active and p not in held and not self.is_pinned(layer, p) and self.passes(layer, p):
                _keep_highest(top, (found[5], found[3], -p))
        return top

    def _lifted(self, layer: str) -> set[int]:
        """A narrowed layer's entries that, sharing no term of Q, can still pass F7 on meaning
        alone: a semantic lift of at least the floor (their relevance is their lift), and the
        layer's nearest. Those sharing no term and lifted less cannot pass: not scored until
        listed. Without the semantic score, none (they all score 0)."""
        sems = self.semantic[layer]
        if sems is None:
            return set()
        near, out, base = self.near[layer], frozenset(self.held[layer]), self.base
        least = base + (focused.FLOOR - 0.001) * (1.0 - base)  # below it, a lift rounds under the floor
        sure = base + (focused.FLOOR + 0.001) * (1.0 - base) if base < 1.0 else 2.0  # from it, it rounds to the floor or over
        over = compress(range(self.views[layer].n_active), map(ge, sems, repeat(least)))  # in C: few pass
        lifted = {p for p in over if p not in out and (sems[p] >= sure or focused.semantic_lift(sems[p], base) >= focused.FLOOR)}
        return lifted if near is None else lifted | {near}

    def _nearest(self, layer: str, sems: Sequence[float]) -> int | None:
        """F7's nearest in meaning of a layer (`focused.nearest`): of its candidates in play and
        not pinned, the first of the highest semantic score, found in C."""
        ps = self.in_play[layer]
        nw = self.narrow.get(layer)
        pinned = nw.pinned if nw is not None else frozenset(compress(count(), self.pinned[layer]))
        if not pinned.isdisjoint(ps):
            ps = [p for p in ps if p not in pinned]
        if not ps:
            return None
        top = max(map(sems.__getitem__, ps))
        pos = ps[list(map(sems.__getitem__, ps)).index(top)]
        return focused.nearest([(pos, top, focused.semantic_lift(top, self.base))])

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

        rest = [(sems[p], layer, p) for layer in self.narrow for sems in (self.semantic[layer],) if sems is not None
                for p in self.in_play[layer] if p not in self.scorable[layer]]
        if not rest or reach(max(rest)[0]) < best:
            return best
        for sem, layer, p in sorted(rest, key=lambda r: -r[0]):
            if reach(sem) < best:
                break
            best = max(best, self._scored(layer, p)[5])
        return best

    def _scored(self, layer: str, pos: int) -> Scored:
        """A candidate's F4–F6 scores, found once (a narrowed layer's rest when first asked)."""
        sc = self.scored[layer]
        found = sc.get(pos)
        if found is None:
            found = sc[pos] = self._score(layer, pos)
        return found

    def is_pinned(self, layer: str, pos: int) -> bool:
        nw = self.narrow.get(layer)
        return pos in nw.pinned if nw is not None else self.pinned[layer][pos]

    def _terms(self, layer: str, pos: int) -> frozenset[str]:
        nw = self.narrow.get(layer)
        return nw.terms(pos) if nw is not None else self.memory_terms[layer][pos]

    def _importance(self, layer: str, pos: int) -> str:
        return self.views[layer].shown(pos).importance if layer in self.narrow else self.entries[layer][pos].importance

    def _relevance(self, layer: str, pos: int) -> tuple[float, float | None, float, float]:
        """F4, F5 for one candidate: (keyword, semantic, lift, relevance)."""
        q = self.q
        kw = self._keyword_of(q & self._terms(layer, pos))
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

    def _score(self, layer: str, pos: int) -> Scored:
        """F4–F6 for one candidate."""
        kw, sem, lift, rel = self._relevance(layer, pos)
        decays = self.decay[layer]
        dec = decays[pos] if decays is not None else None
        imp = self._importance(layer, pos)
        return kw, sem, lift, rel, dec, focused.adjusted(rel, imp, dec, self.is_pinned(layer, pos)), imp

    def ranked(self, layer: str) -> list[int]:
        """F8. Order: pinned first, then the adjusted score, the relevance, the base order. In
        a narrowed layer, only those passing F7 (what steps F9–F12 read; `listed` orders the
        rest)."""
        sc = self.scored[layer]
        if layer in self.narrow:
            return sorted((p for p in self.in_play[layer] if p in sc and self.passes(layer, p)),
                          key=lambda p: self._key(layer, p))
        return sorted(self.in_play[layer], key=lambda p: self._key(layer, p))

    def _key(self, layer: str, p: int) -> tuple[bool, float, float, int]:
        found = self._scored(layer, p)
        return not self.is_pinned(layer, p), -found[5], -found[3], p

    def passes(self, layer: str, pos: int) -> bool:
        """F7: pinned, its layer's nearest in meaning, or relevant enough and above the cut."""
        found = self._scored(layer, pos)
        return focused.passes(found[3], found[5], self.cut, self.is_pinned(layer, pos), pos == self.near[layer])

    def why(self, layer: str, p: int) -> Why:
        found = self.scored[layer].get(p)
        if found is None and (self.semantic[layer] is not None or p in self.scorable[layer]):
            found = self._scored(layer, p)  # a narrowed layer's: scored when listed
        if found is None:  # a narrowed layer's entry sharing no term (F4-F6: all 0) and not pinned
            decays = self.decay[layer]
            dec = decays[p] if decays is not None else None
            imp = self._importance(layer, p)
            found = (0.0, None, 0.0, 0.0, dec, focused.adjusted(0.0, imp, dec, False), imp)
        kw, sem, lift, rel, dec, score, imp = found
        globs = self.scopes[layer].get(p)
        scope = f"paths: {', '.join(globs)}" if globs else "workspace"
        return Why(kw, sem, lift, rel, imp, dec, self.is_pinned(layer, p), score, self.cut, scope, p == self.near[layer])

    def included(self, layer: str, maker: LineMaker, pos: int, score: float) -> Candidate:
        """An included candidate (`LayerFill.make`): its score is F6's."""
        return self.candidate(layer, pos, CandidateStatus.INCLUDED, maker)

    def candidate(self, layer: str, pos: int, status: CandidateStatus, maker: LineMaker) -> Candidate:
        w = self.why(layer, pos)
        return Candidate(self.views[layer], pos, w.score, status, maker, None, w)

    def listed(self, layer: str, ranked: list[int], statuses: Mapping[int, Candidate], maker: LineMaker) -> list[Candidate]:
        """The layer's candidates: in play in F8's order (`ranked`; in a narrowed layer every
        one, those scoring 0 and not pinned last in base order), `below_gate` unless passing
        (`statuses`); then the held back and the archived, by score."""
        view, sc = self.views[layer], self.scored[layer]
        order: Iterable[int] = ranked
        if layer in self.narrow and self.semantic[layer] is not None:  # the rest score too: every one in F8's order
            order = sorted(self.in_play[layer], key=lambda p: self._key(layer, p))
        elif layer in self.narrow:  # those scoring above 0 or pinned in F8's order, then the rest in base order
            scorable = self.scorable[layer]
            head = sorted((p for p in self.in_play[layer] if p in scorable
                           and (self.is_pinned(layer, p) or self._scored(layer, p)[5] or sc[p][3])),
                          key=lambda p: self._key(layer, p))
            first = set(head)
            order = chain(head, (p for p in self.in_play[layer] if p not in first))
        # not decided: below the gate, or passing but outranked by max items' worth (never scored then)
        out = [statuses.get(p) or self.candidate(layer, p, MAX_ITEMS if self.passes(layer, p) else BELOW_GATE, maker)
               for p in order]
        held_as = self.held_as[layer]
        out += [self.candidate(layer, p, held_as.get(p, UNREVIEWED), maker)
                for p in sorted(self.held[layer], key=lambda p: (-sc[p][5], p))]
        out += [self.candidate(layer, p, inactive_status(view, p), maker)
                for p in sorted(range(view.n_active, view.size), key=lambda p: (-sc[p][5], p))]
        return out


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
        sems = self.semantic
        if sems is None:
            if self._by is None:
                by: dict[float, list[Sequence[int]]] = {}
                for kw, ps in self.parts:
                    by.setdefault(focused.relevance(kw, 0.0), []).append(ps)
                self._by = sorted(by.items(), reverse=True)
            for rel, runs_of in self._by:
                yield from zip(repeat(rel), sorted(chain.from_iterable(runs_of)))
            return
        if self._walk is None and len(self.parts) * 4 > sum(len(ps) for _, ps in self.parts):
            # small parts (a long message): every position at once
            self._walk = [(-neg, p) for neg, p in sorted((-self.relevance(kw, sems[p]), p)
                                                          for kw, ps in self.parts for p in ps)]
        if self._walk is not None:
            yield from self._walk
            return
        # (−relevance, position, part): a part not yet sorted stands on the heap as its best, position −1
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


def _tagged(layer: str, order: ByRelevance) -> Iterator[tuple[float, str, int]]:
    """`order` as (−relevance, layer, position), to merge the layers' walks."""
    for rel, p in order:
        yield -rel, layer, p


def _bits(shared: Mapping[int, int], n_active: int) -> int:
    """The bitmap of the positions of a layer's `shared` (its own, when it counts in bitmaps)."""
    return shared.any if isinstance(shared, Bitmapped) else bitmap(sorted(shared), n_active)


def _keep_highest(top: tuple[int, list[tuple[float, float, int]]], key: tuple[float, float, int]) -> None:
    """Add `key` (score, relevance, −position: F8's order, the first highest) to the heap
    `top[1]`, which keeps the `top[0]` highest."""
    room, heap = top
    if room <= 0:
        return
    if len(heap) < room:
        heapq.heappush(heap, key)
    elif key > heap[0]:
        heapq.heapreplace(heap, key)


_TOP_FACTOR = max(focused.IMPORTANCE_FACTOR.values())
# F6's importance factor of each importance rank (`IMPORTANCE_RANK`: an importance it does not name
# ranks as normal, and F6 weighs it as normal)
_RANK_FACTOR = {IMPORTANCE_RANK[importance]: f for importance, f in focused.IMPORTANCE_FACTOR.items()}


def _reach(relevance: float, rank: int | None = None, factor: float | None = None) -> float:
    """The highest F6 score a candidate of this relevance can have (no decay; of the importance
    of this rank, or at most this `factor`, else the highest importance): it cannot set F7's
    best or pass the cut under it."""
    if factor is None:
        factor = _TOP_FACTOR if rank is None else _RANK_FACTOR.get(rank, _TOP_FACTOR)
    return round(relevance * factor, focused.DIGITS)


def _highest_factor(rank: Sequence[int], n_active: int) -> float:
    """The highest importance factor of a layer's active positions (from their ranks)."""
    return max((_RANK_FACTOR.get(r, _TOP_FACTOR) for r in set(islice(rank, n_active))), default=_TOP_FACTOR)


def _content_terms(e: Entry) -> frozenset[str]:
    return focused.entry_content_terms(e.text, e.section, e.name, e.description, e.tags)
