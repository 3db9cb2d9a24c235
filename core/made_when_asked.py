"""A sequence whose items are made when asked for (entries from saved rows, the doctor's
packed findings): a subclass gives `__len__` and `item_at(i)`; a slice is the list of those
items."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class MadeWhenAsked(Sequence[T]):
    """`item_at(i)` takes an index as a list does (a negative one counts from the end, one
    outside raises IndexError); `list_index` turns one into a place for a subclass whose
    storage cannot."""

    def item_at(self, i: int) -> T:
        raise NotImplementedError

    def list_index(self, i: int) -> int:
        """`i` as a place in 0 .. len - 1, as a list reads it; IndexError outside."""
        n = len(self)
        place = i + n if i < 0 else i
        if not 0 <= place < n:
            raise IndexError(i)
        return place

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self.item_at(j) for j in range(*i.indices(len(self)))]
        return self.item_at(i)
