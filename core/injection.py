"""The injection (SPEC §5, exact): what Muse appends to its system prompt for a message.

One function decides it — `inject()` over a loaded store — and one result type carries it
to every face: `memtui preview`, the TUI's preview pane, and Muse itself.
"""

from __future__ import annotations

import dataclasses
import heapq
import json
import logging
import math
import time
import unicodedata
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

from .model import IMPORTANCE_RANK, Entry
from .outbound import redact_line as redact
from .paths import Paths, Problem
from .relevance import score as relevance_score
from .relevance import terms
from .settings import Settings, load_settings

if TYPE_CHECKING:
    from .store.memory import MemoryStore

log = logging.getLogger("memtui.injection")

LAYER_ORDER = ("user", "project", "conversation")
HEADERS = {"user": "### User Preferences", "project": "### Project Knowledge", "conversation": "### Relevant Context"}
TITLE = "## Memory"
ELLIPSIS = "…"


def est(line: str) -> int:
    """Token estimate of one line: wide characters count 1, the rest 1 per 4 (rounded up)."""
    if line.isascii():
        return -(-len(line) // 4)
    wide = 0
    for ch in line:
        if unicodedata.east_asian_width(ch) in ("W", "F"):
            wide += 1
    return wide + math.ceil((len(line) - wide) / 4)


def block_cost(text: str) -> int:
    return sum(est(line) for line in text.split("\n")) if text else 0


class LineMaker:
    """§5 step 8 with the settings it needs; remembers nothing but them."""

    def __init__(self, max_chars: int, redact_secrets: bool):
        self.max_chars = max_chars
        self.redact_secrets = redact_secrets
        self.key = (max_chars, bool(redact_secrets))

    def __call__(self, text: str) -> tuple[str, bool, int]:
        return make_line(text, self.max_chars, self.redact_secrets)


# What a candidate shows of its entry without the entry itself: id, source, importance, updated_at (ISO).
Shown = tuple[str, str, str, str]
# A made line: (line, clipped, redacted count, tokens).
Made = tuple[str, bool, int, int]


_STATUS_JSON = {status: f', "status": "{status}' for status in
                ("included", "below_gate", "max_items", "budget", "archived", "unreviewed")}


class Candidate:
    """One entry's fate in an injection: its layer's index and position, score and status.
    The entry, its line and cost are looked up in the index when asked for."""

    __slots__ = ("index", "pos", "score", "status", "_maker")

    def __init__(self, index: LayerIndex, pos: int, score: float, status: str, maker: LineMaker):
        self.index = index
        self.pos = pos
        self.score = score
        self.status = status
        self._maker = maker

    @property
    def entry(self) -> Entry:
        return self.index.entry(self.pos)

    @property
    def line(self) -> str:
        return self.index.made(self.pos, self._maker)[0]

    @property
    def clipped(self) -> bool:
        return self.index.made(self.pos, self._maker)[1]

    @property
    def redacted(self) -> int:
        return self.index.made(self.pos, self._maker)[2]

    @property
    def tokens(self) -> int:
        return self.index.made(self.pos, self._maker)[3]

    @property
    def layer(self) -> str:
        return self.index.layer

    def json(self) -> str:
        """`json.dumps(self.as_dict(), ensure_ascii=False)`, from two pieces made once per entry."""
        head, tail = self.index.fragments(self.pos, self._maker)
        return f'{head}{self.score!r}, "status": "{self.status}{tail}'

    def as_dict(self) -> dict:
        entry_id, source, importance, updated = self.index.shown(self.pos)
        line, clipped, _, tokens = self.index.made(self.pos, self._maker)
        return {
            "id": entry_id,
            "layer": self.index.layer,
            "source": source,
            "score": self.score,
            "status": self.status,
            "clipped": clipped,
            "tokens": tokens,
            "line": line,
            "importance": importance,
            "updated_at": updated,
        }
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
    _plan: _Plan | None = field(default=None, repr=False)
    _candidates: list[Candidate] | None = field(default=None, repr=False)
    _status_counts: dict[str, int] | None = field(default=None, repr=False)

    @property
    def injected(self) -> bool:
        return self.count > 0

    def iter_candidates(self) -> Iterator[Candidate]:
        """Every candidate in layer order then sort order (archived last in their layer),
        produced as needed: the first few cost little even when there are tens of thousands."""
        if self._candidates is not None:
            yield from self._candidates
        elif self._plan is not None:
            yield from self._plan.candidates()

    @property
    def candidate_count(self) -> int:
        if self._candidates is not None:
            return len(self._candidates)
        if self._plan is None:
            return 0
        return sum(index.size for _, index, _, _ in self._plan.layers)

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
        noun = "memory" if self.count == 1 else "memories"
        parts = [f"{self.count} {noun} injected", f"{self.tokens}/{self.budget.get('total', 0)} tokens"]
        if self.truncated:
            parts.append("truncated")
        if self.count == 0 and self.disabled_reason:
            parts.append(self.disabled_reason.replace("_", " "))
        return " · ".join(parts)

    def as_dict(self, candidates: bool = True) -> dict:
        data = {
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
        if candidates:
            data["candidates"] = [c.as_dict() for c in self.iter_candidates()]
        return data

    def to_json(self) -> str:
        """`json.dumps(self.as_dict(), ensure_ascii=False)`, byte for byte, built from each
        candidate's pre-rendered pieces (tens of thousands of them for `preview --json`)."""
        head = json.dumps(self.as_dict(candidates=False), ensure_ascii=False)
        pieces: list[str] = []
        append = pieces.append
        reprs: dict[float, str] = {}  # few distinct scores: format each once
        for c in self.iter_candidates():
            first, last = c.index.fragments(c.pos, c._maker)
            score = reprs.get(c.score)
            if score is None:
                score = reprs[c.score] = repr(c.score)
            append(first)
            append(score)
            append(_STATUS_JSON[c.status])
            append(last)
            append(", ")
        if pieces:
            pieces.pop()
        return head[:-1] + ', "candidates": [' + "".join(pieces) + "]}"



def make_line(text: str, max_chars: int, redact_secrets: bool) -> tuple[str, bool, int]:
    """§5 step 8: one line, secrets redacted, clamped to max_chars code points."""
    one_line = " ".join(text.split())
    redacted = 0
    if redact_secrets:
        one_line, redacted = redact(one_line)
    clipped = len(one_line) > max_chars
    if clipped:
        one_line = one_line[: max_chars - 1] + ELLIPSIS
    return "- " + one_line, clipped, redacted


def base_key(entry: Entry) -> tuple:
    """§5 step 6 without the score: importance, updated_at desc, then path + position (or id)."""
    if entry.layer == "conversation":
        place: tuple = (entry.id,)
    else:
        place = (entry.rel_path, entry.line_start)
    return (IMPORTANCE_RANK.get(entry.importance, 1), -entry.updated_at, place)


# An entry as a plain tuple (for the prepared index): Entry's fields but `terms`, path as a string.
ENTRY_FIELDS = tuple(f.name for f in dataclasses.fields(Entry) if f.name != "terms")
_PATH_AT = ENTRY_FIELDS.index("path")
_TEXT_AT = ENTRY_FIELDS.index("text")
_ID_AT = ENTRY_FIELDS.index("id")
_SOURCE_AT = ENTRY_FIELDS.index("source")


def entry_row(entry: Entry) -> tuple:
    row = [_plain(getattr(entry, name)) for name in ENTRY_FIELDS]
    row[_PATH_AT] = None if entry.path is None else str(entry.path)
    return tuple(row)


def _plain(value):
    """str subclasses (the Layer enum) as plain str, tuples of them too: marshal takes only plain types."""
    if isinstance(value, str):
        return str.__str__(value) if type(value) is not str else value
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


def shown_of(entry: Entry) -> Shown:
    return (_plain(entry.id), _plain(entry.source_ref), _plain(entry.importance), entry.updated_iso)


def make_fragments(layer: str, shown: Shown, made: Made) -> tuple[str, str]:
    """The JSON of a candidate (`Candidate.as_dict`, as `json.dumps(..., ensure_ascii=False)`
    writes it) before its score and after its status."""
    entry_id, source, importance, updated = shown
    line, clipped, _, tokens = made

    def d(value: str) -> str:
        return json.dumps(value, ensure_ascii=False)

    head = f'{{"id": {d(entry_id)}, "layer": {d(layer)}, "source": {d(source)}, "score": '
    tail = (f'", "clipped": {"true" if clipped else "false"}, "tokens": {tokens}, "line": {d(line)}, '
            f'"importance": {d(importance)}, "updated_at": {d(updated)}}}')
    return head, tail


class LineCache:
    """What the engine keeps between injections, owned by whoever makes them (a store, the
    TUI), never by the module: lines already made, by settings and text (an entry's line is
    made once however often its layer's index is rebuilt: an outside edit rebuilds one layer,
    whose texts mostly stay), and the indexes of the layer snapshots seen last."""

    LIMIT = 400_000  # lines kept per settings; past it the cache starts again
    INDEXES = 32  # layer snapshots whose index is kept

    def __init__(self) -> None:
        self.made: dict[tuple[int, bool], dict[str, Made]] = {}
        self._indexes: dict[tuple[str, int], tuple[Sequence[Entry], LayerIndex]] = {}

    def make(self, maker: LineMaker, text: str) -> Made:
        known = self.made.get(maker.key)
        if known is None:
            known = self.made[maker.key] = {}
        made = known.get(text)
        if made is None:
            line, clipped, redacted = maker(text)
            made = (line, clipped, redacted, est(line))
            if len(known) >= self.LIMIT:
                known.clear()
            known[text] = made
        return made

    def layer_index(self, layer: str, entries: Sequence[Entry] | LayerIndex) -> LayerIndex:
        """The index of a layer snapshot; the store's snapshots are tuples, reused until it changes."""
        if isinstance(entries, LayerIndex):
            return entries
        if not isinstance(entries, tuple):
            return LayerIndex.from_entries(layer, entries, self)
        hit = self._indexes.get((layer, id(entries)))
        if hit is not None and hit[0] is entries:  # the same tuple, not another one at its address
            return hit[1]
        index = LayerIndex.from_entries(layer, entries, self)
        if len(self._indexes) >= self.INDEXES:
            self._indexes.clear()
        self._indexes[(layer, id(entries))] = (entries, index)
        return index


class LayerIndex:
    """A layer's entries in base order (the active ones, then the archived ones), with an
    inverted index from term to active position, so a query scores only the entries that
    share a term with it. Built from entries (a store snapshot) or from a saved state (the
    prepared index of `core.store.prepared`): the walk below is the same for both."""

    def __init__(self, layer: str, n_active: int, rank: list[int], postings: dict[str, list[int]],
                 archived_terms: list, entries: list[Entry | None], rows: Sequence[tuple] | None = None,
                 shown: Sequence[Shown] | None = None, made: dict[tuple[int, bool], Sequence[Made]] | None = None,
                 frags: dict[tuple[int, bool], Sequence[tuple[str, str]]] | None = None,
                 lines: LineCache | None = None):
        self.layer = layer
        self.lines = lines if lines is not None else LineCache()
        self.n_active = n_active
        self.size = len(entries)
        self.rank = rank
        self.postings = postings
        self._archived_terms = archived_terms
        self._entries = entries
        self._rows = rows
        self._shown = shown
        self._made = made or {}
        self._frags = frags or {}
        self._packed = bool(postings) and isinstance(next(iter(postings.values())), bytes)
        self.groups: list[tuple[int, int, int]] = []  # (rank, start, stop) ranges of active positions
        for pos in range(n_active):
            r = rank[pos]
            if self.groups and self.groups[-1][0] == r:
                self.groups[-1] = (r, self.groups[-1][1], pos + 1)
            else:
                self.groups.append((r, pos, pos + 1))

    @classmethod
    def from_entries(cls, layer: str, entries: Sequence[Entry], lines: LineCache | None = None) -> LayerIndex:
        active = sorted((e for e in entries if not e.archived), key=base_key)
        archived = sorted((e for e in entries if e.archived), key=base_key)
        ordered: list[Entry | None] = [*active, *archived]
        postings: dict[str, list[int]] = {}
        for pos, e in enumerate(active):
            for term in e.terms:
                postings.setdefault(term, []).append(pos)
        rank = [IMPORTANCE_RANK.get(e.importance, 1) for e in ordered]  # type: ignore[union-attr]
        return cls(layer, len(active), rank, postings, [e.terms for e in archived], ordered, lines=lines)

    # ------------------------------------------------------------------ saved state
    def state(self, maker: LineMaker) -> dict:
        """Everything a later process needs to answer without the entries, as plain values
        (`core.store.prepared` saves it): per position the entry as a tuple, what a candidate
        shows of it and its line made with `maker`'s settings."""
        return {
            "layer": _plain(self.layer), "n_active": self.n_active, "rank": self.rank,
            "postings": {t: p if isinstance(p, bytes) else array("i", p).tobytes() for t, p in self.postings.items()},
            "archived_terms": [sorted(t) for t in self._archived_terms], "key": list(maker.key),
            "rows": [entry_row(self.entry(p)) for p in range(self.size)],
            "shown": [self.shown(p) for p in range(self.size)],
            "made": [self.made(p, maker) for p in range(self.size)],
            "frags": [self.fragments(p, maker) for p in range(self.size)],
        }

    @classmethod
    def from_state(cls, core: dict, rows: Sequence[tuple], shown: Sequence[Shown], made: Sequence[Made],
                   frags: Sequence[tuple[str, str]]) -> LayerIndex:
        """An index from a saved state; `rows`, `shown`, `made` and `frags` may be lazy sequences."""
        key = tuple(core["key"])
        return cls(core["layer"], core["n_active"], core["rank"], core["postings"], core["archived_terms"],
                   [None] * core["size"], rows, shown, {key: made}, {key: frags})

    # ------------------------------------------------------------------ per position
    def entry(self, pos: int) -> Entry:
        e = self._entries[pos]
        if e is None:
            assert self._rows is not None
            fields = dict(zip(ENTRY_FIELDS, self._rows[pos]))
            if fields["path"] is not None:
                fields["path"] = Path(fields["path"])
            fields["tags"] = tuple(fields["tags"])
            e = self._entries[pos] = Entry(**fields)
        return e

    def text(self, pos: int) -> str:
        e = self._entries[pos]
        if e is None and self._rows is not None:
            return self._rows[pos][_TEXT_AT]
        return self.entry(pos).text

    def shown(self, pos: int) -> Shown:
        if self._shown is not None:
            return self._shown[pos]
        return shown_of(self.entry(pos))

    def made(self, pos: int, maker: LineMaker) -> Made:
        made = self._made.get(maker.key)
        if made is not None:
            return made[pos]
        return self.lines.make(maker, self.text(pos))

    def fragments(self, pos: int, maker: LineMaker) -> tuple[str, str]:
        """A candidate's JSON around its score and status (see `Candidate.json`)."""
        frags = self._frags.get(maker.key)
        if frags is not None:
            return frags[pos]
        return make_fragments(self.layer, self.shown(pos), self.made(pos, maker))

    def seed_made(self, maker: LineMaker, lines: LineCache) -> None:
        """Put this index's saved lines into `lines`, by text."""
        if self._made.get(maker.key) is None or self._rows is None or not hasattr(self._rows, "materialize"):
            return
        self.preload(maker)
        known = lines.made.setdefault(maker.key, {})
        if len(known) + self.size > lines.LIMIT:
            return
        for row, made in zip(self._rows.materialize(), self._made[maker.key]):
            known[row[_TEXT_AT]] = made

    def preload(self, maker: LineMaker) -> None:
        """Read every saved line and JSON piece at once (before producing every candidate)."""
        for kept in (self._made, self._frags):
            seq = kept.get(maker.key)
            if seq is not None and not isinstance(seq, list) and hasattr(seq, "materialize"):
                kept[maker.key] = seq.materialize()

    def review_fields(self, pos: int) -> tuple[str, str, str, str]:
        """(layer, id, text, source) of a position, without making its entry (SPEC §12)."""
        e = self._entries[pos]
        if e is None and self._rows is not None:
            row = self._rows[pos]
            return self.layer, row[_ID_AT], row[_TEXT_AT], row[_SOURCE_AT]
        e = self.entry(pos)
        return self.layer, e.id, e.text, e.source

    def positions_of(self, ids: frozenset[str]) -> frozenset[int]:
        """The active positions whose entry id is in `ids` (archived entries stay archived)."""
        if self._shown is not None:
            return frozenset(p for p in range(self.n_active) if self._shown[p][0] in ids)
        return frozenset(p for p in range(self.n_active) if self.entry(p).id in ids)

    def archived_terms(self, pos: int) -> frozenset[str]:
        t = self._archived_terms[pos - self.n_active]
        return t if isinstance(t, frozenset) else frozenset(t)

    # ------------------------------------------------------------------ the query
    def matches(self, q: frozenset[str]) -> dict[int, int]:
        """position -> |Q ∩ M| for every active entry sharing a term with the query."""
        postings = self.postings
        found: Iterable[Iterable[int]] = (postings[t] for t in q if t in postings)
        if self._packed:  # saved as bytes of native ints: read only the query's terms
            found = (memoryview(b).cast("i") for b in found)  # type: ignore[arg-type]
        return Counter(chain.from_iterable(found))  # counted in C

    def order(self, counts: dict[int, int], scored_only: bool) -> Iterator[int]:
        """Active positions in §5 order: importance, score desc, then base order. With
        `scored_only`, only the positions with a score above 0, still in that order. Lazy (a
        heap): the budget walk usually stops after a few dozen, so the rest is never sorted."""
        rank = self.rank
        heap = [(rank[p], -n, p) for p, n in counts.items()]
        heapq.heapify(heap)

        def scored_in(group: int | None) -> Iterator[int]:
            while heap and (group is None or heap[0][0] == group):
                yield heapq.heappop(heap)[2]

        if scored_only:
            yield from scored_in(None)
            return
        for group, start, stop in self.groups:
            yield from scored_in(group)
            for pos in range(start, stop):
                if pos not in counts:
                    yield pos


class _LayerWalk:
    """Steps 5, 7, 8, 9, 10 for one layer, in order, one candidate at a time."""

    def __init__(self, layer: str, index: LayerIndex, counts: dict[int, int], nq: int, settings: Settings,
                 allowance: int, maker: LineMaker, held: frozenset[int] = frozenset()):
        self.layer = layer
        self.held = held  # positions left out as unreviewed (SPEC §12)
        self.index = index
        self.counts = counts
        self.nq = nq
        self.gate = settings.gate.get(layer, 0.0)
        self.limit = settings.max_items.get(layer)
        self.allowance = allowance
        self.maker = maker
        self.header = est(HEADERS[layer])
        self.used = 0
        self.passed = 0
        self.fits = True
        self.included: list[Candidate] = []

    def score(self, pos: int) -> float:
        return self.counts.get(pos, 0) / self.nq if self.nq else 0.0

    def walk(self, everything: bool) -> Iterator[Candidate]:
        """Candidates in order. Unless `everything`, entries that can't pass the gate
        (no shared term while the gate is above 0) are skipped, as they change nothing."""
        skip_unscored = not everything and self.gate > 0
        index, maker = self.index, self.maker
        for pos in index.order(self.counts, scored_only=skip_unscored):
            if pos in self.held:
                continue
            s = self.score(pos)
            if s < self.gate:
                yield Candidate(index, pos, s, "below_gate", maker)
                continue
            self.passed += 1
            if self.limit is not None and self.passed > self.limit:
                yield Candidate(index, pos, s, "max_items", maker)
                continue
            if not self.fits:
                yield Candidate(index, pos, s, "budget", maker)
                continue
            extra = index.made(pos, maker)[3] + (0 if self.included else self.header)
            if self.used + extra <= self.allowance:
                self.used += extra
                c = Candidate(index, pos, s, "included", maker)
                self.included.append(c)
                yield c
            else:
                self.fits = False
                yield Candidate(index, pos, s, "budget", maker)

    def settle(self) -> bool:
        """Run until nothing later in this layer can be included; True if any candidate got `budget`.
        That is at the first `budget` (nothing fits after it) or once `max_items` passed (every
        later passing candidate is `max_items`, never `budget`)."""
        for c in self.walk(everything=False):
            if c.status == "budget":
                return True
            if self.limit is not None and self.passed >= self.limit:
                return False
        return False


class _Plan:
    """What was decided, kept so the full candidate list can be produced when asked for."""

    def __init__(self, q: frozenset[str], settings: Settings, layers: list[tuple[str, LayerIndex, dict, int]],
                 maker: LineMaker, held: dict[str, frozenset[int]] | None = None):
        self.q = q
        self.settings = settings
        self.layers = layers
        self.maker = maker
        self.held = held or {}  # layer -> active positions left out as unreviewed

    def status_counts(self, included: list[Candidate]) -> dict[str, int]:
        """The statuses `candidates()` would give, counted from the scores alone: in a layer the
        passing candidates are those scoring at least the gate; the first `max_items` of them
        are included or `budget`, the rest `max_items`."""
        out: Counter[str] = Counter()
        nq = len(self.q)
        included_in = Counter(c.layer for c in included)
        for layer, index, counts, _ in self.layers:
            gate = self.settings.gate.get(layer, 0.0)
            limit = self.settings.max_items.get(layer)
            held = self.held.get(layer, frozenset())
            n = index.n_active - len(held)
            out["unreviewed"] += len(held)
            if gate <= 0.0:
                passing = n
            else:
                passing = sum(1 for v in counts.values() if v / nq >= gate)
                if held and nq:
                    passing -= sum(1 for p in held if counts.get(p, 0) / nq >= gate)
            capped = passing if limit is None else min(passing, max(limit, 0))
            out["below_gate"] += n - passing
            out["max_items"] += passing - capped
            out["included"] += included_in[layer]
            out["budget"] += capped - included_in[layer]
            out["archived"] += index.size - index.n_active
        return {status: k for status, k in out.items() if k}

    def candidates(self) -> Iterator[Candidate]:
        q, maker = self.q, self.maker
        for layer, index, counts, allowance in self.layers:
            index.preload(maker)
            held = self.held.get(layer, frozenset())
            walk = _LayerWalk(layer, index, counts, len(q), self.settings, allowance, maker, held)
            yield from walk.walk(everything=True)
            rank = index.rank
            for pos in sorted(held, key=lambda p: (rank[p], -counts.get(p, 0), p)):
                yield Candidate(index, pos, walk.score(pos), "unreviewed", maker)
            scored = [(relevance_score(q, index.archived_terms(p)), p) for p in range(index.n_active, index.size)]
            scored.sort(key=lambda t: (rank[t[1]], -t[0], t[1]))
            for s, pos in scored:
                yield Candidate(index, pos, s, "archived", maker)


def inject(layers: Mapping[str, Sequence[Entry] | LayerIndex], settings: Settings, query: str, workspace: str = "",
           failed_layers: frozenset[str] = frozenset(), errors: list[Problem] | None = None,
           lines: LineCache | None = None, unreviewed: frozenset[str] = frozenset()) -> InjectionResult:
    """The injection for `query` over already-loaded layers (SPEC §5 steps 1–12). `lines`
    keeps made lines and layer indexes between calls (the store's; a fresh one otherwise).
    `unreviewed`: ids of entries left out as candidates with status `unreviewed` (SPEC §12)."""
    started = time.perf_counter()
    result = InjectionResult(workspace=workspace, query=query, enabled=settings.enabled,
                             budget=dict(settings.budget), errors=list(errors or []),
                             enabled_why=settings.enabled_why)
    if not settings.enabled:
        result.disabled_reason = "switch_off"
        result._candidates = []
        return _finish(result, started)

    q = terms(query)
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    remaining = settings.budget["total"] - est(TITLE)
    carry = 0
    blocks: list[str] = [TITLE]
    any_candidates = any_passing = False
    planned = []
    held_by_layer: dict[str, frozenset[int]] = {}
    lines = lines if lines is not None else LineCache()
    for layer in LAYER_ORDER:
        index = lines.layer_index(layer, layers.get(layer, ()))
        counts = index.matches(q)
        held = index.positions_of(unreviewed) if unreviewed else frozenset()
        if held:
            held_by_layer[layer] = held
        gate = settings.gate.get(layer, 0.0)
        any_candidates |= bool(index.n_active - len(held))
        live = counts if not held else {p: n for p, n in counts.items() if p not in held}
        best = max(live.values(), default=0) / len(q) if q else 0.0
        any_passing |= bool(index.n_active - len(held)) and (gate <= 0 or best >= gate)
        allowance = min(settings.budget.get(layer, 0) + carry, remaining)
        walk = _LayerWalk(layer, index, counts, len(q), settings, allowance, maker, held)
        result.truncated |= walk.settle()
        planned.append((layer, index, counts, allowance))
        if walk.included:
            blocks += ["", HEADERS[layer], *(c.line for c in walk.included)]
            result.included += walk.included
        result.layer_budget[layer] = (walk.used, allowance, carry)
        carry = allowance - walk.used
        remaining -= walk.used
    result._plan = _Plan(q, settings, planned, maker, held_by_layer)
    result.count = len(result.included)
    result.redacted = sum(c.redacted for c in result.included)
    result.truncated |= any(c.clipped for c in result.included)

    if result.count:
        result.text = "\n".join(blocks)
        result.tokens = block_cost(result.text)
        result.chars = len(result.text)
    elif failed_layers >= set(LAYER_ORDER):
        result.disabled_reason = "query_failed"
    elif not any_candidates:
        result.disabled_reason = "empty_result"
    elif not any_passing:
        result.disabled_reason = "low_relevance"
    else:
        result.disabled_reason = "over_budget"
    return _finish(result, started)


def _finish(result: InjectionResult, started: float) -> InjectionResult:
    result.retrieval_ms += (time.perf_counter() - started) * 1000
    log.info(
        "injection count=%d chars=%d tokens=%d retrieval_ms=%.2f disabled_reason=%s",
        result.count, result.chars, result.tokens, result.retrieval_ms, result.disabled_reason,
    )
    return result


def inject_from_store(store: MemoryStore, settings: Settings, query: str) -> InjectionResult:
    """The injection over a loaded MemoryStore (the TUI and the CLI both call this)."""
    lines = store.lines
    key = (settings.max_item_chars, bool(settings.redact_secrets))
    if key not in lines.made:  # the first time with these settings: take the lines already made
        lines.made[key] = {}
        _seed_lines(store.paths, settings, lines)
    layers = {layer: store.snapshot(layer) for layer in LAYER_ORDER}
    errors = list(settings.problems) + store.problems
    unreviewed: frozenset[str] = frozenset()
    if settings.require_review:
        from .review import held_back

        unreviewed = held_back(store.db, store.entries())
    return inject(layers, settings, query, workspace=str(store.paths.workspace),
                  failed_layers=frozenset(store.layer_errors), errors=errors, lines=lines, unreviewed=unreviewed)


def _seed_lines(paths: Paths, settings: Settings, lines: LineCache) -> None:
    """Fill the made-line cache from the prepared index (same memtui and settings, even when
    the memories changed since: a line depends on its text and the settings alone), so the
    TUI's first preview redacts none of the lines saved there."""
    from .store.prepared import load_prepared

    try:
        prepared = load_prepared(paths, settings, sources=False)  # any saved text -> line pair is right
        if prepared is not None:
            maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
            for index in prepared.indexes.values():
                index.seed_made(maker, lines)
    except Exception as exc:  # a cache is never required
        log.info("made lines not taken from the prepared index: %s", exc)


def _unreviewed_of(paths: Paths, indexes: Mapping[str, LayerIndex]) -> frozenset[str]:
    """`memory.requireReview`: the ids of the prepared entries still awaiting review."""
    from .review import held_back

    return held_back(paths.db_path, (index.review_fields(p) for index in indexes.values() for p in range(index.n_active)))


def build_injection(workspace: str | Path | None, query: str, home: str | Path | None = None,
                    record: bool = False) -> InjectionResult:
    """What Muse appends to its system prompt for `query` in `workspace` (SPEC §5).

    With `record`, a real injection: one record is added to the injection history (§11);
    a failure to record never raises, it is logged and listed in `errors`."""
    from .store.prepared import DamagedPreparedIndex, Prepared, load_prepared, prepare

    started = time.perf_counter()
    paths = Paths.resolve(home=home, workspace=workspace)
    settings = load_settings(paths)
    if not settings.enabled:
        return inject({}, settings, query, workspace=str(paths.workspace), errors=settings.problems)
    def answer(prepared: Prepared) -> InjectionResult:
        unreviewed = _unreviewed_of(paths, prepared.indexes) if settings.require_review else frozenset()
        result = inject(prepared.indexes, settings, query, workspace=str(paths.workspace),
                        failed_layers=prepared.failed_layers, errors=list(settings.problems) + prepared.problems,
                        unreviewed=unreviewed)
        for c in result.included:  # read here what every caller uses, so a damaged section shows now
            c.entry  # noqa: B018
        return result

    prepared = load_prepared(paths, settings)
    try:
        result = answer(prepared) if prepared is not None else None
    except DamagedPreparedIndex as exc:
        log.warning("%s", exc)
        result = None
    if result is None:
        result = answer(prepare(paths, settings))
    result.retrieval_ms = (time.perf_counter() - started) * 1000
    if record:
        from .history import record as record_injection

        outcome = record_injection(paths.db_path, result, paths.workspace)
        if outcome.error:
            result.errors.append(Problem(str(paths.db_path), outcome.error))
    return result


def injection_json(workspace: str | Path | None, query: str, home: str | Path | None = None,
                   target: str | None = None) -> str:
    """`build_injection(...).to_json()` (what `preview --json` prints), as the assistant
    `target` receives it when given (`assistants.delivery.for_target`). A section of the
    prepared index that turns out damaged while the candidates are rendered is removed when
    it is read; the answer is then built again from the files, never a traceback."""
    from .assistants.delivery import for_target
    from .store.prepared import DamagedPreparedIndex

    try:
        return for_target(build_injection(workspace, query, home=home), target).to_json()
    except DamagedPreparedIndex as exc:
        log.warning("%s", exc)
        return for_target(build_injection(workspace, query, home=home), target).to_json()
