"""The doctor's findings as a face holds them: a large store's layer-wide kinds (one
`never_injected` per conversation row never injected: hundreds of thousands at ten times the
store) kept as a few strings and arrays instead of an object per finding.

`FoundSet` is the findings in the doctor's order (a `Sequence[Finding]`: each finding is made
when asked for); `FindingIndex` is each entry's findings, for the badges and the detail (a dict
entry only for an entry of a short run; a packed run is searched by bisection)."""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate

from .finding import Finding, conflict_file
from .made_when_asked import MadeWhenAsked
from .model import Entry

PACK_MIN = 16  # a run of at least this many findings of one kind and layer is packed


class PackedRun(MadeWhenAsked[Finding]):
    """Findings of one kind and layer, each about an entry, in the doctor's order: their entry
    ids as one string with offsets, their reasons and sources kept once per distinct value
    (a source that ends with its entry's id, as a conversation row's does, is kept without
    it), and the positions in id order (an id is found by bisection)."""

    __slots__ = ("kind", "layer", "_ids", "_reasons", "_heads", "_with_id", "_by_id")

    def __init__(self, found: Sequence[Finding]) -> None:
        first = found[0]
        self.kind, self.layer = first.kind, first.layer
        ids = [f.entry_id or "" for f in found]
        with_id = [bool(i) and f.source.endswith(i) for i, f in zip(ids, found, strict=True)]
        self._ids = _Strings(ids)
        self._reasons = _Table([f.reason for f in found])
        self._heads = _Table([f.source[:-len(i)] if cut else f.source for i, f, cut in zip(ids, found, with_id, strict=True)])
        self._with_id = array("B", with_id)
        self._by_id = _offsets(sorted(range(len(ids)), key=ids.__getitem__))

    @staticmethod
    def fits(finding: Finding, first: Finding) -> bool:
        """Whether `finding` belongs in a run that `first` starts."""
        return (bool(finding.entry_id) and finding.other_id is None and finding.other_source is None
                and finding.kind != "conflict"
                and finding.kind == first.kind and finding.layer == first.layer)

    def __len__(self) -> int:
        return len(self._ids)

    def item_at(self, i: int) -> Finding:
        index = self.list_index(i)
        entry_id = self._ids[index]
        source = self._heads[index] + entry_id if self._with_id[index] else self._heads[index]
        return Finding(self.kind, source, self._reasons[index], entry_id, self.layer)

    def positions_of(self, entry_id: str) -> list[int]:
        """The positions in the run of the findings about `entry_id`."""
        lo = bisect_left(self._by_id, entry_id, key=self._ids.__getitem__)
        hi = bisect_right(self._by_id, entry_id, lo, key=self._ids.__getitem__)
        return [self._by_id[i] for i in range(lo, hi)]


class _Strings:
    """Strings as one, with where each ends."""

    __slots__ = ("_joined", "_ends")

    def __init__(self, values: list[str]) -> None:
        self._joined = "".join(values)
        self._ends = _offsets(accumulate(map(len, values)))

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, index: int) -> str:
        return self._joined[self._ends[index - 1] if index else 0:self._ends[index]]


class _Table:
    """Strings with few distinct values: each value kept once, each row its value's number."""

    __slots__ = ("_values", "_rows")

    def __init__(self, values: list[str]) -> None:
        numbers: dict[str, int] = {}
        self._rows = _offsets([numbers.setdefault(v, len(numbers)) for v in values])
        self._values = _Strings(list(numbers))

    def __getitem__(self, index: int) -> str:
        return self._values[self._rows[index]]


def _offsets(values: Iterable[int]) -> array[int]:
    """Integers of at least 0 in 4 bytes each (8 from 4 GiB on)."""
    items = list(values)
    return array("I" if not items or max(items) < 2**32 else "Q", items)


Segment = list[Finding] | PackedRun


class FoundSet(MadeWhenAsked[Finding]):
    """The doctor's findings in its order, long runs of one kind and layer packed
    (`PackedRun`); equal to a list of the same findings."""

    def __init__(self, found: Iterable[Finding] = ()) -> None:
        self.segments: list[Segment] = _segments(list(found))
        self._starts = [0, *accumulate(len(s) for s in self.segments)]

    def __len__(self) -> int:
        return self._starts[-1]

    def item_at(self, i: int) -> Finding:
        index = self.list_index(i)
        at = bisect_right(self._starts, index) - 1
        return self.segments[at][index - self._starts[at]]

    def __iter__(self) -> Iterator[Finding]:
        for segment in self.segments:
            yield from segment

    def has_kind(self, kind: str) -> bool:
        """Whether any finding is of `kind` (a packed run answers for all of its findings)."""
        return any(s.kind == kind if isinstance(s, PackedRun) else any(f.kind == kind for f in s) for s in self.segments)

    def with_kind(self, kind: str, found: Sequence[Finding]) -> FoundSet:
        """These findings with those of `kind` replaced by `found`, in their place (where the
        first of them was). They must be loose findings (about a file, as `index` ones are),
        at least one: the packed runs are taken as they are, not made again."""
        segments: list[Segment] = []
        placed = False
        for segment in self.segments:
            if isinstance(segment, PackedRun):
                if segment.kind == kind:
                    raise ValueError(f"{kind} findings are packed: not replaced")
                segments.append(segment)
                continue
            kept: list[Finding] = []
            for finding in segment:
                if finding.kind != kind:
                    kept.append(finding)
                elif not placed:
                    kept += found
                    placed = True
            segments += _segments(kept)
        if not placed:
            raise ValueError(f"no {kind} finding to replace")
        out = FoundSet()
        out.segments = segments
        out._starts = [0, *accumulate(len(s) for s in segments)]
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FoundSet | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FoundSet({len(self)} findings, {sum(isinstance(s, PackedRun) for s in self.segments)} packed runs)"


def _segments(found: list[Finding]) -> list[Segment]:
    out: list[Segment] = []
    loose: list[Finding] = []
    i = 0
    while i < len(found):
        first = found[i]
        j = i + 1
        if PackedRun.fits(first, first):
            while j < len(found) and PackedRun.fits(found[j], first):
                j += 1
        if j - i >= PACK_MIN:
            if loose:
                out.append(loose)
                loose = []
            out.append(PackedRun(found[i:j]))
        else:
            loose.extend(found[i:j])
        i = j
    if loose:
        out.append(loose)
    return out


class FindingIndex:
    """Each entry's findings (its own in the doctor's order, then a `conflict` of its file: a
    half-merged file is marked on every entry it still has). `entries` is called only when a
    file-level finding needs them."""

    def __init__(self, found: FoundSet | Iterable[Finding] = (),
                 entries: Callable[[], Iterable[Entry]] = tuple) -> None:
        found = found if isinstance(found, FoundSet) else FoundSet(found)
        self._loose: dict[str, list[tuple[int, Finding]]] = {}
        self._runs: list[tuple[int, PackedRun]] = []
        files: dict[tuple[str | None, str], list[Finding]] = {}
        start = 0
        for segment in found.segments:
            if isinstance(segment, PackedRun):
                self._runs.append((start, segment))
            else:
                for offset, finding in enumerate(segment):
                    if finding.entry_id:
                        self._loose.setdefault(finding.entry_id, []).append((start + offset, finding))
                    elif finding.kind == "conflict":
                        files.setdefault(conflict_file(finding), []).append(finding)
            start += len(segment)
        self._files: dict[str, tuple[Finding, ...]] = {}
        if files:
            for entry in entries():
                marked = files.get((entry.layer, entry.rel_path))
                if marked:
                    self._files[entry.id] = tuple(marked)

    def get(self, entry_id: str, default: tuple[Finding, ...] = ()) -> tuple[Finding, ...]:
        own = list(self._loose.get(entry_id, ()))
        for start, run in self._runs:
            own.extend((start + p, run[p]) for p in run.positions_of(entry_id))
        own.sort(key=lambda pair: pair[0])
        out = tuple(f for _, f in own) + self._files.get(entry_id, ())
        return out or default

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and bool(self.get(entry_id))

    def kinds(self, entry_id: str) -> list[str]:
        return [f.kind for f in self.get(entry_id)]
