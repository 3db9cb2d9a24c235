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
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from itertools import chain, compress, filterfalse
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, cast, overload

from ..injection import LineMaker, Made, Shown, base_key, candidate_fields
from ..model import IMPORTANCE_RANK, Entry, Layer
from ..relevance import Focus, focus_of, terms_of
from .level_counts import LevelCounts, bitmap

log = logging.getLogger("memtui.injection")

# `Made` and `Shown` as saved (marshal takes plain tuples only), and their names given back
# when read: a tuple made a NamedTuple in C, without a copy of its fields or a check.
SavedMade = tuple[str, bool, int, int]
SavedShown = tuple[str, str, str, str]
_as_made: Callable[[SavedMade], Made] = partial(tuple.__new__, Made)
_as_shown: Callable[[SavedShown], Shown] = partial(tuple.__new__, Shown)
_SHOWN_ID = Shown._fields.index("id")

# An entry as a plain tuple (for the prepared index): Entry's fields but `terms`, path as a string.
ENTRY_FIELDS = tuple(f.name for f in dataclasses.fields(Entry) if f.name != "terms")
_PATH_AT = ENTRY_FIELDS.index("path")
_TEXT_AT = ENTRY_FIELDS.index("text")
_ID_AT = ENTRY_FIELDS.index("id")
_SOURCE_AT = ENTRY_FIELDS.index("source")
_EXPIRES_AT = ENTRY_FIELDS.index("expires")
_PINNED_AT = ENTRY_FIELDS.index("pinned")
_FIELD_AT = {name: i for i, name in enumerate(ENTRY_FIELDS)}
_FIELDS_BUT_PATH = attrgetter(*(name for name in ENTRY_FIELDS if name != "path"))
_ALL_BUT_PATH = itemgetter(*(i for i, name in enumerate(ENTRY_FIELDS) if name != "path"))


_ALL_FIELDS = attrgetter(*ENTRY_FIELDS)
_LAYER_AT = ENTRY_FIELDS.index("layer")
_TAGS_AT = ENTRY_FIELDS.index("tags")
_PATHS_AT = ENTRY_FIELDS.index("paths")
_ROW_TYPES = frozenset({str, int, float, bool, type(None), tuple})


# ---------------------------------------------------------------------- the panes' order
# What a pane's order depends on, per entry (a saved row's fields, or an entry's attributes).
PANE_FIELDS = ("conversation_title", "updated_at", "id", "rel_path", "line_start")
_PANE_OF_ROW = itemgetter(*(ENTRY_FIELDS.index(name) for name in PANE_FIELDS))
_PANE_OF_ENTRY = attrgetter(*PANE_FIELDS)
PaneGroup = tuple[str, float, int]  # a conversation's title, its newest memory's updated_at, its memories listed
PaneState = tuple[Sequence[int], list[PaneGroup]]


def conversation_keys(items: Sequence[tuple[str, float, str]]) -> list[tuple[bool, float, str, float, str]]:
    """The sort key of each (conversation title, updated_at, id) for the conversation pane:
    its conversation's newest memory (descending), its title, then the memory's own date
    (descending) and id. The pane groups by title in this order."""
    newest: dict[str, float] = {}
    for title, updated, _ in items:
        if updated > newest.get(title, float("-inf")):
            newest[title] = updated
    return [(not title, -newest[title], title, -updated, entry_id) for title, updated, entry_id in items]


def pane_state(layer: str, fields: Sequence[tuple[Any, ...]]) -> PaneState:
    """The positions of a layer's entries (each given as its `PANE_FIELDS`) in the order its
    pane lists them ("file order"): Markdown by file (root-relative path) and line, in a
    stable sort; conversation memories by conversation, the one added to last first, each
    newest first (memories without a conversation last), with the conversations' groups
    (title, newest updated_at, count) in that order."""
    if layer != Layer.CONVERSATION:
        return array("i", sorted(range(len(fields)), key=[(f[3], f[4]) for f in fields].__getitem__)), []
    keys = conversation_keys([f[:3] for f in fields])
    order = array("i", sorted(range(len(fields)), key=keys.__getitem__))
    groups: list[PaneGroup] = []
    last: str | None = None
    for pos in order:
        title = fields[pos][0]
        if title != last or not groups:
            groups.append((title, -keys[pos][1], 1))
            last = title
        else:
            head = groups[-1]
            groups[-1] = (head[0], head[1], head[2] + 1)
    return order, groups


def saved_pane(state: PaneState) -> list[Any]:
    """A pane state as marshal saves it (plain bytes and tuples)."""
    order, groups = state
    raw = order.tobytes() if isinstance(order, (array, memoryview)) else array("i", order).tobytes()
    return [raw, [(_plain(title), float(newest), count) for title, newest, count in groups]]


def read_pane(saved: Sequence[Any]) -> PaneState:
    raw, groups = saved
    return memoryview(raw).cast("i"), [tuple(g) for g in groups]


def entry_row(entry: Entry) -> tuple[Any, ...]:
    row = list(_ALL_FIELDS(entry))
    row[_PATH_AT] = None if entry.path is None else str(entry.path)
    row[_LAYER_AT] = _plain(row[_LAYER_AT])  # the Layer enum
    tags = row[_TAGS_AT]
    if type(tags) is not tuple or not _STR_TYPES.issuperset(map(type, tags)):
        row[_TAGS_AT] = _plain(tags)
    if not _ROW_TYPES.issuperset(map(type, row)):  # anything else not plain (checked in C)
        row = [_plain(value) for value in row]
    return tuple(row)


@overload
def _plain(value: str) -> str: ...
@overload
def _plain(value: object) -> object: ...
def _plain(value: object) -> object:
    """str subclasses (the Layer enum) as plain str, tuples of them too: marshal takes only plain types."""
    if isinstance(value, str):
        return str.__str__(value) if type(value) is not str else value
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


def merged_focus(base: Focus | None, added: Focus | None, rows: Sequence[tuple[Any, ...]]) -> Focus | None:
    """`Focus` of a merged layer: covered when both parts are, pinned as its rows say."""
    if base is None or added is None:
        return None
    return Focus(frozenset(p for p, row in enumerate(rows) if row[_PINNED_AT]), base.covers and added.covers)


def saved_focus(focus: Focus | None) -> dict[str, Any] | None:
    return None if focus is None else {"pinned": sorted(focus.pinned), "covers": focus.covers}


def read_focus(saved: Any) -> Focus | None:
    if not isinstance(saved, dict):
        return None
    return Focus(frozenset(saved.get("pinned", ())), bool(saved.get("covers", False)))


def scoped_rows(rows: Sequence[tuple[Any, ...]], n_active: int) -> dict[int, tuple[str, ...]]:
    """The active positions of scoped entries (SPEC §16) and their globs, from entry rows."""
    return {pos: tuple(row[_PATHS_AT]) for pos, row in enumerate(rows[:n_active]) if row[_PATHS_AT]}


def shown_of(entry: Entry) -> Shown:
    return Shown(_plain(entry.id), _plain(entry.source_ref), _plain(entry.importance), entry.updated_iso)


_SPLIT_AT = ', "score": null, "status": "'
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # what json.dumps(..., ensure_ascii=False) makes, once
_QUOTE = json.encoder.encode_basestring  # how that encoder writes a str (the C one when built)
_STR_TYPES = frozenset({str})


def json_pieces(layer: str, shown: Shown | SavedShown, made: Made | SavedMade) -> tuple[str, str]:
    """A candidate's JSON (`injection.candidate_fields`, as `json.dumps(..., ensure_ascii=False)`
    writes it) before its score and after its status. Every `"` inside a JSON string is
    escaped, so the first unescaped `, "score": ` is the key's. `shown` and `made` may be
    saved (plain) tuples: they are unpacked."""
    entry_id, source, importance, updated = shown
    line, clipped, _, tokens = made
    layer = _plain(layer)
    if _STR_TYPES.issuperset(map(type, (entry_id, layer, source, importance, updated, line))) \
            and type(clipped) is bool and type(tokens) is int:
        # the fields in `candidate_fields`' order, each written as the encoder writes it
        return (f'{{"id": {_QUOTE(entry_id)}, "layer": {_QUOTE(layer)}, "source": {_QUOTE(source)}, "score": ',
                f'", "clipped": {"true" if clipped else "false"}, "tokens": {tokens}, "line": {_QUOTE(line)}, '
                f'"importance": {_QUOTE(importance)}, "updated_at": {_QUOTE(updated)}}}')
    whole = _ENCODE(candidate_fields(entry_id, layer, source, None, "", _as_made(made), importance, updated))
    at = whole.index(_SPLIT_AT)
    return whole[: at + len(', "score": ')], whole[at + len(_SPLIT_AT):]


RECORD_SEP = b", "  # ends each saved JSON record: the separator between two candidates
RUN_BATCH = 8192  # candidates joined into one piece of `preview --json`


def json_record(pieces: tuple[str, str]) -> bytes:
    """A candidate's two JSON pieces (`json_pieces`) as one UTF-8 record: joined by a NUL
    (never in JSON text: control characters are escaped) and followed by `RECORD_SEP`;
    UnicodeEncodeError for a lone surrogate."""
    return pieces[0].encode() + b"\x00" + pieces[1].encode() + RECORD_SEP


def split_record(record: bytes | memoryview) -> tuple[str, str]:
    """`json_record`'s pieces again."""
    before, after = bytes(record[:-len(RECORD_SEP)]).decode().split("\x00")
    return before, after


def json_run(records: Callable[[Sequence[int]], list[bytes | memoryview]], positions: Sequence[int],
             middle: bytes) -> Iterator[bytes]:
    """`", ".join(before + middle + after)` of the candidates at `positions`, UTF-8, from
    their records (`records` gives those of some positions), in pieces of `RUN_BATCH`
    candidates (`middle`: the score and status between a candidate's pieces)."""
    for i in range(0, len(positions), RUN_BATCH):
        part = b"".join(records(positions[i:i + RUN_BATCH])).replace(b"\x00", middle)
        yield part if i + RUN_BATCH < len(positions) else part[:-len(RECORD_SEP)]


def json_pieces_many(layer: str, shown: Sequence[Shown | SavedShown], made: Sequence[Made | SavedMade]) -> list[tuple[str, str]]:
    """`[json_pieces(layer, s, m) for s, m in zip(shown, made)]`: when every field is of the
    type the encoder writes as `json_pieces` does (checked over whole columns, in C), written
    without a check per candidate, the layer's own JSON once."""
    quote, layer = _QUOTE, _plain(layer)
    if type(layer) is str and _STR_TYPES.issuperset(map(type, chain.from_iterable(shown))) \
            and _STR_TYPES.issuperset(map(type, map(itemgetter(0), made))) \
            and {bool}.issuperset(map(type, map(itemgetter(1), made))) and {int}.issuperset(map(type, map(itemgetter(3), made))):
        lay = quote(layer)
        return [(f'{{"id": {quote(entry_id)}, "layer": {lay}, "source": {quote(source)}, "score": ',
                 f'", "clipped": {"true" if clipped else "false"}, "tokens": {tokens}, "line": {quote(line)}, '
                 f'"importance": {quote(importance)}, "updated_at": {quote(updated)}}}')
                for (entry_id, source, importance, updated), (line, clipped, _, tokens) in zip(shown, made)]
    return [json_pieces(layer, s, m) for s, m in zip(shown, made)]


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
        self.terms: dict[str, tuple[str, tuple[str, ...], frozenset[str]]] = {}  # see terms_of
        self._words: dict[str, str] = {}

    def terms_of(self, entry: Entry) -> frozenset[str]:
        """`relevance.terms_of`, kept for a conversation entry made without its terms (a loaded
        store's) while its text and tags stay: a changed row rebuilds its layer's index, and
        the other rows' terms are not made again. Only an index built from entries asks."""
        if entry.terms or entry.layer != Layer.CONVERSATION:
            return entry.terms
        known = self.terms.get(entry.id)
        if known is not None and known[0] == entry.text and known[1] == entry.tags:
            return known[2]
        share = self._words.setdefault  # a few thousand distinct terms among tens of thousands of rows
        found = frozenset([share(t, t) for t in terms_of(entry)])
        if len(self.terms) >= self.LIMIT:
            self.terms.clear()
            self._words.clear()
        self.terms[entry.id] = (entry.text, entry.tags, found)
        return found

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

    def make_many(self, maker: LineMaker, texts: Sequence[str]) -> list[Made]:
        """`[self.make(maker, text) for text in texts]`, the lines not known yet made in bulk
        (`LineMaker.made_many`), each distinct text once."""
        known = self.made.get(maker.key)
        if known is None:
            known = self.made[maker.key] = {}
        todo = list(dict.fromkeys(filterfalse(known.__contains__, texts)))
        if todo:
            known.update(zip(todo, maker.made_many(todo)))
        made = list(map(known.__getitem__, texts))
        if len(known) >= self.LIMIT:
            known.clear()
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
        # (the conversation layer) memtui's change counter over the rows it is exactly current at, when known
        self.row_gen: int | None = None
        # the panes' order (`pane_state`): saved (a function reading its section), or found when first asked for
        self._pane: PaneState | Callable[[], PaneState] | None = None
        self._scoped: dict[int, tuple[str, ...]] | None = None  # SPEC §16: saved, or found when first asked for
        self._expiring: dict[str, float] | None = None  # §18: saved, or found when first asked for
        # focused injection's narrowing (`focus`): saved, or found from the entries when first asked for
        self._focus: Focus | None = None
        self._focus_saved = False
        # the bitmaps (`level_counts.bitmap`, little-endian bytes) of the frequent terms, saved beside the postings
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
        if self._made.get(maker.key) is not None:
            made = [self.made(p, maker) for p in range(self.size)]
        else:  # made in bulk, the lines known kept
            made = self.lines.make_many(maker, [self.text(p) for p in range(self.size)])
        frags = self._frags.get(maker.key)
        layer = _plain(self.layer)
        saved_shown = cast(list[SavedShown], list(map(tuple, shown)))  # plain tuples, for marshal
        saved_made = cast(list[SavedMade], list(map(tuple, made)))
        return {
            "layer": layer, "n_active": self.n_active, "rank": array("b", self.rank).tobytes(),
            "groups": [tuple(g) for g in self.groups],
            "postings": {t: p if isinstance(p, bytes) else array("i", p).tobytes()
                         for t, p in self.postings.items()},
            "archived_terms": [sorted(t) for t in self._archived_terms], "key": list(maker.key),
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
        index._pane = core.get("pane")
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
        found = self._pane
        if callable(found):
            found = found()
        if found is None:
            rows = self._rows
            if rows is not None and hasattr(rows, "materialize"):
                fields = list(map(_PANE_OF_ROW, rows.materialize(keep=False)))
            else:
                fields = [_PANE_OF_ROW(rows[p]) if self._entries[p] is None and rows is not None
                          else _PANE_OF_ENTRY(self.entry(p)) for p in range(self.size)]
            found = pane_state(self.layer, fields)
        self._pane = found
        return found

    def scoped(self) -> Mapping[int, tuple[str, ...]]:
        """The active positions whose entry is scoped (SPEC §16), with the globs of its file."""
        if self._scoped is None:
            if self._rows is not None and all(e is None for e in self._entries[:self.n_active]):
                self._scoped = scoped_rows(_saved_list(self._rows, self.size, lambda p: ()), self.n_active)
            else:
                self._scoped = {p: e.paths for p in range(self.n_active) if (e := self.entry(p)).paths}
        return self._scoped

    def all_entries(self) -> list[Entry]:
        """Every position's entry, in base order, made at once (from the saved rows: faster
        than one by one) and not kept here."""
        rows = self._rows
        if rows is None:
            return [self.entry(p) for p in range(self.size)]
        rows = rows.materialize(keep=False) if hasattr(rows, "materialize") else list(rows)
        made = self._entries
        if all(row[_PATH_AT] is None for row in rows):
            return [e if e is not None else Entry(*row) for e, row in zip(made, rows)]  # the row is Entry's fields in order
        return [e if e is not None else Entry(*(*row[:_PATH_AT], None if row[_PATH_AT] is None else Path(row[_PATH_AT]),
                                                 *row[_PATH_AT + 1:]))
                for e, row in zip(made, rows)]

    def each_entry(self) -> Iterator[Entry]:
        """Every position's entry in base order, those not made yet made from the saved rows a
        chunk at a time and kept neither here nor there (`core.store.saved_rows`)."""
        pieces = getattr(self._rows, "pieces", None)
        if pieces is None:
            yield from map(self.entry, range(self.size))
            return
        made = self._entries
        pos = 0
        for part in pieces():
            for row in part:
                e = made[pos]
                yield e if e is not None else Entry(*(*row[:_PATH_AT], None if row[_PATH_AT] is None else Path(row[_PATH_AT]),
                                                      *row[_PATH_AT + 1:]))
                pos += 1

    def entry_made(self, pos: int) -> Entry:
        """`entry(pos)`, made from its saved row without keeping it (nor the row's chunk)."""
        e = self._entries[pos]
        peek = getattr(self._rows, "peek", None)
        if e is not None or peek is None:
            return self.entry(pos)
        row = peek(pos)
        return Entry(*(*row[:_PATH_AT], None if row[_PATH_AT] is None else Path(row[_PATH_AT]), *row[_PATH_AT + 1:]))

    def each_id(self) -> Iterator[str]:
        """Every position's entry id in base order, read as `each_entry` reads the rows."""
        pieces = getattr(self._shown, "pieces", None)
        if pieces is None:
            yield from (self.shown(p).id for p in range(self.size))
            return
        for part in pieces():
            for shown in part:
                yield shown[_SHOWN_ID]

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

    def fields(self, pos: int, names: Sequence[str]) -> tuple[Any, ...]:
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
            text: str = self._rows[pos][_TEXT_AT]
            return text
        return self.entry(pos).text

    def shown(self, pos: int) -> Shown:
        if self._shown is not None:
            return _as_shown(self._shown[pos])
        return shown_of(self.entry(pos))

    def made(self, pos: int, maker: LineMaker) -> Made:
        made = self._made.get(maker.key)
        if made is not None:
            return _as_made(made[pos])
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

    def candidate_json_bytes(self, positions: Sequence[int], maker: LineMaker, middle: bytes) -> Iterator[bytes] | None:
        """`", ".join(before + middle + after)` of the positions' JSON pieces, UTF-8, in pieces
        (`json_run`), from the saved records; None when the layer keeps none."""
        records = getattr(self._frags.get(maker.key), "records", None)
        if records is None:
            return None
        return json_run(records, positions, middle)

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
            return frozenset(p for p in range(self.n_active) if self._shown[p][_SHOWN_ID] in ids)
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
            for row, line in zip(self._rows.materialize(), map(_as_made, made)):
                known[row[_TEXT_AT]] = line

    def seed_positions(self, lines: LineCache, maker: LineMaker, positions: Iterable[int]) -> None:
        """Put the saved lines of these positions into `lines`, by text (an entry taken out
        and in again, its file edited, keeps its line)."""
        made = self._made.get(maker.key)
        if made is None:
            return
        known = lines.made.setdefault(maker.key, {})
        for pos in positions:
            known[self.text(pos)] = _as_made(made[pos])

    def preload(self, maker: LineMaker, as_json: bool = False) -> None:
        """Read every saved JSON piece (`as_json`) or line at once (before producing every candidate)."""
        for kept in (self._frags,) if as_json else (self._made,):
            seq = kept.get(maker.key)
            whole = getattr(seq, "whole", None) if as_json else None
            if whole is not None:
                whole()  # the records, read (and checked) at once and kept as bytes
            elif seq is not None and not isinstance(seq, list) and hasattr(seq, "materialize"):
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
        return bitmap(_as_ints(self.postings[term]), self.n_active)

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


# ---------------------------------------------------------------------- a saved layer patched
def _key_at(index: LayerIndex, pos: int) -> tuple[int, float, tuple[Any, ...]]:
    """`injection.base_key` of a position, from the saved row (no entry made)."""
    updated_at, entry_id, rel_path, line_start = index.fields(pos, ("updated_at", "id", "rel_path", "line_start"))
    place = (entry_id,) if index.layer == Layer.CONVERSATION else (rel_path, line_start)
    return (index.rank[pos], -updated_at, place)


def _rank_bytes(rank: Sequence[int], start: int, stop: int) -> bytes:
    if isinstance(rank, memoryview):
        return rank[start:stop].tobytes()
    return array("b", rank[start:stop]).tobytes()


def _sorted_groups(rank: memoryview, n_active: int) -> list[tuple[int, int, int]]:
    """`_groups` of ranks that are sorted (each rank one run), found with bytes searches."""
    raw = rank[:n_active].tobytes()
    groups: list[tuple[int, int, int]] = []
    pos = 0
    while pos < n_active:
        value = raw[pos:pos + 1]
        stop = raw.rfind(value, pos) + 1
        if raw.count(value, pos, stop) != stop - pos:  # not one run: the plain walk
            return _groups(rank, n_active)
        groups.append((rank[pos], pos, stop))
        pos = stop
    return groups


class Merge:
    """Where a saved layer's positions (less `removed`) and the entries of `added` (a small
    index of the entries new or changed since it was saved) go in the layer's new base order.
    Kept as runs `(first new position, from added?, first position in its source, length)`:
    a few runs however large the layer, so the saved postings are read shifted, not copied."""

    def __init__(self, base: LayerIndex, removed: Iterable[int], added: LayerIndex):
        self.removed = sorted(removed)
        self.runs: list[tuple[int, bool, int, int]] = []
        self._first = 0  # runs before it are never extended (the active ones, once the archived start)
        self.n_active = self._segment(base, added, 0, base.n_active, 0, added.n_active, 0)
        self._first = len(self.runs)
        self.size = self._segment(base, added, base.n_active, base.size, added.n_active, added.size, self.n_active)
        self.starts = [run[0] for run in self.runs]
        # (first, stop, shift) of each run of saved positions, in order
        self.base_runs = [(src, src + n, at - src) for at, new, src, n in self.runs if not new]
        self._base_starts = [run[0] for run in self.base_runs]
        self.added_at = [0] * added.size  # the new position of each added one
        for at, new, src, n in self.runs:
            if new:
                self.added_at[src:src + n] = range(at, at + n)

    def _emit(self, at: int, new: bool, src: int, n: int) -> None:
        if len(self.runs) > self._first:
            last_at, last_new, last_src, last_n = self.runs[-1]
            if last_new == new and last_at + last_n == at and last_src + last_n == src:
                self.runs[-1] = (last_at, new, last_src, last_n + n)
                return
        self.runs.append((at, new, src, n))

    def _segment(self, base: LayerIndex, added: LayerIndex, lo: int, hi: int, a_lo: int, a_hi: int, m: int) -> int:
        b = lo
        for i in range(a_lo, a_hi):
            key = base_key(added.entry(i))
            left, right = b, hi
            while left < right:  # the first saved position that goes after it
                mid = (left + right) // 2
                if _key_at(base, mid) < key:
                    left = mid + 1
                else:
                    right = mid
            m = self._base(left, m, b)
            self._emit(m, True, i, 1)
            m += 1
            b = left
        return self._base(hi, m, b)

    def _base(self, hi: int, m: int, lo: int) -> int:
        k = bisect_left(self.removed, lo)
        while k < len(self.removed) and self.removed[k] < hi:
            gone = self.removed[k]
            if gone > lo:
                self._emit(m, False, lo, gone - lo)
                m += gone - lo
            lo = gone + 1
            k += 1
        if hi > lo:
            self._emit(m, False, lo, hi - lo)
            m += hi - lo
        return m

    def source(self, pos: int) -> tuple[bool, int]:
        """(from added?, position there) of a new position."""
        at, new, src, _ = self.runs[bisect_right(self.starts, pos) - 1]
        return new, src + pos - at

    def of_base(self, pos: int) -> int | None:
        """The new position of a saved one (None: taken out)."""
        i = bisect_right(self._base_starts, pos) - 1
        if i < 0:
            return None
        first, stop, shift = self.base_runs[i]
        return pos + shift if pos < stop else None

    def shifted(self, positions: Sequence[int], n_active: int) -> Iterator[Iterable[int]]:
        """A saved posting list (sorted active positions) as pieces of new positions."""
        for first, stop, shift in self.base_runs:
            if first >= n_active:
                break
            i = bisect_left(positions, first)
            j = bisect_left(positions, stop, i)
            if i < j:
                piece = positions[i:j]
                yield piece if not shift else map(shift.__add__, piece)

    def rank(self, base: LayerIndex, added: LayerIndex) -> memoryview:
        parts = [_rank_bytes(added.rank if new else base.rank, src, src + n) for _, new, src, n in self.runs]
        return memoryview(b"".join(parts)).cast("b")


def _as_ints(postings: Sequence[int] | bytes) -> Sequence[int]:
    return memoryview(postings).cast("i") if isinstance(postings, bytes) else postings


class PatchedLayer:
    """A saved layer with the entries another writer changed since taken out and taken in
    again (`added`, a small index), answering as the index of the whole layer would:
    positions follow the new base order (`Merge`), each read from where it lives."""

    def __init__(self, base: LayerIndex, removed: Iterable[int], added: LayerIndex):
        self.layer = base.layer
        self.base = base
        self.added = added
        self.merge = Merge(base, removed, added)
        self.n_active = self.merge.n_active
        self.size = self.merge.size
        self.rank = self.merge.rank(base, added)
        self.groups = _sorted_groups(self.rank, self.n_active)
        self.semantic_vectors: Any = None
        self.row_gen: int | None = None  # as LayerIndex.row_gen
        self._run = self.merge.runs[0] if self.merge.runs else (0, False, 0, 0)
        self._removed = frozenset(self.merge.removed)
        self._pane: PaneState | None = None

    def pane(self) -> PaneState:
        """`LayerIndex.pane` of the whole layer, from the saved layer's: the conversations
        whose memories changed are ordered again, the others keep their saved order (their
        positions shifted), and the conversations are put in order again."""
        if self._pane is not None:
            return self._pane
        base, added, merge = self.base, self.added, self.merge
        if self.layer != Layer.CONVERSATION:
            self._pane = pane_state(self.layer, [self.fields(p, PANE_FIELDS) for p in range(self.size)])
            return self._pane
        order, groups = base.pane()
        new_of = array("i", [-1]) * base.size  # each saved position's new one (-1: taken out)
        for first, stop, shift in merge.base_runs:
            new_of[first:stop] = array("i", range(first + shift, stop + shift))
        theirs: defaultdict[str, list[tuple[float, str, int]]] = defaultdict(list)  # title -> (updated, id, new pos)
        for i in range(added.size):
            title, updated, entry_id = added.fields(i, PANE_FIELDS[:3])
            theirs[title].append((updated, entry_id, merge.added_at[i]))
        changed = set(theirs) | {base.fields(p, PANE_FIELDS[:1])[0] for p in self._removed}
        out: list[tuple[tuple[bool, float, str], Sequence[int], PaneGroup]] = []
        start = 0
        for title, newest, count in groups:
            saved = order[start:start + count]
            start += count
            if title not in changed:
                out.append(((not title, -newest, title), array("i", map(new_of.__getitem__, saved)),
                            (title, newest, count)))
                continue
            members = [(*base.fields(p, PANE_FIELDS[1:3]), new_of[p]) for p in saved if p not in self._removed]
            theirs[title] += members
        for title, members in theirs.items():
            if members:
                members.sort(key=lambda m: (-m[0], m[1]))
                newest = members[0][0]
                out.append(((not title, -newest, title), [m[2] for m in members], (title, newest, len(members))))
        out.sort(key=lambda group: group[0])
        self._pane = (array("i", chain.from_iterable(group[1] for group in out)), [group[2] for group in out])
        return self._pane

    def focus(self) -> Focus | None:
        """`Focus` of the whole layer: the saved layer's and the added entries' (covered when
        both are), the pinned at their new positions; None when either is unknown."""
        base, added = self.base.focus(), self.added.focus()
        if base is None or added is None:
            return None
        pinned = {new for p in base.pinned if (new := self.merge.of_base(p)) is not None}
        pinned.update(self.merge.added_at[p] for p in added.pinned)
        return Focus(frozenset(pinned), base.covers and added.covers)

    def expiring(self) -> dict[str, float]:
        """`LayerIndex.expiring` of the whole layer: the saved layer's, less the entries taken out."""
        gone = {self.base.fields(p, ("id",))[0] for p in self._removed}
        found = {entry_id: at for entry_id, at in self.base.expiring().items() if entry_id not in gone}
        found.update(self.added.expiring())
        return found

    def all_entries(self) -> list[Entry]:
        """`LayerIndex.all_entries` of the whole layer."""
        mine, theirs = self.base.all_entries(), self.added.all_entries()
        out: list[Entry] = []
        for _, new, src, n in self.merge.runs:
            out += (theirs if new else mine)[src:src + n]
        return out

    def _at(self, pos: int) -> tuple[LayerIndex, int]:
        run = self._run  # positions come mostly in order: the run of the last one first
        if not run[0] <= pos < run[0] + run[3]:
            run = self._run = self.merge.runs[bisect_right(self.merge.starts, pos) - 1]
        at, new, src, _ = run
        return (self.added if new else self.base), src + pos - at

    def shared(self, q: frozenset[str]) -> Mapping[int, int]:
        postings, n_active, merge = self.base.postings, self.base.n_active, self.merge
        found = (piece for t in q if t in postings
                 for piece in merge.shifted(_as_ints(postings[t]), n_active))
        counts = Counter(chain.from_iterable(found))
        added_at = merge.added_at
        for pos, n in self.added.shared(q).items():
            counts[added_at[pos]] = n
        return counts

    # the index's own walk: it reads `rank` and `groups` alone
    in_order = LayerIndex.in_order

    def archived_terms(self, pos: int) -> frozenset[str]:
        index, at = self._at(pos)
        return index.archived_terms(at)

    def scoped(self) -> Mapping[int, tuple[str, ...]]:
        found = {new: globs for p, globs in self.base.scoped().items() if (new := self.merge.of_base(p)) is not None}
        found.update((self.merge.added_at[p], globs) for p, globs in self.added.scoped().items())
        return found

    def positions_of(self, ids: frozenset[str]) -> frozenset[int]:
        found = {self.merge.of_base(p) for p in self.base.positions_of(ids)}
        found.discard(None)
        found.update(self.merge.added_at[p] for p in self.added.positions_of(ids))
        return frozenset(found)  # type: ignore[arg-type]

    def review_fields(self, pos: int) -> tuple[str, str, str, str]:
        index, at = self._at(pos)
        return index.review_fields(at)

    def entry(self, pos: int) -> Entry:
        index, at = self._at(pos)
        return index.entry(at)

    def entry_made(self, pos: int) -> Entry:
        index, at = self._at(pos)
        return index.entry_made(at)

    def fields(self, pos: int, names: Sequence[str]) -> tuple[Any, ...]:
        index, at = self._at(pos)
        return index.fields(at, names)

    def text(self, pos: int) -> str:
        index, at = self._at(pos)
        return index.text(at)

    def shown(self, pos: int) -> Shown:
        index, at = self._at(pos)
        return index.shown(at)

    def made(self, pos: int, maker: LineMaker) -> Made:
        index, at = self._at(pos)
        return index.made(at, maker)

    def candidate_json(self, pos: int, maker: LineMaker) -> tuple[str, str]:
        index, at = self._at(pos)
        return index.candidate_json(at, maker)

    def candidate_jsons(self, positions: Sequence[int], maker: LineMaker) -> list[tuple[str, str]]:
        return [self.candidate_json(pos, maker) for pos in positions]

    def candidate_json_bytes(self, positions: Sequence[int], maker: LineMaker, middle: bytes) -> Iterator[bytes] | None:
        """`LayerIndex.candidate_json_bytes`: the saved layer's records where they are."""
        records = getattr(self.base._frags.get(maker.key), "each", None)
        if records is None:
            return None
        base, at = self.base, self._at
        try:
            theirs = {pos: json_record(index.candidate_json(i, maker))
                      for pos in positions for index, i in (at(pos),) if index is not base}
        except UnicodeEncodeError:  # an added row's text with a lone surrogate: as text
            return None

        def of(batch: Sequence[int]) -> list[bytes | memoryview]:
            where = list(map(at, batch))
            saved = iter(records([i for index, i in where if index is base]))
            return [next(saved) if index is base else theirs[pos] for pos, (index, _) in zip(batch, where)]

        return json_run(of, positions, middle)

    def preload(self, maker: LineMaker, as_json: bool = False) -> None:
        self.base.preload(maker, as_json)

    def holds(self, entries: Sequence[Entry]) -> bool:
        return False

    def seed_made(self, lines: LineCache) -> None:
        self.base.seed_made(lines)


def _saved_list(seq: Sequence[Any] | None, size: int, make: Callable[[int], Any]) -> list[Any]:
    if seq is None:
        return [make(p) for p in range(size)]
    return seq.materialize() if hasattr(seq, "materialize") else list(seq)


def splice(base: LayerIndex, removed: Iterable[int], added: LayerIndex, maker: LineMaker) -> tuple[dict[str, Any], list[list[Any]], dict[str, bytes]]:
    """The state (`LayerIndex.state`: its core, its per-position lists and its postings) of
    the whole layer once `removed` are taken out of `base` and `added` taken in, made from the
    saved values: only the added entries get their lines and JSON made."""
    merge = Merge(base, removed, added)
    key = maker.key
    theirs = added.state(maker)
    mine = [_saved_list(base._rows, base.size, lambda p: entry_row(base.entry(p))),
            _saved_list(base._shown, base.size, lambda p: tuple(base.shown(p))),
            _saved_list(base._made.get(key), base.size, lambda p: tuple(base.made(p, maker))),
            _saved_list(base._frags.get(key), base.size, lambda p: base.candidate_json(p, maker))]
    lists: list[list[Any]] = [[], [], [], []]
    archived: list[list[str]] = []
    for at, new, src, n in merge.runs:
        for out, values_mine, values_theirs in zip(lists, mine, [theirs[k] for k in ("rows", "shown", "made", "frags")]):
            out += (values_theirs if new else values_mine)[src:src + n]
        if at >= merge.n_active:
            if new:
                archived += theirs["archived_terms"][src - added.n_active:src - added.n_active + n]
            else:
                archived += [sorted(t) for t in base._archived_terms[src - base.n_active:src - base.n_active + n]]
    postings: dict[str, array[int]] = {}
    for term in base.postings:
        found = array("i")
        for piece in merge.shifted(_as_ints(base.postings[term]), base.n_active):
            found.extend(piece)
        if found:
            postings[term] = found
    for term, raw in theirs["postings"].items():
        mapped = [merge.added_at[p] for p in memoryview(raw).cast("i")]
        had = postings.get(term)
        postings[term] = array("i", sorted(chain(had, mapped)) if had is not None else mapped)
    rank = merge.rank(base, added)
    core = {"layer": _plain(base.layer), "n_active": merge.n_active, "rank": rank.tobytes(),
            "groups": _sorted_groups(rank, merge.n_active), "archived_terms": archived, "key": list(key),
            "size": merge.size, "pane": pane_state(base.layer, list(map(_PANE_OF_ROW, lists[0]))),
            "scoped": list(scoped_rows(lists[0], merge.n_active).items()),
            "expiring": {row[_ID_AT]: row[_EXPIRES_AT] for row in lists[0] if row[_EXPIRES_AT] is not None},
            "focus": saved_focus(merged_focus(base.focus(), added.focus(), lists[0]))}
    return core, lists, {term: found.tobytes() for term, found in postings.items()}
