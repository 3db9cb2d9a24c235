"""What makes the §5 rule fast: a layer's candidates with an inverted index from term to
entry, each entry's line made once, and a state that `core.store.prepared` saves so that a
later process answers without loading the memories.

`LayerIndex` implements the rule's `LayerCandidates` (`core.injection`); this module
imports the rule's types, never the reverse.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, compress, filterfalse
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any

from ..injection import LineMaker, Made, base_key, candidate_fields
from ..model import IMPORTANCE_RANK, Entry

log = logging.getLogger("memtui.injection")

# What a candidate shows of its entry without the entry itself: id, source, importance, updated_at (ISO).
Shown = tuple[str, str, str, str]

# An entry as a plain tuple (for the prepared index): Entry's fields but `terms`, path as a string.
ENTRY_FIELDS = tuple(f.name for f in dataclasses.fields(Entry) if f.name != "terms")
_PATH_AT = ENTRY_FIELDS.index("path")
_TEXT_AT = ENTRY_FIELDS.index("text")
_ID_AT = ENTRY_FIELDS.index("id")
_SOURCE_AT = ENTRY_FIELDS.index("source")
_FIELD_AT = {name: i for i, name in enumerate(ENTRY_FIELDS)}
_FIELDS_BUT_PATH = attrgetter(*(name for name in ENTRY_FIELDS if name != "path"))
_ALL_BUT_PATH = itemgetter(*(i for i, name in enumerate(ENTRY_FIELDS) if name != "path"))


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


_SPLIT_AT = ', "score": null, "status": "'


def json_pieces(layer: str, shown: Shown, made: Made) -> tuple[str, str]:
    """A candidate's JSON (`injection.candidate_fields`, as `json.dumps(..., ensure_ascii=False)`
    writes it) before its score and after its status. Every `"` inside a JSON string is
    escaped, so the first unescaped `, "score": ` is the key's."""
    entry_id, source, importance, updated = shown
    whole = json.dumps(candidate_fields(entry_id, _plain(layer), source, None, "", made, importance, updated),
                       ensure_ascii=False)
    at = whole.index(_SPLIT_AT)
    return whole[: at + len(', "score": ')], whole[at + len(_SPLIT_AT):]


def _groups(rank: Sequence[int], n_active: int) -> list[tuple[int, int, int]]:
    groups: list[tuple[int, int, int]] = []
    for pos in range(n_active):
        r = rank[pos]
        if groups and groups[-1][0] == r:
            groups[-1] = (r, groups[-1][1], pos + 1)
        else:
            groups.append((r, pos, pos + 1))
    return groups


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
        # the prepared index's layers (as `memtui preview` saved them), taken for a snapshot
        # that holds exactly their entries instead of indexing it again
        self.saved: dict[str, LayerIndex] = {}
        self._taken: dict[str, LayerIndex] = {}  # layers taken from there, whose lines serve the next snapshot
        self.semantic: Any = None  # §13: the model and its vector cache, once hybrid retrieval asked for them

    def make(self, maker: LineMaker, text: str) -> Made:
        known = self.made.get(maker.key)
        if known is None:
            known = self.made[maker.key] = {}
        made = known.get(text)
        if made is None:
            made = maker.made(text)
            if len(known) >= self.LIMIT:
                known.clear()
            known[text] = made
        return made

    def layer_index(self, layer: str, entries: Sequence[Entry]) -> LayerIndex:
        """The index of a layer snapshot; the store's snapshots are tuples, reused until it changes."""
        if not isinstance(entries, tuple):
            return LayerIndex.from_entries(layer, entries, self)
        hit = self._indexes.get((layer, id(entries)))
        if hit is not None and hit[0] is entries:  # the same tuple, not another one at its address
            return hit[1]
        index = self._adopt(layer, entries)
        if index is None:
            index = LayerIndex.from_entries(layer, entries, self)
        if len(self._indexes) >= self.INDEXES:
            self._indexes.clear()
        self._indexes[(layer, id(entries))] = (entries, index)
        return index


    def _adopt(self, layer: str, entries: tuple[Entry, ...]) -> LayerIndex | None:
        taken = self._taken.pop(layer, None)
        if taken is not None:  # a later snapshot: most of its lines are those of the one taken before
            try:
                taken.seed_made(self)
            except Exception as exc:
                log.info("saved %s lines not taken: %s", layer, exc)
        saved = self.saved.pop(layer, None)
        if saved is None:
            return None
        try:
            if saved.holds(entries):
                saved.lines = self
                self._taken[layer] = saved
                return saved
            saved.seed_made(self)  # not the same entries: its lines still save making most of them again
        except Exception as exc:  # a damaged or unreadable saved layer: index the snapshot instead
            log.info("saved %s layer not taken: %s", layer, exc)
        return None


class LayerIndex:
    """A layer's entries in base order (the active ones, then the archived ones), with an
    inverted index from term to active position, so a query scores only the entries that
    share a term with it. Built from entries (a store snapshot) or from a saved state (the
    prepared index of `core.store.prepared`): the rule reads both the same way."""

    def __init__(self, layer: str, n_active: int, rank: Sequence[int], postings: Mapping[str, Sequence[int] | bytes],
                 archived_terms: list, entries: list[Entry | None], rows: Sequence[tuple] | None = None,
                 shown: Sequence[Shown] | None = None, made: dict[tuple[int, bool], Sequence[Made]] | None = None,
                 frags: dict[tuple[int, bool], Sequence[tuple[str, str]]] | None = None,
                 lines: LineCache | None = None, groups: list[tuple[int, int, int]] | None = None,
                 packed: bool = False):
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
        self._packed = packed  # postings as bytes of native ints (saved), read per term
        # (rank, start, stop): the ranges of active positions of one importance (saved, or found here)
        self.groups = groups if groups is not None else _groups(rank, n_active)
        self.semantic_vectors: Any = None  # §13: (model tag, each position's vector), once asked for

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
            "layer": _plain(self.layer), "n_active": self.n_active, "rank": array("b", self.rank).tobytes(),
            "groups": [tuple(g) for g in self.groups],
            "postings": {t: p if isinstance(p, bytes) else array("i", p).tobytes()
                         for t, p in self.postings.items()},
            "archived_terms": [sorted(t) for t in self._archived_terms], "key": list(maker.key),
            "rows": [entry_row(self.entry(p)) for p in range(self.size)],
            "shown": [self.shown(p) for p in range(self.size)],
            "made": [self.made(p, maker) for p in range(self.size)],
            "frags": [self.candidate_json(p, maker) for p in range(self.size)],
        }

    @classmethod
    def from_state(cls, core: dict, rows: Sequence[tuple], shown: Sequence[Shown], made: Sequence[Made],
                   frags: Sequence[tuple[str, str]], postings: Mapping[str, bytes]) -> LayerIndex:
        """An index from a saved state; `rows`, `shown`, `made`, `frags` and `postings` may be
        lazy (read when first asked for)."""
        key = tuple(core["key"])
        rank = memoryview(core["rank"]).cast("b")  # read in place: no list of every position's rank
        return cls(core["layer"], core["n_active"], rank, postings, core["archived_terms"],
                   [None] * core["size"], rows, shown, {key: made}, {key: frags}, groups=core["groups"], packed=True)

    def holds(self, entries: Sequence[Entry]) -> bool:
        """Whether this (saved) index has exactly `entries`, field for field (then it answers
        for them as an index built from them would)."""
        if self.size != len(entries) or self._rows is None:
            return False
        rows = self._rows.materialize() if hasattr(self._rows, "materialize") else list(self._rows)
        by_id = {row[_ID_AT]: row for row in rows}
        if len(by_id) != len(entries):
            return False
        for e in entries:  # the fields as saved (`entry_row`), path apart: fields in C, no copy
            row = by_id.get(e.id)
            if row is None or _ALL_BUT_PATH(row) != _FIELDS_BUT_PATH(e):
                return False
            if row[_PATH_AT] != (None if e.path is None else str(e.path)):
                return False
        return True

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

    def fields(self, pos: int, names: Sequence[str]) -> tuple:
        """Some of a position's entry fields, from the saved row when the entry is not made yet
        (§13 reads the text fields and dates of every position: making 40,000 entries costs more)."""
        e = self._entries[pos]
        if e is None and self._rows is not None:
            row = self._rows[pos]
            return tuple(row[_FIELD_AT[name]] for name in names)
        e = self.entry(pos)
        return tuple(getattr(e, name) for name in names)

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

    def candidate_json(self, pos: int, maker: LineMaker) -> tuple[str, str]:
        frags = self._frags.get(maker.key)
        if frags is not None:
            return frags[pos]
        return json_pieces(self.layer, self.shown(pos), self.made(pos, maker))

    def candidate_jsons(self, positions: Sequence[int], maker: LineMaker) -> Iterable[tuple[str, str]]:
        frags = self._frags.get(maker.key)
        if frags is not None:
            return map(frags.__getitem__, positions)
        return [json_pieces(self.layer, self.shown(p), self.made(p, maker)) for p in positions]

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

    def seed_made(self, lines: LineCache) -> None:
        """Put this index's saved lines into `lines`, by text."""
        if self._rows is None or not hasattr(self._rows, "materialize"):
            return
        for key, made in self._made.items():
            known = lines.made.setdefault(key, {})
            if len(known) + self.size > lines.LIMIT:
                return
            made = made.materialize() if hasattr(made, "materialize") else made
            for row, line in zip(self._rows.materialize(), made):
                known[row[_TEXT_AT]] = line

    def preload(self, maker: LineMaker, as_json: bool = False) -> None:
        """Read every saved JSON piece (`as_json`) or line at once (before producing every candidate)."""
        for kept in (self._frags,) if as_json else (self._made,):
            seq = kept.get(maker.key)
            if seq is not None and not isinstance(seq, list) and hasattr(seq, "materialize"):
                kept[maker.key] = seq.materialize()

    # ------------------------------------------------------------------ the query
    def shared(self, q: frozenset[str]) -> Mapping[int, int]:
        """position -> |Q ∩ M| for every active entry sharing a term with the query."""
        postings = self.postings
        found: Iterable[Iterable[int]] = (postings[t] for t in q if t in postings)
        if self._packed:  # saved as bytes of native ints: read only the query's terms
            found = (memoryview(b).cast("i") for b in found)  # type: ignore[arg-type]
        return Counter(chain.from_iterable(found))  # counted in C

    def in_order(self, counts: Mapping[int, int], scored_only: bool) -> Iterator[tuple[int, Sequence[int]]]:
        """Active positions in §5 order (importance, score desc, then base order) as runs of one
        `|Q ∩ M|`: (count, positions). With `scored_only`, only the positions with a count.
        Within an importance group the positions of one count are found in C (a pass over the
        counts per count value, only as far as the walk goes), and the unscored ones are the
        group's range less the scored: no per-position sorting key."""
        levels = sorted(set(counts.values()), reverse=True)
        found: dict[int, list[int]] = {}  # count -> its positions, ascending (over the whole layer)

        def level(n: int) -> list[int]:
            got = found.get(n)
            if got is None:
                got = found[n] = sorted(compress(counts.keys(), map(n.__eq__, counts.values())))
            return got

        for _, start, stop in self.groups:
            if counts:
                if (stop - start) * len(levels) < len(counts):  # a small group: its own positions
                    here = list(compress(range(start, stop), map(counts.__contains__, range(start, stop))))
                    for n in levels:
                        run = [p for p in here if counts[p] == n]
                        if run:
                            yield n, run
                else:
                    for n in levels:
                        every = level(n)
                        run = every[bisect_left(every, start):bisect_left(every, stop)]
                        if run:
                            yield n, run
            if not scored_only and stop > start:
                rest = list(filterfalse(counts.__contains__, range(start, stop))) if counts else range(start, stop)
                if rest:
                    yield 0, rest
