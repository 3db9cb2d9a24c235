"""A saved layer patched by a few changed entries: `Merge` says where the saved positions
(less those taken out) and the added entries go in the layer's new base order,
`PatchedLayer` answers as the index of the whole layer would without copying the saved one,
and `splice` makes the whole layer's saved state from the saved values and the added ones."""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any

from ..injection import LineMaker, Made, Shown, base_key
from ..model import Entry, Layer
from ..relevance import Focus
from .candidate_json import json_record, json_run
from .entry_rows import EXPIRES_AT, ID_AT, PINNED_AT, entry_row, plain, scoped_rows
from .layer_index import LayerIndex, as_ints, rank_groups, saved_focus, saved_list
from .level_counts import LevelCounts
from .line_cache import LineCache
from .pane_order import PANE_FIELDS, PANE_OF_ROW, PaneGroup, PaneState, pane_state
from .saved_file import Records


def merged_focus(base: Focus | None, added: Focus | None, rows: Sequence[tuple[Any, ...]]) -> Focus | None:
    """`Focus` of a merged layer: covered when both parts are, pinned as its rows say."""
    if base is None or added is None:
        return None
    return Focus(frozenset(p for p, row in enumerate(rows) if row[PINNED_AT]), base.covers and added.covers)


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
    """`rank_groups` of ranks that are sorted (each rank one run), found with bytes searches."""
    raw = rank[:n_active].tobytes()
    groups: list[tuple[int, int, int]] = []
    pos = 0
    while pos < n_active:
        value = raw[pos:pos + 1]
        stop = raw.rfind(value, pos) + 1
        if raw.count(value, pos, stop) != stop - pos:  # not one run: the plain walk
            return rank_groups(rank, n_active)
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
        """`LayerIndex.shared` of the whole layer: for `LayerIndex.BITMAP_MIN` active entries
        or more, as bitmaps (`LevelCounts`) made from the saved layer's, shifted run by run
        (`_bits`), rather than a dict of every position sharing a term with the query."""
        if self.n_active >= LayerIndex.BITMAP_MIN:
            return LevelCounts([self._bits(t) for t in q if t in self.base.postings or t in self.added.postings])
        postings, n_active, merge = self.base.postings, self.base.n_active, self.merge
        found = (piece for t in q if t in postings
                 for piece in merge.shifted(as_ints(postings[t]), n_active))
        counts = Counter(chain.from_iterable(found))
        added_at = merge.added_at
        for pos, n in self.added.shared(q).items():
            counts[added_at[pos]] = n
        return counts

    def _bits(self, term: str) -> int:
        """The bitmap of the active positions with `term`: the saved layer's, each run of its
        positions moved to where `Merge` puts it (a few big-integer operations per run), and
        the added entries' at their new positions."""
        base, merge = self.base, self.merge
        out = 0
        if term in base.postings:
            bits = base._bits(term)
            for first, stop, shift in merge.base_runs:
                if first >= base.n_active:
                    break
                piece = (bits >> first) & ((1 << (min(stop, base.n_active) - first)) - 1)
                if piece:
                    out |= piece << (first + shift)
        added = self.added.postings.get(term)
        if added is not None:
            for pos in as_ints(added):
                out |= 1 << merge.added_at[pos]
        return out

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
        saved = self.base.saved_json.get(maker.key)
        if not isinstance(saved, Records):
            return None
        records = saved.each
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


def splice(base: LayerIndex, removed: Iterable[int], added: LayerIndex, maker: LineMaker) -> tuple[dict[str, Any], list[list[Any]], dict[str, bytes]]:
    """The state (`LayerIndex.state`: its core, its per-position lists and its postings) of
    the whole layer once `removed` are taken out of `base` and `added` taken in, made from the
    saved values: only the added entries get their lines and JSON made."""
    merge = Merge(base, removed, added)
    key = maker.key
    theirs = added.state(maker)
    mine = [saved_list(base.rows, base.size, lambda p: entry_row(base.entry(p))),
            saved_list(base.saved_shown, base.size, lambda p: tuple(base.shown(p))),
            saved_list(base.saved_made.get(key), base.size, lambda p: tuple(base.made(p, maker))),
            saved_list(base.saved_json.get(key), base.size, lambda p: base.candidate_json(p, maker))]
    lists: list[list[Any]] = [[], [], [], []]
    archived: list[list[str]] = []
    for at, new, src, n in merge.runs:
        for out, values_mine, values_theirs in zip(lists, mine, [theirs[k] for k in ("rows", "shown", "made", "frags")]):
            out += (values_theirs if new else values_mine)[src:src + n]
        if at >= merge.n_active:
            if new:
                archived += theirs["archived_terms"][src - added.n_active:src - added.n_active + n]
            else:
                archived += [sorted(t) for t in base.archived[src - base.n_active:src - base.n_active + n]]
    postings: dict[str, array[int]] = {}
    for term in base.postings:
        found = array("i")
        for piece in merge.shifted(as_ints(base.postings[term]), base.n_active):
            found.extend(piece)
        if found:
            postings[term] = found
    for term, raw in theirs["postings"].items():
        mapped = [merge.added_at[p] for p in memoryview(raw).cast("i")]
        had = postings.get(term)
        postings[term] = array("i", sorted(chain(had, mapped)) if had is not None else mapped)
    rank = merge.rank(base, added)
    core = {"layer": plain(base.layer), "n_active": merge.n_active, "rank": rank.tobytes(),
            "groups": _sorted_groups(rank, merge.n_active), "archived_terms": archived, "key": list(key),
            "size": merge.size, "pane": pane_state(base.layer, list(map(PANE_OF_ROW, lists[0]))),
            "scoped": list(scoped_rows(lists[0], merge.n_active).items()),
            "expiring": {row[ID_AT]: row[EXPIRES_AT] for row in lists[0] if row[EXPIRES_AT] is not None},
            "focus": saved_focus(merged_focus(base.focus(), added.focus(), lists[0]))}
    return core, lists, {term: found.tobytes() for term, found in postings.items()}
