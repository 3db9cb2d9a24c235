"""The injection (SPEC §5, exact): what Muse appends to its system prompt for a message.

The rule alone, in the SPEC's order, one place per step:

  1. Switch ......... `inject`, first lines
  2. Candidates ..... `LayerCandidates` (what the rule reads of a layer), `EntryLayer`
  3. Terms .......... `relevance.terms`
  4. Score .......... `relevance.share`
  5. Gate ........... `passes_gate`
  6. Order .......... `base_key`, `LayerCandidates.in_order`, `archived_order`
  7. Max items ...... `over_max_items`
  8. Lines .......... `make_line`
  9. Cost ........... `est`, `block_cost`
 10. Budget ......... `Budget`, `LayerFill`
 11. Render ......... `render`
 12. Flags .......... `disabled_reason`, the end of `inject`

SPEC §13 (opt-in): `ExtraScores` hands the rule, per layer, semantic scores and decay factors
computed elsewhere (`core.retrieval`); `FloatScores` then gives steps 4–6 as floats (score =
max(keyword, semantic), the gate on it, the order on it times the decay). Without them the
rule is §5 exactly, on the paths above.

Scope (SPEC §16): one step after the candidates are found, `scope.left_out`: the entries of a
scoped file (`paths:`) whose globs match no file in context leave the candidates like the
unreviewed ones and are listed with the status `out_of_scope`, their globs in the reason. A
layer without scoped entries is not touched (the files in context are not even looked for).

Review (SPEC §12): with `memory.requireReview`, the ids of unreviewed entries are passed as
`unreviewed`; in step 2 they leave the candidates that can be injected and are listed with the
status `unreviewed` (after the active candidates of their layer, before the archived ones),
whatever their keyword or semantic score.

How a layer's candidates are found fast (an inverted index over the terms, each line made
once, the state kept between processes) is not here: `core.store.layer_index` implements
`LayerCandidates` for that, and `core.serve` answers a workspace from it. Both import this
module; it imports neither (an import-linter contract says so).
"""

from __future__ import annotations

import heapq
import json
import logging
import math
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, groupby
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast

from .model import IMPORTANCE_RANK, LAYERS, CandidateStatus, Entry, Layer, RetrievalStatus
from .outbound import redact_line as redact
from .outbound import redact_lines
from .paths import Problem
from .relevance import score as relevance_score
from .relevance import share, terms, terms_of
from .scope import Context, Files
from .scope import left_out as out_of_scope
from .scope import reason as scope_reason
from .settings import Settings

if TYPE_CHECKING:  # focused injection's module is imported when that mode is on (the §5 hook never loads it)
    from .focused import Why
    from .relevance import Focus

log = logging.getLogger("memtui.injection")

TITLE = "## Memory"
HEADERS: dict[str, str] = {Layer.USER: "### User Preferences", Layer.PROJECT: "### Project Knowledge",
           Layer.CONVERSATION: "### Relevant Context"}
ELLIPSIS = "…"

INCLUDED, BELOW_GATE, MAX_ITEMS, BUDGET, ARCHIVED = (CandidateStatus.INCLUDED, CandidateStatus.BELOW_GATE,
                                                     CandidateStatus.MAX_ITEMS, CandidateStatus.BUDGET,
                                                     CandidateStatus.ARCHIVED)
UNREVIEWED = CandidateStatus.UNREVIEWED
OUT_OF_SCOPE = CandidateStatus.OUT_OF_SCOPE
SUPERSEDED = CandidateStatus.SUPERSEDED


def inactive_status(view: LayerCandidates, pos: int) -> CandidateStatus:
    """Step 2: a candidate that is not active is listed `archived`, or `superseded` when §17's
    `supersede` replaced it."""
    return SUPERSEDED if view.entry(pos).superseded_by else ARCHIVED
EXPIRED = CandidateStatus.EXPIRED

class Made(NamedTuple):
    """A line made of an entry's text (steps 8 and 9). The prepared index saves it as a plain
    tuple (marshal takes no subclass) and gives it its names back when it reads it."""

    line: str
    clipped: bool
    redacted: int  # secrets redacted in it
    tokens: int


_MADE: Callable[[tuple[str, bool, int, int]], Made] = partial(tuple.__new__, Made)  # a tuple named, in C


class Shown(NamedTuple):
    """What a candidate shows of its entry (`preview --json`), readable without the entry.
    Saved as a plain tuple, like `Made`."""

    id: str
    source: str  # the entry's `source_ref`
    importance: str
    updated_at: str  # ISO


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
        """`[self.made(text) for text in texts]`, made in bulk: the whitespace of every text
        joined by C loops, and only the lines that can hold a secret handed to the redaction."""
        ones = list(map(" ".join, map(str.split, texts)))
        counts = [0] * len(ones)
        if self.redact_secrets:
            for at, (line, n) in redact_lines(ones).items():
                ones[at], counts[at] = line, n
        limit = self.max_chars
        clipped = [len(one) > limit for one in ones]
        if any(clipped):
            ones = [one[: limit - 1] + ELLIPSIS if cut else one for one, cut in zip(ones, clipped)]
        lines = list(map("- ".__add__, ones))
        tokens = [-(-len(line) // 4) if line.isascii() else est(line) for line in lines]  # `est`, inline for ASCII
        return list(map(_MADE, zip(lines, clipped, counts, tokens)))


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


# ---------------------------------------------------------------------- 2. Candidates
class LayerCandidates(Protocol):
    """One layer's candidates as the rule reads them. Positions `0 .. n_active-1` are the
    active entries in base order (`base_key`), `n_active .. size-1` the archived ones."""

    layer: str
    n_active: int
    size: int

    @property
    def rank(self) -> Sequence[int]:
        """The importance rank of each position."""
        ...

    def shared(self, q: frozenset[str]) -> Mapping[int, int]:
        """`|Q ∩ M|` of each active position sharing a term with the query (the others share none)."""
        ...

    def in_order(self, shared: Mapping[int, int], scored_only: bool) -> Iterator[tuple[int, Sequence[int]]]:
        """Active positions in step-6 order (importance, score descending, base order), as runs
        of positions that share as many terms with the query: (`|Q ∩ M|`, positions). With
        `scored_only`, only the positions in `shared`."""
        ...

    def archived_terms(self, pos: int) -> frozenset[str]: ...

    def scoped(self) -> Mapping[int, Sequence[str]]:
        """The active positions whose entry's file is scoped (SPEC §16), with its globs."""
        ...

    def positions_of(self, ids: frozenset[str]) -> frozenset[int]:
        """The active positions whose entry id is in `ids` (archived entries stay archived)."""
        ...

    def review_fields(self, pos: int) -> tuple[str, str, str, str]:
        """(layer, id, text, source) of a position, for the review check (SPEC §12)."""
        ...

    def entry(self, pos: int) -> Entry: ...

    def shown(self, pos: int) -> Shown:
        """What a candidate shows of its entry."""
        ...

    def made(self, pos: int, maker: LineMaker) -> Made: ...

    def candidate_json(self, pos: int, maker: LineMaker) -> tuple[str, str] | None:
        """The candidate's JSON before its score and after its status, when kept ready."""
        ...

    def candidate_jsons(self, positions: Sequence[int], maker: LineMaker) -> Iterable[tuple[str, str]] | None:
        """`candidate_json` of each of `positions`, when kept ready (else None)."""
        ...

    def candidate_json_bytes(self, positions: Sequence[int], maker: LineMaker, middle: bytes) -> Iterable[bytes] | None:
        """`", ".join(before + middle + after)` of `positions`' JSON pieces, UTF-8, in pieces,
        when kept ready as bytes (else None)."""
        ...

    def preload(self, maker: LineMaker, as_json: bool) -> None:
        """Get ready to produce every candidate's JSON (`as_json`) or line: read what is saved at once."""
        ...


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
        from .relevance import focus_of

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

    def candidate_json(self, pos: int, maker: LineMaker) -> None:
        return None

    def candidate_jsons(self, positions: Sequence[int], maker: LineMaker) -> None:
        return None

    def candidate_json_bytes(self, positions: Sequence[int], maker: LineMaker, middle: bytes) -> None:
        return None

    def preload(self, maker: LineMaker, as_json: bool) -> None:
        pass


def archived_order(view: LayerCandidates, q: frozenset[str]) -> list[tuple[float, int]]:
    """The archived candidates, scored and in step-6 order, listed last in their layer."""
    scored = [(relevance_score(q, view.archived_terms(p)), p) for p in range(view.n_active, view.size)]
    scored.sort(key=lambda t: (view.rank[t[1]], -t[0], t[1]))
    return scored


# ---------------------------------------------------------------------- the result
def candidate_fields(entry_id: str, layer: str, source: str, score: float | None, status: str,
                     made: Made, importance: str, updated_at: str, parts: tuple[float, float] | None = None) -> dict[str, object]:
    """A candidate as `preview --json` prints it (SPEC §5): the one definition. In hybrid
    retrieval (§13) `parts` = (keyword, semantic) follow the score."""
    line, clipped, _, tokens = made  # unpacked: a saved (plain) tuple reads the same
    if parts is not None:
        return {"id": entry_id, "layer": layer, "source": source, "score": score, "keyword": parts[0],
                "semantic": parts[1], "status": status, "clipped": clipped, "tokens": tokens, "line": line,
                "importance": importance, "updated_at": updated_at}
    return {"id": entry_id, "layer": layer, "source": source, "score": score, "status": status,
            "clipped": clipped, "tokens": tokens, "line": line, "importance": importance, "updated_at": updated_at}


# ---------------------------------------------------------------------- §13: scores from outside
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

    def passing(self, gate: float, held: frozenset[int] = frozenset()) -> int:
        """Active positions scoring at least the gate, the unreviewed ones left out."""
        score = self.score
        return sum(1 for p in range(self.n_active) if p not in held and passes_gate(score[p], gate))

    def best(self, held: frozenset[int] = frozenset()) -> float:
        """The best active score, the unreviewed ones left out."""
        if not held:
            return max(self.score[: self.n_active], default=0.0)
        return max((self.score[p] for p in range(self.n_active) if p not in held), default=0.0)


class Candidate:
    """One entry's fate in an injection: where it is in its layer, its score and status. The
    entry, its line and cost are looked up in the layer when asked for."""

    __slots__ = ("view", "pos", "score", "status", "_maker", "parts", "why")

    def __init__(self, view: LayerCandidates, pos: int, score: float, status: CandidateStatus, maker: LineMaker,
                 parts: tuple[float, float] | None = None, why: Why | None = None):
        self.view = view
        self.pos = pos
        self.score = score
        self.status = status
        self._maker = maker
        self.parts = parts  # (keyword, semantic) in hybrid retrieval (§13), else None
        self.why = why  # the parts of the score in focused injection (§15), else None

    @property
    def entry(self) -> Entry:
        return self.view.entry(self.pos)

    @property
    def id(self) -> str:
        """The entry's id, read without making the entry."""
        return self.view.shown(self.pos).id

    @property
    def source(self) -> str:
        """The entry's `source_ref` (`path:line`, `conversation:<cid>/<id>`), read without making the entry."""
        return self.view.shown(self.pos).source

    @property
    def layer(self) -> str:
        return self.view.layer

    @property
    def line(self) -> str:
        return self.view.made(self.pos, self._maker).line

    @property
    def clipped(self) -> bool:
        return self.view.made(self.pos, self._maker).clipped

    @property
    def redacted(self) -> int:
        return self.view.made(self.pos, self._maker).redacted

    @property
    def tokens(self) -> int:
        return self.view.made(self.pos, self._maker).tokens

    @property
    def reason(self) -> str | None:
        """Why an `out_of_scope` candidate is left out: its file's globs (SPEC §16); else None."""
        if self.status != OUT_OF_SCOPE:
            return None
        return scope_reason(self.view.scoped().get(self.pos, ()))

    def as_dict(self) -> dict[str, object]:
        shown = self.view.shown(self.pos)
        fields = candidate_fields(shown.id, self.view.layer, shown.source, self.score, self.status,
                                  self.view.made(self.pos, self._maker), shown.importance, shown.updated_at, self.parts)
        if self.status == OUT_OF_SCOPE:
            fields["reason"] = self.reason
        if self.why is not None:
            fields["why"] = self.why.as_dict()
        return fields


@dataclass
class InjectionResult:
    workspace: str
    query: str
    enabled: bool
    text: str = ""
    count: int = 0
    truncated: bool = False
    tokens: int = 0
    chars: int = 0
    retrieval_ms: float = 0.0
    disabled_reason: str | None = None
    budget: dict[str, int] = field(default_factory=dict)
    redacted: int = 0
    errors: list[Problem] = field(default_factory=list)
    enabled_why: str = ""
    included: list[Candidate] = field(default_factory=list)
    layer_budget: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # layer: (used, allowance, carry in)
    retrieval: RetrievalStatus | None = None  # §13, shown only when hybrid retrieval was asked for
    now: str | None = None  # §13 decay: the time ages were measured at (ISO), shown only with decay on
    files: tuple[str, ...] | None = None  # §16: the files in context, shown when given or looked for
    # §18, with decay on: id -> (strength, level) of every candidate, added to each in `preview --json`
    strengths: dict[str, tuple[float, str]] | None = None
    _plan: _Plan | None = field(default=None, repr=False)
    _candidates: list[Candidate] | None = field(default=None, repr=False)
    _lazy: Callable[[], list[Candidate]] | None = field(default=None, repr=False)  # makes `_candidates` when asked
    _status_counts: dict[str, int] | None = field(default=None, repr=False)

    @property
    def injected(self) -> bool:
        return self.count > 0

    def iter_candidates(self) -> Iterator[Candidate]:
        """Every candidate in layer order then sort order (archived last in their layer),
        produced as needed: the first few cost little even when there are tens of thousands."""
        if self._candidates is None and self._lazy is not None:
            self._candidates, self._lazy = self._lazy(), None
        if self._candidates is not None:
            yield from self._candidates
        elif self._plan is not None:
            for view, pos, score, status, parts in self._plan.decisions():
                yield Candidate(view, pos, score, status, self._plan.maker, parts)

    def status_counts(self) -> dict[str, int]:
        """How many candidates got each status (only those with any), as counting
        `iter_candidates()` would give, without producing the candidates."""
        if self._status_counts is None:
            if self._candidates is not None or self._plan is None:
                self._status_counts = dict(Counter(c.status for c in self.iter_candidates()))
            else:
                self._status_counts = self._plan.status_counts(self.included)
        return dict(self._status_counts)

    @property
    def candidates(self) -> list[Candidate]:
        if self._candidates is None:
            self._candidates = list(self.iter_candidates())
        return self._candidates

    def summary(self) -> str:
        """The fold title: `3 memories injected · 412/2000 tokens · truncated`."""
        if self.disabled_reason == "switch_off":
            return "memory is off for this workspace · `memtui enable` turns it on"
        if self.disabled_reason == "private":
            return "private mode: nothing is injected or recorded · `memtui private off` ends it"
        noun = "memory" if self.count == 1 else "memories"
        parts = [f"{self.count} {noun} injected", f"{self.tokens}/{self.budget.get('total', 0)} tokens"]
        if self.truncated:
            parts.append("truncated")
        if self.count == 0 and self.disabled_reason:
            parts.append(self.disabled_reason.replace("_", " "))
        return " · ".join(parts)

    def as_dict(self, candidates: bool = True) -> dict[str, object]:
        data: dict[str, object] = {
            "workspace": self.workspace,
            "query": self.query,
            "enabled": self.enabled,
            "injected": self.injected,
            "disabled_reason": self.disabled_reason,
            "count": self.count,
            "truncated": self.truncated,
            "tokens": self.tokens,
            "chars": self.chars,
            "retrieval_ms": round(self.retrieval_ms, 3),
            "budget": dict(self.budget),
            "redacted": self.redacted,
            "text": self.text,
            "errors": [p.as_dict() for p in self.errors],
        }
        if self.retrieval is not None:
            data["retrieval"] = self.retrieval
        if self.now is not None:
            data["now"] = self.now
        if self.files is not None:
            data["files"] = list(self.files)
        if candidates:
            data["candidates"] = [self._with_strength(c.as_dict()) for c in self.iter_candidates()]
        return data

    def _with_strength(self, candidate: dict[str, object]) -> dict[str, object]:
        """SPEC §18: a candidate's strength and level, after its own fields, when decay is on."""
        if self.strengths is not None:
            found = self.strengths.get(str(candidate["id"]))
            if found is not None:
                candidate["strength"], candidate["level"] = round(found[0], 4), found[1]
        return candidate

    def to_json(self) -> str:
        """`json.dumps(self.as_dict(), ensure_ascii=False)`, byte for byte; each candidate
        from the JSON its layer keeps ready around the score and status, when it does."""
        return "".join(self.json_pieces())

    def json_pieces(self) -> list[str]:
        """`to_json()` in pieces, to be written one after the other: tens of thousands of
        candidates make tens of megabytes, which are then never joined into one string.
        Everything is read before the list is returned (a damaged section raises here)."""
        if self.strengths is not None:  # §18: every candidate made whole (decay read every entry anyway)
            return [json.dumps(self.as_dict(), ensure_ascii=False)]
        self._preload()
        return cast(list[str], list(self._json_parts(utf8=False)))

    def json_bytes(self) -> Iterator[bytes]:
        """`to_json()` as UTF-8 (a lone surrogate as `surrogateescape` writes it), in pieces
        made as they are written: a layer's candidates kept as UTF-8 records are joined as
        bytes, never decoded, and never all held at once. What is saved is read (and checked:
        a damaged section raises) before this returns."""
        if self.strengths is not None:
            return iter([json.dumps(self.as_dict(), ensure_ascii=False).encode("utf-8", "surrogateescape")])
        self._preload()
        return cast(Iterator[bytes], self._json_parts(utf8=True))

    def _preload(self) -> None:
        if self._candidates is None and self._plan is not None:
            for view, _, _ in self._plan.layers:
                view.preload(self._plan.maker, as_json=True)

    def _json_parts(self, utf8: bool) -> Iterator[str | bytes]:
        """The pieces of `to_json()`, as text or (`utf8`) as bytes."""
        def text(piece: str) -> str | bytes:
            return piece.encode("utf-8", "surrogateescape") if utf8 else piece

        sep = text(", ")
        head = json.dumps(self.as_dict(candidates=False), ensure_ascii=False)
        yield text(head[:-1] + ', "candidates": [')
        first = True
        if self._candidates is not None or self._plan is None:
            for c in self.iter_candidates():
                if not first:
                    yield sep
                first = False
                yield text(json.dumps(c.as_dict(), ensure_ascii=False))
        else:
            maker = self._plan.maker
            scores: dict[float, str] = {}  # few distinct scores: format each once
            for view, run, score, status, parts in self._plan.runs():
                if not run:
                    continue
                shown = scores.get(score)
                if shown is None:
                    shown = scores[score] = json.dumps(score)
                middle = shown + ', "status": "' + status
                if not first:
                    yield sep
                first = False
                if status != OUT_OF_SCOPE and parts is None and utf8:  # each candidate's JSON around `middle`
                    ready_bytes = view.candidate_json_bytes(run, maker, middle.encode())
                    if ready_bytes is not None:
                        yield from ready_bytes
                        continue
                ready = view.candidate_jsons(run, maker) if status != OUT_OF_SCOPE else None
                if ready is None:  # (an out-of-scope candidate has its reason too)
                    yield text(", ".join(json.dumps(Candidate(view, pos, score, status, maker, parts).as_dict(),
                                                    ensure_ascii=False) for pos in run))
                elif parts is None:  # each candidate: its JSON before the score, score and status, its JSON after
                    yield text(", ".join(map(middle.join, ready)))
                else:  # hybrid retrieval: the two scores follow (`candidate_fields`)
                    middle = f'{shown}, "keyword": {json.dumps(parts[0])}, "semantic": {json.dumps(parts[1])}, "status": "{status}'
                    yield text(", ".join(map(middle.join, ready)))
        yield text("]}")


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
    """Steps 5, 7, 8, 9 and 10 for one layer, in order, one candidate at a time."""

    def __init__(self, view: LayerCandidates, shared: Mapping[int, int], nq: int, settings: Settings,
                 allowance: int, maker: LineMaker, floats: FloatScores | None = None,
                 held: frozenset[int] = frozenset()):
        self.view = view
        self.floats = floats
        self.held = held  # positions left out of the candidates as unreviewed (SPEC §12)
        self.shared = shared
        self.nq = nq
        self.gate = settings.gate.get(view.layer, 0.0)
        self.limit = settings.max_items.get(view.layer)
        self.allowance = allowance
        self.maker = maker
        self.header = est(HEADERS[view.layer])
        self.used = 0
        self.passed = 0
        self.fits = True
        self.included: list[Candidate] = []

    def walk(self, everything: bool) -> Iterator[tuple[int, float, CandidateStatus]]:
        """(position, score, status) in order. Unless `everything`, entries that share no term
        while the gate is above 0 are skipped: they are below the gate and change nothing."""
        view, shared, nq, gate, held = self.view, self.shared, self.nq, self.gate, self.held
        scored_only = not everything and gate > 0
        if self.floats is None:
            walked: Iterator[tuple[int, float]] = ((pos, s) for n, run in view.in_order(shared, scored_only)
                                                   for s in (share(n, nq),) for pos in run)
        else:
            score = self.floats.score
            walked = ((pos, score[pos]) for pos in self.floats.in_order(view.rank, scored_only))
        for pos, s in walked:
            if held and pos in held:
                continue
            if not passes_gate(s, gate):
                yield pos, s, BELOW_GATE
                continue
            self.passed += 1
            if over_max_items(self.passed, self.limit):
                yield pos, s, MAX_ITEMS
                continue
            if not self.fits:
                yield pos, s, BUDGET
                continue
            # the first included candidate also pays for the layer's header line
            extra = view.made(pos, self.maker).tokens + (0 if self.included else self.header)
            if self.used + extra <= self.allowance:
                self.used += extra
                self.included.append(Candidate(view, pos, s, INCLUDED, self.maker,
                                               None if self.floats is None else self.floats.parts(pos)))
                yield pos, s, INCLUDED
            else:
                self.fits = False
                yield pos, s, BUDGET

    def runs(self) -> Iterator[tuple[Sequence[int], float, CandidateStatus]]:
        """`walk(everything=True)` as runs of consecutive candidates with one score and status
        (keyword scores, nothing held back: `to_json` writes a run at once). A run that passes
        the gate is walked one candidate at a time while one may still be included; after
        that its statuses follow from the count alone: `budget` up to max items, then
        `max_items`."""
        assert self.floats is None and not self.held
        view, limit, gate = self.view, self.limit, self.gate
        for n, run in view.in_order(self.shared, False):
            s = share(n, self.nq)
            if not passes_gate(s, gate):
                yield run, s, BELOW_GATE
                continue
            i, size = 0, len(run)
            while i < size and self.fits and (limit is None or self.passed < limit):
                pos = run[i]
                i += 1
                self.passed += 1
                extra = view.made(pos, self.maker).tokens + (0 if self.included else self.header)
                if self.used + extra <= self.allowance:
                    self.used += extra
                    self.included.append(Candidate(view, pos, s, INCLUDED, self.maker))
                    yield (pos,), s, INCLUDED
                else:
                    self.fits = False
                    yield (pos,), s, BUDGET
            if i < size:  # nothing more is included: `budget` while max items allows, then `max_items`
                room = size - i if limit is None else max(0, min(size - i, limit - self.passed))
                if room:
                    yield run[i:i + room], s, BUDGET
                if i + room < size:
                    yield run[i + room:], s, MAX_ITEMS
                self.passed += size - i

    def settle(self) -> bool:
        """Walk until nothing later in the layer can be included; True if any candidate got
        `budget`. That is at the first `budget` (nothing fits after it) or once max items
        passed (every later passing candidate is `max_items`, never `budget`)."""
        for _, _, status in self.walk(everything=False):
            if status == BUDGET:
                return True
            if self.limit is not None and self.passed >= self.limit:
                return False
        return False


class _Plan:
    """What was decided, kept so that every candidate can be produced when asked for."""

    def __init__(self, q: frozenset[str], settings: Settings,
                 layers: list[tuple[LayerCandidates, Mapping[int, int], int]], maker: LineMaker,
                 floats: Mapping[str, FloatScores] | None = None,
                 held: Mapping[str, frozenset[int]] | None = None,
                 held_as: Mapping[str, Mapping[int, CandidateStatus]] | None = None):
        self.q = q
        self.settings = settings
        self.layers = layers
        self.maker = maker
        self.floats = floats or {}
        self.held = held or {}  # layer -> active positions held back (unreviewed, out of scope, expired)
        self.held_as = held_as or {}  # layer -> position -> its status, where it is not `unreviewed`

    def held_status(self, layer: str, pos: int) -> CandidateStatus:
        """The status of a position held back: `expired` (SPEC §18), `out_of_scope` (§16), else
        `unreviewed` (§12)."""
        return self.held_as.get(layer, {}).get(pos, UNREVIEWED)

    def status_counts(self, included: list[Candidate]) -> dict[str, int]:
        """The statuses `decisions()` would give, counted from the scores alone: in a layer the
        passing candidates are those scoring at least the gate; the first max items of them
        are included or `budget`, the rest `max_items`."""
        out: Counter[str] = Counter()
        nq = len(self.q)
        included_in = Counter(c.layer for c in included)
        for view, shared, _ in self.layers:
            gate = self.settings.gate.get(view.layer, 0.0)
            limit = self.settings.max_items.get(view.layer)
            floats = self.floats.get(view.layer)
            held = self.held.get(view.layer, frozenset())
            n = view.n_active - len(held)
            held_as = self.held_as.get(view.layer, {})
            out[UNREVIEWED] += len(held) - len(held_as)
            for status in held_as.values():
                out[status] += 1
            if gate <= 0.0:
                passing = n
            elif floats is not None:
                passing = floats.passing(gate, held)
            else:
                # per distinct number of shared terms (a few), not per candidate (tens of thousands)
                histogram = getattr(shared, "histogram", None)  # counted from bitmaps (`LevelCounts`)
                passing = sum(k for v, k in (histogram() if histogram is not None else Counter(shared.values())).items()
                              if passes_gate(share(v, nq), gate))
                if held and nq:
                    passing -= sum(1 for p in held if passes_gate(share(shared.get(p, 0), nq), gate))
            capped = passing if limit is None else min(passing, max(limit, 0))
            out[BELOW_GATE] += n - passing
            out[MAX_ITEMS] += passing - capped
            out[INCLUDED] += included_in[view.layer]
            out[BUDGET] += capped - included_in[view.layer]
            superseded = sum(1 for pos in range(view.n_active, view.size) if inactive_status(view, pos) == SUPERSEDED)
            out[ARCHIVED] += view.size - view.n_active - superseded
            out[SUPERSEDED] += superseded
        return {status: k for status, k in out.items() if k}

    def runs(self) -> Iterator[tuple[LayerCandidates, Sequence[int], float, CandidateStatus, tuple[float, float] | None]]:
        """`decisions()` as runs of consecutive candidates of one layer with one score and
        status (and no §13 scores): (layer, positions, score, status, parts)."""
        nq = len(self.q)
        for view, shared, allowance in self.layers:
            if view.layer in self.floats or self.held.get(view.layer):
                for _, pos, score, status, parts in self._layer_decisions(view, shared, allowance, nq):
                    yield view, (pos,), score, status, parts
                continue
            fill = LayerFill(view, shared, nq, self.settings, allowance, self.maker)
            for run, score, status in fill.runs():
                yield view, run, score, status, None
            ordered = ((score, inactive_status(view, pos), pos) for score, pos in archived_order(view, self.q))
            for (score, status), runs in groupby(ordered, key=itemgetter(0, 1)):
                yield view, [pos for _, _, pos in runs], score, status, None

    def decisions(self) -> Iterator[tuple[LayerCandidates, int, float, CandidateStatus, tuple[float, float] | None]]:
        """Every candidate as (layer, position, score, status, (keyword, semantic) in hybrid
        retrieval or None), in layer order then sort order."""
        nq = len(self.q)
        for view, shared, allowance in self.layers:
            yield from self._layer_decisions(view, shared, allowance, nq)

    def _layer_decisions(self, view: LayerCandidates, shared: Mapping[int, int], allowance: int, nq: int
                         ) -> Iterator[tuple[LayerCandidates, int, float, CandidateStatus, tuple[float, float] | None]]:
        floats = self.floats.get(view.layer)
        held = self.held.get(view.layer, frozenset())
        fill = LayerFill(view, shared, nq, self.settings, allowance, self.maker, floats, held)
        rank = view.rank
        if floats is None:
            for pos, score, status in fill.walk(everything=True):
                yield view, pos, score, status, None
            for pos in sorted(held, key=lambda p: (rank[p], -shared.get(p, 0), p)):
                yield view, pos, share(shared.get(pos, 0), nq), self.held_status(view.layer, pos), None
            for score, pos in archived_order(view, self.q):
                yield view, pos, score, inactive_status(view, pos), None
            return
        for pos, score, status in fill.walk(everything=True):
            yield view, pos, score, status, floats.parts(pos)
        for pos in floats.held_order(rank, held):
            yield view, pos, floats.score[pos], self.held_status(view.layer, pos), floats.parts(pos)
        for score, pos in floats.archived_order(rank, view.size):
            yield view, pos, score, inactive_status(view, pos), floats.parts(pos)


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
    if not settings.enabled:  # 1. Switch
        result.disabled_reason = "switch_off"
        result._candidates = []
        return _finish(result, started)
    if settings.private:  # SPEC §18: private mode injects nothing, said as private
        result.disabled_reason = "private"
        result._candidates = []
        return _finish(result, started)

    context = Context(files)
    if settings.injection == "focused":  # SPEC §15: steps F2-F12 (docs/injection.md)
        views: dict[str, LayerCandidates] = {layer: _candidates(layer, layers.get(layer, ())) for layer in LAYERS}
        result = inject_focused(result, views, settings, query, failed_layers, extra,
                                {layer: held_back(view, unreviewed, expired, context) for layer, view in views.items()},
                                pinned, narrow_min)
        if context.asked or (not callable(files) and files):
            result.files = context.files
        return _finish(result, started)

    q = terms(query)  # 3. Terms
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    budget = Budget(settings)
    blocks: list[tuple[str, list[str]]] = []
    any_candidates = any_passing = False
    planned: list[tuple[LayerCandidates, Mapping[int, int], int]] = []
    floated: dict[str, FloatScores] = {}
    held_by_layer: dict[str, frozenset[int]] = {}
    held_as_by_layer: dict[str, dict[int, CandidateStatus]] = {}
    for layer in LAYERS:
        view = _candidates(layer, layers.get(layer, ()))  # 2. Candidates
        held, held_as = held_back(view, unreviewed, expired, context)  # ... less those held back
        if held_as:
            held_as_by_layer[layer] = held_as
        if held:
            held_by_layer[layer] = held
        shared = view.shared(q)  # 4. Score: |Q ∩ M| of the entries sharing a term
        gate = settings.gate.get(layer, 0.0)
        n_live = view.n_active - len(held)
        any_candidates |= bool(n_live)
        layer_extra = extra.get(layer) if extra else None
        floats = None
        if layer_extra is None:
            live = shared if not held else {p: n for p, n in shared.items() if p not in held}
            any_passing |= bool(n_live) and passes_gate(share(most_shared(live), len(q)), gate)
        else:  # §13: max(keyword, semantic), the order decayed
            floats = floated[layer] = FloatScores(view, shared, q, layer_extra)
            any_passing |= bool(n_live) and passes_gate(floats.best(held), gate)
        allowance = budget.allowance(layer)  # 10. Budget
        fill = LayerFill(view, shared, len(q), settings, allowance, maker, floats, held)  # 5–10 for the layer
        result.truncated |= fill.settle()
        planned.append((view, shared, allowance))
        if fill.included:
            blocks.append((HEADERS[layer], [c.line for c in fill.included]))
            result.included += fill.included
        result.layer_budget[layer] = (fill.used, allowance, budget.carry)
        budget.spend(allowance, fill.used)
    result._plan = _Plan(q, settings, planned, maker, floated, held_by_layer, held_as_by_layer)
    if context.asked or (not callable(files) and files):
        result.files = context.files

    result.text = render(blocks)  # 11. Render
    result.count = len(result.included)  # 12. Flags
    result.redacted = sum(c.redacted for c in result.included)
    result.truncated |= any(c.clipped for c in result.included)
    result.tokens = block_cost(result.text)
    result.chars = len(result.text)
    result.disabled_reason = disabled_reason(result.count, failed_layers >= set(LAYERS), any_candidates, any_passing)
    return _finish(result, started)


def most_shared(shared: Mapping[int, int]) -> int:
    """`max(shared.values(), default=0)`; kept by a mapping of bitmaps (`LevelCounts.top`)."""
    top = getattr(shared, "top", None)
    return int(top()) if top is not None else max(shared.values(), default=0)


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


def _candidates(layer: str, given: Sequence[Entry] | LayerCandidates) -> LayerCandidates:
    if isinstance(given, Sequence):
        return EntryLayer(layer, given)
    return given


def _finish(result: InjectionResult, started: float) -> InjectionResult:
    """Each injection logs its statistics, never memory text."""
    result.retrieval_ms += (time.perf_counter() - started) * 1000
    log.info(
        "injection count=%d chars=%d tokens=%d retrieval_ms=%.2f disabled_reason=%s",
        result.count, result.chars, result.tokens, result.retrieval_ms, result.disabled_reason,
    )
    return result


# ---------------------------------------------------------------------- SPEC §15: focused
FOCUSED_NARROW_MIN = 256  # a layer of this many entries or more is narrowed (`_Narrowed`) when it can be


class _Narrowed:
    """One layer of focused injection read through its inverted index, not entry by entry.
    An entry sharing no term of Q has keyword 0 (F4), so without the semantic score (F5)
    relevance and score 0: it is `below_gate` unless pinned (F7) and sorts after every
    other in play (F8). So only the entries holding a term of Q (found by the postings of
    the §5 terms whose content term it is, `focused.stored_forms`), the pinned, the held
    back and the archived are scored; F4's df(t) is the number of postings in play. Valid
    when the layer's indexed terms cover what M reads (`Focus.covers`)."""

    def __init__(self, view: LayerCandidates, q: frozenset[str], focus: Focus, pinned_ids: frozenset[str]):
        from . import focused

        self.n_active = view.n_active
        self.q = q
        self.holds = {t: frozenset(view.shared(focused.stored_forms(t))) for t in sorted(q)}
        self.archived = {p: frozenset(map(focused.content_term, view.archived_terms(p))).difference(("",))
                         for p in range(view.n_active, view.size)}
        pinned = set(focus.pinned)
        if pinned_ids:
            pinned |= view.positions_of(pinned_ids)
            pinned.update(p for p in self.archived if view.shown(p).id in pinned_ids)
        self.pinned = frozenset(pinned)
        self.sharing = frozenset().union(*self.holds.values())

    def terms(self, pos: int) -> frozenset[str]:
        """Q ∩ M of a position (all that F4's keyword score reads of M)."""
        if pos >= self.n_active:
            return self.archived[pos] & self.q
        return frozenset(t for t, ps in self.holds.items() if pos in ps)

    def df(self, t: str, held: Sequence[int]) -> int:
        ps = self.holds[t]
        return len(ps) - sum(1 for p in held if p in ps)


def _narrowed(view: LayerCandidates, q: frozenset[str], pinned_ids: frozenset[str]) -> _Narrowed | None:
    focus = getattr(view, "focus", None)
    found = focus() if focus is not None else None
    return _Narrowed(view, q, found, pinned_ids) if found is not None and found.covers else None


def inject_focused(result: InjectionResult, views: Mapping[str, LayerCandidates], settings: Settings, query: str,
                   failed_layers: frozenset[str] = frozenset(), extra: Mapping[str, ExtraScores] | None = None,
                   held_back: Mapping[str, tuple[frozenset[int], Mapping[int, CandidateStatus]]] | None = None,
                   pinned_ids: frozenset[str] = frozenset(), narrow_min: int | None = None) -> InjectionResult:
    """`memory.injection: "focused"`: the rule of docs/injection.md, steps F2-F12, over the
    layers' candidates (the switch is the caller's). Candidates are scored by `core.focused`;
    the steps it shares with §5 (lines, cost, budget, render, flags) are §5's own. `held_back`:
    each layer's active positions held back at step 2 (`held_back`), with their statuses;
    `pinned_ids`: entries pinned by `memtui pin`, pinned like a file's `pinned: true`.
    Without the semantic score, a layer of `narrow_min` entries or more (`FOCUSED_NARROW_MIN`)
    whose index allows it is read through its postings (`_Narrowed`): the entries sharing no
    term get the score they would (0, below the gate) without being made, their candidates
    made only when listed."""
    from . import focused
    from .focused import Why

    # F2. Candidates: the active entries of each layer, less those held back (unreviewed, out of scope, expired)
    in_play: dict[str, list[int]] = {}
    held: dict[str, list[int]] = {}
    held_as: dict[str, Mapping[int, CandidateStatus]] = {}
    for layer, view in views.items():
        out, held_as[layer] = (held_back or {}).get(layer, (frozenset(), {}))
        in_play[layer] = [p for p in range(view.n_active) if p not in out]
        held[layer] = sorted(out)
    # F3. Terms
    q = focused.content_terms(query)
    semantic = {layer: (list(e.semantic) if e is not None and e.semantic is not None else None)
                for layer in views for e in ((extra or {}).get(layer),)}
    decay = {layer: (list(e.decay) if e is not None and e.decay is not None else None)
             for layer in views for e in ((extra or {}).get(layer),)}
    least = FOCUSED_NARROW_MIN if narrow_min is None else narrow_min
    narrow: dict[str, _Narrowed] = {}
    if all(sems is None for sems in semantic.values()):  # F5's base reads every candidate's semantic score
        for layer, view in views.items():
            found = _narrowed(view, q, pinned_ids) if view.size >= least else None
            if found is not None:
                narrow[layer] = found
    entries = {layer: [view.entry(p) for p in range(view.size)] for layer, view in views.items() if layer not in narrow}
    pinned = {layer: [e.pinned or e.id in pinned_ids for e in es] for layer, es in entries.items()}
    memory_terms = {layer: [_focused_terms(e) for e in es] for layer, es in entries.items()}
    # the positions scored: every one, or in a narrowed layer those that can score above 0 or are listed apart
    scored_at: dict[str, Sequence[int]] = {layer: range(view.size) for layer, view in views.items()}
    for layer, nw in narrow.items():
        scored_at[layer] = sorted(nw.sharing | nw.pinned | set(held[layer]) | nw.archived.keys())

    def is_pinned(layer: str, pos: int) -> bool:
        nw = narrow.get(layer)
        return pos in nw.pinned if nw is not None else pinned[layer][pos]

    def terms_at(layer: str, pos: int) -> frozenset[str]:
        nw = narrow.get(layer)
        return nw.terms(pos) if nw is not None else memory_terms[layer][pos]

    def importance(layer: str, pos: int) -> str:
        return views[layer].shown(pos).importance if layer in narrow else entries[layer][pos].importance

    # F4. Keyword: each query term weighed by how rare it is among the candidates in play
    n = sum(map(len, in_play.values()))
    df = focused.document_frequency((memory_terms[layer][p] for layer, ps in in_play.items() if layer not in narrow
                                     for p in ps), q)
    for layer, nw in narrow.items():
        for t in q:
            df[t] += nw.df(t, held[layer])
    weight = {t: focused.idf(df[t], n) for t in q}
    # F5. Relevance: the semantic score (§13, when given) lifts the keyword score
    known = [sem[p] for layer, ps in in_play.items() for sem in (semantic[layer],) if sem is not None for p in ps]
    base = focused.lower_median(known)

    kw_of: dict[frozenset[str], float] = {}  # few distinct Q ∩ M: each one's keyword score found once

    def parts(layer: str, pos: int) -> tuple[float, float | None, float, float, float | None, float, str]:
        shared = q & terms_at(layer, pos)
        kw = kw_of.get(shared)
        if kw is None:
            kw = kw_of[shared] = focused.keyword_score(q, shared, weight)
        sems, decays = semantic[layer], decay[layer]
        sem = sems[pos] if sems is not None else None
        lift = focused.semantic_lift(sem, base) if sem is not None else 0.0
        rel = focused.relevance(kw, lift)
        dec = decays[pos] if decays is not None else None
        imp = importance(layer, pos)
        return kw, sem, lift, rel, dec, focused.adjusted(rel, imp, dec, is_pinned(layer, pos)), imp

    scored = {layer: {p: parts(layer, p) for p in scored_at[layer]} for layer in views}
    # F7. Cut-off: relative to the best adjusted score of the message (pinned ones aside; 0 for those not scored)
    best = max((scored[layer][p][5] for layer, ps in in_play.items() for p in ps
                if p in scored[layer] and not is_pinned(layer, p)), default=0.0)
    cut = focused.cut_off(best)
    scopes = {layer: views[layer].scoped() for layer in views}  # SPEC §16: a scoped file's globs

    def scope_of(layer: str, pos: int) -> str:
        globs = scopes[layer].get(pos)
        return f"paths: {', '.join(globs)}" if globs else "workspace"

    # F7. ... and in the user and project layers, the closest in meaning (with the semantic score)
    near = {layer: focused.nearest((p, sems[p], scored[layer][p][2]) for p in in_play[layer]
                                   if not is_pinned(layer, p))
            if layer in focused.NEAREST_LAYERS and sems is not None else None
            for layer in views for sems in (semantic[layer],)}

    def why(layer: str, p: int) -> Why:
        found = scored[layer].get(p)
        if found is None:  # a narrowed layer's entry sharing no term (F4-F6: all 0) and not pinned
            decays = decay[layer]
            dec = decays[p] if decays is not None else None
            imp = importance(layer, p)
            found = (0.0, None, 0.0, 0.0, dec, focused.adjusted(0.0, imp, dec, False), imp)
        kw, sem, lift, rel, dec, score, imp = found
        return Why(kw, sem, lift, rel, imp, dec, is_pinned(layer, p), score, cut, scope_of(layer, p), p == near[layer])

    def listed(layer: str, ranked: list[int], statuses: dict[int, Candidate]) -> list[Candidate]:
        """The layer's candidates: in play in F8's order (`ranked`, then in a narrowed layer
        those scoring 0 and not pinned, in base order), `below_gate` unless passing
        (`statuses`); then the held back and the archived, by score."""
        view, sc = views[layer], scored[layer]
        order: Iterable[int] = ranked
        if layer in narrow:
            head = set(ranked)
            order = chain(ranked, (p for p in in_play[layer] if p not in head))
        out = []
        for p in order:
            c = statuses.get(p)
            if c is None:
                w = why(layer, p)
                c = Candidate(view, p, w.score, BELOW_GATE, maker, None, w)
            out.append(c)
        for pos in sorted(held[layer], key=lambda p: (-sc[p][5], p)):
            w = why(layer, pos)
            out.append(Candidate(view, pos, w.score, held_as[layer].get(pos, UNREVIEWED), maker, None, w))
        for pos in sorted(range(view.n_active, view.size), key=lambda p: (-sc[p][5], p)):
            w = why(layer, pos)
            out.append(Candidate(view, pos, w.score, inactive_status(view, pos), maker, None, w))
        return out

    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    budget = Budget(settings)
    blocks: list[tuple[str, list[str]]] = []
    pieces: list[Callable[[], list[Candidate]]] = []
    any_candidates = any_passing = False
    for layer in LAYERS:
        view = views[layer]
        sc = scored[layer]

        def rank_key(p: int, sc: dict[int, tuple[float, float | None, float, float, float | None, float, str]] = sc,
                     layer: str = layer) -> tuple[bool, float, float, int]:
            return not is_pinned(layer, p), -sc[p][5], -sc[p][3], p

        # F8. Order: pinned first, then the adjusted score, the relevance, the base order
        ranked = sorted((p for p in in_play[layer] if p in sc), key=rank_key)
        if layer in narrow:  # its in play scored 0 and not pinned are listed last, in base order (`listed`)
            ranked = [p for p in ranked if is_pinned(layer, p) or sc[p][5] or sc[p][3]]
        allowance = budget.allowance(layer)  # F10. Budget, as §5 step 10
        limit = settings.max_items.get(layer)
        header = est(HEADERS[layer])
        used = passed = 0
        fits = True
        included: list[Candidate] = []
        statuses: dict[int, Candidate] = {}  # the candidates passing F7, with their status
        any_candidates |= bool(in_play[layer])
        for pos in ranked:
            if not focused.passes(sc[pos][3], sc[pos][5], cut, is_pinned(layer, pos), pos == near[layer]):
                continue  # below_gate
            any_passing = True
            passed += 1
            if over_max_items(passed, limit):  # F9. Max items, as §5 step 7
                status = MAX_ITEMS
            elif not fits:
                status = BUDGET
            else:
                extra_cost = view.made(pos, maker).tokens + (0 if included else header)
                if used + extra_cost <= allowance:
                    used += extra_cost
                    status = INCLUDED
                else:
                    fits = False
                    status = BUDGET
            w = why(layer, pos)
            c = statuses[pos] = Candidate(view, pos, w.score, status, maker, None, w)
            if status == INCLUDED:
                included.append(c)
            result.truncated |= status == BUDGET
        pieces.append(partial(listed, layer, ranked, statuses))
        if included:
            blocks.append((HEADERS[layer], [c.line for c in included]))
            result.included += included
        result.layer_budget[layer] = (used, allowance, budget.carry)
        budget.spend(allowance, used)
    if narrow:  # the candidates are made when listed
        result._lazy = partial(_joined, pieces)
    else:
        result._candidates = _joined(pieces)
    result.text = render(blocks)  # F11. Render, as §5 step 11
    result.count = len(result.included)  # F12. Flags, as §5 step 12
    result.redacted = sum(c.redacted for c in result.included)
    result.truncated |= any(c.clipped for c in result.included)
    result.tokens = block_cost(result.text)
    result.chars = len(result.text)
    result.disabled_reason = disabled_reason(result.count, failed_layers >= set(LAYERS), any_candidates, any_passing)
    return result


def _joined(pieces: Sequence[Callable[[], list[Candidate]]]) -> list[Candidate]:
    return [c for piece in pieces for c in piece()]


def _focused_terms(e: Entry) -> frozenset[str]:
    from .focused import entry_content_terms

    return entry_content_terms(e.text, e.section, e.name, e.description, e.tags)
