"""What makes the §5 rule fast: a layer's candidates with an inverted index from term to
entry (`LayerIndex`), built from a store's snapshot or from the state `core.store.prepared`
saved, so that a later process answers without loading the memories.

`LayerIndex` implements the rule's `LayerCandidates` (`core.injection`); this module
imports the rule's types, never the reverse.
"""

from __future__ import annotations

import logging
from array import array
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, compress, filterfalse
from pathlib import Path
from typing import Any, cast

from ..bitmaps import bitmap
from ..injection import LineMaker, Made, Shown, base_key
from ..model import IMPORTANCE_RANK, Entry, with_enums
from ..relevance import Focus, focus_of, terms_of
from .candidate_json import json_pieces, json_pieces_many, json_run
from .entry_rows import (
    ENTRY_FIELDS,
    FIELD_AT,
    FIELDS_BUT_PATH,
    ID_AT,
    PATH_AT,
    ROW_BUT_PATH,
    SOURCE_AT,
    TEXT_AT,
    SavedMade,
    SavedShown,
    entry_row,
    plain,
    scoped_rows,
    shown_of,
)
from .level_counts import LevelCounts
from .line_cache import LineCache
from .pane_order import PANE_OF_ENTRY, PANE_OF_ROW, PaneState, pane_state
from .saved_file import Chunks, Records

log = logging.getLogger("memtui.injection")

_SHOWN_ID = Shown._fields.index("id")


def rank_groups(rank: Sequence[int], n_active: int) -> list[tuple[int, int, int]]:
    """(rank, start, stop) of each run of one importance rank among the active positions."""
    groups: list[tuple[int, int, int]] = []
    for pos in range(n_active):
        r = rank[pos]
        if groups and groups[-1][0] == r:
            groups[-1] = (r, groups[-1][1], pos + 1)
        else:
            groups.append((r, pos, pos + 1))
    return groups



def saved_focus(focus: Focus | None) -> dict[str, Any] | None:
    return None if focus is None else {"pinned": sorted(focus.pinned), "covers": focus.covers}


def read_focus(saved: Any) -> Focus | None:
    if not isinstance(saved, dict):
        return None
    return Focus(frozenset(saved.get("pinned", ())), bool(saved.get("covers", False)))


def as_ints(postings: Sequence[int] | bytes) -> Sequence[int]:
    """A posting list as ints: saved ones are bytes of native ints, read in place."""
    return memoryview(postings).cast("i") if isinstance(postings, bytes) else postings


def saved_list(seq: Sequence[Any] | None, size: int, make: Callable[[int], Any]) -> list[Any]:
    """A per-position list as one plain list: a saved one read whole, else `make` of each position."""
    if seq is None:
        return [make(p) for p in range(size)]
    return seq.materialize() if isinstance(seq, Chunks) else list(seq)


def snapshot_index(lines: LineCache, layer: str, entries: Sequence[Entry]) -> LayerIndex:
    """The index of a layer snapshot; the store's snapshots are tuples, reused (kept in
    `lines`) until it changes."""
    if not isinstance(entries, tuple):
        return LayerIndex.from_entries(layer, entries, lines)
    hit = lines.indexes.get((layer, id(entries)))
    if hit is not None and hit[0] is entries:  # the same tuple, not another one at its address
        return hit[1]
    index = _adopt(lines, layer, entries)
    if index is None:
        index = LayerIndex.from_entries(layer, entries, lines)
    if len(lines.indexes) >= lines.INDEXES:
        lines.indexes.clear()
    lines.indexes[(layer, id(entries))] = (entries, index)
    return index


def _adopt(lines: LineCache, layer: str, entries: tuple[Entry, ...]) -> LayerIndex | None:
    taken = lines.taken.pop(layer, None)
    if taken is not None:  # a later snapshot: most of its lines are those of the one taken before
        try:
            taken.seed_made(lines)
        except Exception as exc:
            log.info("saved %s lines not taken: %s", layer, exc)
    saved = lines.saved.pop(layer, None)
    if saved is None:
        return None
    try:
        if saved.holds(entries):
            saved.lines = lines
            lines.taken[layer] = saved
            return saved
        saved.seed_made(lines)  # not the same entries: its lines still save making most of them again
    except Exception as exc:  # a damaged or unreadable saved layer: index the snapshot instead
        log.info("saved %s layer not taken: %s", layer, exc)
    return None


class LayerIndex:
    """A layer's entries in base order (the active ones, then the archived ones), with an
    inverted index from term to active position, so a query scores only the entries that
    share a term with it. Built from entries (a store snapshot) or from a saved state (the
    prepared index of `core.store.prepared`): the rule reads both the same way."""

    BITMAP_MIN = 20_000  # active entries from which a query's counts are kept as bitmaps (`LevelCounts`)

    def __init__(self, layer: str, n_active: int, rank: Sequence[int], postings: Mapping[str, Sequence[int] | bytes],
                 archived_terms: list[Iterable[str]], entries: list[Entry | None], rows: Sequence[tuple[Any, ...]] | None = None,
                 shown: Sequence[SavedShown] | None = None, made: dict[tuple[int, bool], Sequence[SavedMade]] | None = None,
                 frags: dict[tuple[int, bool], Sequence[tuple[str, str]]] | None = None,
                 lines: LineCache | None = None, groups: list[tuple[int, int, int]] | None = None,
                 packed: bool = False):
        self.layer = layer
        self.lines = lines if lines is not None else LineCache()
        self.n_active = n_active
        self.size = len(entries)
        self.rank = rank
        self.postings = postings
        self.archived = archived_terms
        self._entries = entries
        self.rows = rows
        self.saved_shown = shown
        self.saved_made = made or {}
        self.saved_json = frags or {}
        self._packed = packed  # postings as bytes of native ints (saved), read per term
        # (rank, start, stop): the ranges of active positions of one importance (saved, or found here)
        self.groups = groups if groups is not None else rank_groups(rank, n_active)
        self.semantic_vectors: Any = None  # §13: (model tag, each position's vector), once asked for
        # (the conversation layer) memtui's change counter over the rows it is exactly current at, when known
        self.row_gen: int | None = None
        # the panes' order (`pane_state`): saved (a function reading its section), or found when first asked for
        self.pane_saved: PaneState | Callable[[], PaneState] | None = None
        self._scoped: dict[int, tuple[str, ...]] | None = None  # SPEC §16: saved, or found when first asked for
        self._expiring: dict[str, float] | None = None  # §18: saved, or found when first asked for
        # focused injection's narrowing (`focus`): saved, or found from the entries when first asked for
        self._focus: Focus | None = None
        self._focus_saved = False
        # the bitmaps (`bitmaps.bitmap`, little-endian bytes) of the frequent terms, saved beside the postings
        self.bitmaps: Mapping[str, bytes] = {}

    @classmethod
    def from_entries(cls, layer: str, entries: Sequence[Entry], lines: LineCache | None = None,
                     keep_terms: bool = True) -> LayerIndex:
        """The index of `entries`; the terms a conversation entry was made without are kept in
        `lines` for the next index of the layer, unless `keep_terms` is False (an index built
        once, as the prepared index's build makes it)."""
        active = sorted((e for e in entries if not e.archived), key=base_key)
        archived = sorted((e for e in entries if e.archived), key=base_key)
        ordered: list[Entry | None] = [*active, *archived]
        postings: defaultdict[str, list[int]] = defaultdict(list)
        terms = lines.terms_of if lines is not None and keep_terms else terms_of
        for pos, e in enumerate(active):
            for term in terms(e):
                postings[term].append(pos)
        rank = [IMPORTANCE_RANK.get(e.importance, 1) for e in ordered]  # type: ignore[union-attr]
        return cls(layer, len(active), rank, dict(postings), [terms(e) for e in archived], ordered, lines=lines)

    # ------------------------------------------------------------------ saved state
    def state(self, maker: LineMaker) -> dict[str, Any]:
        """Everything a later process needs to answer without the entries, as plain values
        (`core.store.prepared` saves it): per position the entry as a tuple, what a candidate
        shows of it and its line made with `maker`'s settings."""
        shown = [self.shown(p) for p in range(self.size)]
        if self.saved_made.get(maker.key) is not None:
            made = [self.made(p, maker) for p in range(self.size)]
        else:  # made in bulk, the lines known kept
            made = self.lines.make_many(maker, [self.text(p) for p in range(self.size)])
        frags = self.saved_json.get(maker.key)
        layer = plain(self.layer)
        saved_shown = cast(list[SavedShown], list(map(tuple, shown)))  # plain tuples, for marshal
        saved_made = cast(list[SavedMade], list(map(tuple, made)))
        return {
            "layer": layer, "n_active": self.n_active, "rank": array("b", self.rank).tobytes(),
            "groups": [tuple(g) for g in self.groups],
            "postings": {t: p if isinstance(p, bytes) else array("i", p).tobytes()
                         for t, p in self.postings.items()},
            "archived_terms": [sorted(t) for t in self.archived], "key": list(maker.key),
            "rows": [entry_row(self.entry(p)) for p in range(self.size)],
            "shown": saved_shown, "made": saved_made,
            "frags": [frags[p] for p in range(self.size)] if frags is not None else
                     json_pieces_many(layer, shown, made),
            "pane": self.pane(),
            "scoped": list(self.scoped().items()),
            "expiring": self.expiring(),
            "focus": saved_focus(self.focus() or focus_of(self.entry(p) for p in range(self.size))),
        }

    @classmethod
    def from_state(cls, core: dict[str, Any], rows: Sequence[tuple[Any, ...]], shown: Sequence[SavedShown], made: Sequence[SavedMade],
                   frags: Sequence[tuple[str, str]], postings: Mapping[str, bytes]) -> LayerIndex:
        """An index from a saved state; `rows`, `shown`, `made`, `frags` and `postings` may be
        lazy (read when first asked for)."""
        key = tuple(core["key"])
        rank = memoryview(core["rank"]).cast("b")  # read in place: no list of every position's rank
        index = cls(core["layer"], core["n_active"], rank, postings, core["archived_terms"],
                    [None] * core["size"], rows, shown, {key: made}, {key: frags}, groups=core["groups"], packed=True)
        index.pane_saved = core.get("pane")
        scoped = core.get("scoped")
        index._scoped = None if scoped is None else {pos: tuple(globs) for pos, globs in scoped}
        expiring = core.get("expiring")
        index._expiring = dict(expiring) if isinstance(expiring, dict) else None
        index._focus, index._focus_saved = read_focus(core.get("focus")), True
        return index

    def focus(self) -> Focus | None:
        """What focused injection's narrowing needs (`Focus`): saved, or found from the
        entries when they are all made (an index built from entries); else None (unknown:
        focused injection then scores every entry)."""
        if self._focus is None and not self._focus_saved and all(e is not None for e in self._entries):
            self._focus = focus_of(cast(list[Entry], self._entries))
        return self._focus

    def expiring(self) -> dict[str, float]:
        """id -> `expires` of the entries whose file sets one (SPEC §18): few, so the
        injection finds the expired ones without reading every row."""
        if self._expiring is None:
            self._expiring = {entry_id: at for entry_id, at in
                              (self.fields(p, ("id", "expires")) for p in range(self.size)) if at is not None}
        return self._expiring

    def pane(self) -> PaneState:
        """The positions in the order the layer's pane lists them, and the conversation
        layer's groups (`pane_state`): as saved, else found from the entries (or rows)."""
        found = self.pane_saved
        if callable(found):
            found = found()
        if found is None:
            rows = self.rows
            if isinstance(rows, Chunks):
                fields = list(map(PANE_OF_ROW, rows.materialize(keep=False)))
            else:
                fields = [PANE_OF_ROW(rows[p]) if self._entries[p] is None and rows is not None
                          else PANE_OF_ENTRY(self.entry(p)) for p in range(self.size)]
            found = pane_state(self.layer, fields)
        self.pane_saved = found
        return found

    def scoped(self) -> Mapping[int, tuple[str, ...]]:
        """The active positions whose entry is scoped (SPEC §16), with the globs of its file."""
        if self._scoped is None:
            if self.rows is not None and all(e is None for e in self._entries[:self.n_active]):
                self._scoped = scoped_rows(saved_list(self.rows, self.size, lambda p: ()), self.n_active)
            else:
                self._scoped = {p: e.paths for p in range(self.n_active) if (e := self.entry(p)).paths}
        return self._scoped

    def all_entries(self) -> list[Entry]:
        """Every position's entry, in base order, made at once (from the saved rows: faster
        than one by one) and not kept here."""
        rows = self.rows
        if rows is None:
            return [self.entry(p) for p in range(self.size)]
        rows = rows.materialize(keep=False) if isinstance(rows, Chunks) else list(rows)
        made = self._entries
        if all(row[PATH_AT] is None for row in rows):
            return [e if e is not None else Entry(*with_enums(row)) for e, row in zip(made, rows)]  # Entry's fields in order
        return [e if e is not None else Entry(*with_enums((*row[:PATH_AT], None if row[PATH_AT] is None else Path(row[PATH_AT]),
                                                           *row[PATH_AT + 1:])))
                for e, row in zip(made, rows)]

    def each_entry(self) -> Iterator[Entry]:
        """Every position's entry in base order, those not made yet made from the saved rows a
        chunk at a time and kept neither here nor there (`core.store.saved_rows`)."""
        rows = self.rows
        if not isinstance(rows, Chunks):
            yield from map(self.entry, range(self.size))
            return
        made = self._entries
        pos = 0
        for part in rows.pieces():
            for row in part:
                e = made[pos]
                yield e if e is not None else _entry_of_row(row)
                pos += 1

    def entry_made(self, pos: int) -> Entry:
        """`entry(pos)`, made from its saved row without keeping it (nor the row's chunk)."""
        e = self._entries[pos]
        rows = self.rows
        if e is not None or not isinstance(rows, Chunks):
            return self.entry(pos)
        return _entry_of_row(rows.peek(pos))

    def each_fields(self, names: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """Some fields of every position's entry in base order (`fields`), read from the saved
        rows a chunk at a time as `each_entry` reads them, no entry made."""
        rows = self.rows
        if not isinstance(rows, Chunks):
            yield from (self.fields(p, names) for p in range(self.size))
            return
        at = [FIELD_AT[name] for name in names]
        made = self._entries
        pos = 0
        for part in rows.pieces():
            for row in part:
                e = made[pos]
                yield tuple([row[k] for k in at]) if e is None else tuple([getattr(e, name) for name in names])
                pos += 1

    def each_id(self) -> Iterator[str]:
        """Every position's entry id in base order, read as `each_entry` reads the rows."""
        shown = self.saved_shown
        if not isinstance(shown, Chunks):
            yield from (self.shown(p).id for p in range(self.size))
            return
        for part in shown.pieces():
            for values in part:
                yield values[_SHOWN_ID]

    def holds(self, entries: Sequence[Entry]) -> bool:
        """Whether this (saved) index has exactly `entries`, field for field (then it answers
        for them as an index built from them would)."""
        if self.size != len(entries) or self.rows is None:
            return False
        rows = self.rows.materialize() if isinstance(self.rows, Chunks) else list(self.rows)
        by_id = {row[ID_AT]: row for row in rows}
        if len(by_id) != len(entries):
            return False
        for e in entries:  # the fields as saved (`entry_row`), path apart: fields in C, no copy
            row = by_id.get(e.id)
            if row is None or ROW_BUT_PATH(row) != FIELDS_BUT_PATH(e):
                return False
            if row[PATH_AT] != (None if e.path is None else str(e.path)):
                return False
        return True

    # ------------------------------------------------------------------ per position
    def entry(self, pos: int) -> Entry:
        e = self._entries[pos]
        if e is None:
            assert self.rows is not None
            fields = dict(zip(ENTRY_FIELDS, with_enums(self.rows[pos])))
            if fields["path"] is not None:
                fields["path"] = Path(fields["path"])
            fields["tags"] = tuple(fields["tags"])
            e = self._entries[pos] = Entry(**fields)
        return e

    def fields(self, pos: int, names: Sequence[str]) -> tuple[Any, ...]:
        """Some of a position's entry fields, from the saved row when the entry is not made yet
        (§13 reads the text fields and dates of every position: making 40,000 entries costs more)."""
        e = self._entries[pos]
        if e is None and self.rows is not None:
            row = self.rows[pos]
            return tuple(row[FIELD_AT[name]] for name in names)
        e = self.entry(pos)
        return tuple(getattr(e, name) for name in names)

    def text(self, pos: int) -> str:
        e = self._entries[pos]
        if e is None and self.rows is not None:
            text: str = self.rows[pos][TEXT_AT]
            return text
        return self.entry(pos).text

    def shown(self, pos: int) -> Shown:
        if self.saved_shown is not None:
            return Shown._make(self.saved_shown[pos])
        return shown_of(self.entry(pos))

    def made(self, pos: int, maker: LineMaker) -> Made:
        made = self.saved_made.get(maker.key)
        if made is not None:
            return Made._make(made[pos])
        return self.lines.make(maker, self.text(pos))

    def candidate_json(self, pos: int, maker: LineMaker) -> tuple[str, str]:
        frags = self.saved_json.get(maker.key)
        if frags is not None:
            return frags[pos]
        return json_pieces(self.layer, self.shown(pos), self.made(pos, maker))

    def candidate_jsons(self, positions: Sequence[int], maker: LineMaker) -> Iterable[tuple[str, str]]:
        frags = self.saved_json.get(maker.key)
        if frags is not None:
            return map(frags.__getitem__, positions)
        return [json_pieces(self.layer, self.shown(p), self.made(p, maker)) for p in positions]

    def candidate_json_bytes(self, positions: Sequence[int], maker: LineMaker, middle: bytes) -> Iterator[bytes] | None:
        """`", ".join(before + middle + after)` of the positions' JSON pieces, UTF-8, in pieces
        (`json_run`), from the saved records; None when the layer keeps none."""
        saved = self.saved_json.get(maker.key)
        if not isinstance(saved, Records):
            return None
        return json_run(saved.records, positions, middle)

    def review_fields(self, pos: int) -> tuple[str, str, str, str]:
        """(layer, id, text, source) of a position, without making its entry (SPEC §12)."""
        e = self._entries[pos]
        if e is None and self.rows is not None:
            row = self.rows[pos]
            return self.layer, row[ID_AT], row[TEXT_AT], row[SOURCE_AT]
        e = self.entry(pos)
        return self.layer, e.id, e.text, e.source

    def positions_of(self, ids: frozenset[str]) -> frozenset[int]:
        """The active positions whose entry id is in `ids` (archived entries stay archived)."""
        if self.saved_shown is not None:
            return frozenset(p for p in range(self.n_active) if self.saved_shown[p][_SHOWN_ID] in ids)
        return frozenset(p for p in range(self.n_active) if self.entry(p).id in ids)

    def archived_terms(self, pos: int) -> frozenset[str]:
        t = self.archived[pos - self.n_active]
        return t if isinstance(t, frozenset) else frozenset(t)

    def seed_made(self, lines: LineCache) -> None:
        """Put this index's saved lines into `lines`, by text."""
        rows = self.rows
        if not isinstance(rows, Chunks):
            return
        for key, made in self.saved_made.items():
            known = lines.made.setdefault(key, {})
            if len(known) + self.size > lines.LIMIT:
                return
            made = made.materialize() if isinstance(made, Chunks) else made
            for row, line in zip(rows.materialize(), map(Made._make, made)):
                known[row[TEXT_AT]] = line

    def seed_positions(self, lines: LineCache, maker: LineMaker, positions: Iterable[int]) -> None:
        """Put the saved lines of these positions into `lines`, by text (an entry taken out
        and in again, its file edited, keeps its line)."""
        made = self.saved_made.get(maker.key)
        if made is None:
            return
        known = lines.made.setdefault(maker.key, {})
        for pos in positions:
            known[self.text(pos)] = Made._make(made[pos])

    def preload(self, maker: LineMaker, as_json: bool = False) -> None:
        """Read every saved JSON piece (`as_json`) or line at once (before producing every candidate)."""
        for kept in (self.saved_json,) if as_json else (self.saved_made,):
            seq = kept.get(maker.key)
            if as_json and isinstance(seq, Records):
                seq.whole()  # the records, read (and checked) at once and kept as bytes
            elif isinstance(seq, Chunks):
                kept[maker.key] = seq.materialize()

    # ------------------------------------------------------------------ the query
    def shared(self, q: frozenset[str]) -> Mapping[int, int]:
        """position -> |Q ∩ M| for every active entry sharing a term with the query; for a
        layer of `BITMAP_MIN` active entries or more, as bitmaps (`LevelCounts`)."""
        postings = self.postings
        if self.n_active >= self.BITMAP_MIN:
            return LevelCounts([self._bits(t) for t in q if t in postings])
        found: Iterable[Iterable[int]] = (postings[t] for t in q if t in postings)
        if self._packed:  # saved as bytes of native ints: read only the query's terms
            found = (memoryview(b).cast("i") for b in found)  # type: ignore[arg-type]
        return Counter(chain.from_iterable(found))  # counted in C

    def _bits(self, term: str) -> int:
        saved = self.bitmaps.get(term)
        if saved is not None:
            return int.from_bytes(saved, "little")
        return bitmap(as_ints(self.postings[term]), self.n_active)

    def in_order(self, counts: Mapping[int, int], scored_only: bool) -> Iterator[tuple[int, Sequence[int]]]:
        """Active positions in §5 order (importance, score desc, then base order) as runs of one
        `|Q ∩ M|`: (count, positions). With `scored_only`, only the positions with a count.
        Within an importance group the positions of one count are found in C (a pass over the
        counts per count value, only as far as the walk goes), and the unscored ones are the
        group's range less the scored: no per-position sorting key. From bitmaps
        (`LevelCounts`), each count's positions in a group come out of its bitmap."""
        if isinstance(counts, LevelCounts):
            yield from counts.in_order(self.groups, scored_only)
            return
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


def _entry_of_row(row: Sequence[Any]) -> Entry:
    """An entry from its saved row (`entry_rows.entry_row`): the path back to a Path, the
    vocabulary's strings back to its members."""
    return Entry(*with_enums((*row[:PATH_AT], None if row[PATH_AT] is None else Path(row[PATH_AT]), *row[PATH_AT + 1:])))
