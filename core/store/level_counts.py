"""Step 4 over a large layer: `|Q ∩ M|` of every active position kept as bitmaps, one per
count, instead of a dict of every position sharing a term with the query.

A layer's posting list of a term (its positions, ascending) is a bitmap here: a Python int
whose bit p is set when position p has the term. The query's bitmaps are added in binary
(a bit plane per binary digit of the count, with the carries of a ripple adder), so each
count's positions are a few big-integer operations away, and counted in C (`bit_count`);
the positions of one count within a range come out in ascending order without a Python
step per position (`positions`). `LevelCounts` is the `Mapping[int, int]` step 4 returns
(`LayerCandidates.shared`): the rule reads it as it reads a dict, and the fast paths of
the rule's walk (`LayerIndex.in_order`), its best score and its status counts read the
bitmaps instead. A dict of every position is made only when something asks for one.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, Sequence, ValuesView

from ..bitmaps import positions


class LevelCounts(Mapping[int, int]):
    """position -> `|Q ∩ M|` of the positions sharing a term with the query, from each query
    term's bitmap. `levels`: (count, bitmap of the positions with exactly that count), the
    highest count first, counts with no position left out; `any`: every position counted."""

    def __init__(self, bitmaps: Sequence[int]):
        planes: list[int] = []  # plane i: the positions whose count has binary digit i set
        for b in bitmaps:
            carry = b
            for i, plane in enumerate(planes):
                if not carry:
                    break
                planes[i], carry = plane ^ carry, plane & carry
            if carry:
                planes.append(carry)
        every = 0
        for b in bitmaps:
            every |= b
        self.any = every
        self.levels: list[tuple[int, int]] = []
        for n in range(len(bitmaps), 0, -1):
            level = every
            for i, plane in enumerate(planes):
                level &= plane if n >> i & 1 else ~plane
                if not level:
                    break
            if level and n < 1 << len(planes):
                self.levels.append((n, level))
        self._dict: dict[int, int] | None = None

    def top(self) -> int:
        """The highest count (0 when no position shares a term)."""
        return self.levels[0][0] if self.levels else 0

    def histogram(self) -> dict[int, int]:
        """count -> how many positions have it (`Counter(self.values())`)."""
        return {n: level.bit_count() for n, level in self.levels}

    def as_dict(self) -> dict[int, int]:
        if self._dict is None:
            found: dict[int, int] = {}
            for n, level in self.levels:
                found.update(dict.fromkeys(positions(level, 0, level.bit_length()), n))
            self._dict = found
        return self._dict

    def __getitem__(self, pos: int) -> int:
        return self.as_dict()[pos]

    def __contains__(self, pos: object) -> bool:
        return pos in self.as_dict()

    def __iter__(self) -> Iterator[int]:
        return iter(self.as_dict())

    def __len__(self) -> int:
        return self.any.bit_count()

    def keys(self) -> KeysView[int]:
        return self.as_dict().keys()

    def values(self) -> ValuesView[int]:
        return self.as_dict().values()

    def items(self) -> ItemsView[int, int]:
        return self.as_dict().items()

    def in_order(self, groups: Sequence[tuple[int, int, int]],
                 scored_only: bool) -> Iterator[tuple[int, Sequence[int]]]:
        """`LayerIndex.in_order` from the bitmaps: per importance group (rank, start, stop),
        each count's positions in the group, the highest count first, then (unless
        `scored_only`) the group's positions that share no term."""
        for _, start, stop in groups:
            for n, level in self.levels:
                run = positions(level, start, stop)
                if run:
                    yield n, run
            if not scored_only:
                rest = positions(~self.any, start, stop)
                if rest:
                    yield 0, rest
