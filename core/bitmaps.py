"""Sets of positions as bitmaps: a Python int whose bit p is set when position p is in the
set, so that a union, an intersection or a count is a big-integer operation in C. The
prepared index saves a large layer's frequent terms' postings so (`store.saved_layer`,
`store.rows_saved`) and counts a query's terms with them (`store.level_counts`), and focused
injection narrows a layer with them (`injection_focused`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from itertools import compress, repeat

_FLAGS = bytes.maketrans(b"01", b"\x00\x01")  # a binary digit as the byte compress() reads
_DIGITS = bytes.maketrans(b"\x00\x01", b"01")


def bitmap(positions: Sequence[int], size: int) -> int:
    """The bitmap of `positions` (each below `size`)."""
    if not len(positions):
        return 0
    flags = bytearray(size)
    deque(map(flags.__setitem__, positions, repeat(1)), maxlen=0)  # set in C, a position at a time
    flags.reverse()  # the highest position first, as int() reads digits
    return int(flags.translate(_DIGITS), 2)


def bitmap_bytes_many(postings: Mapping[str, bytes], size: int) -> dict[str, bytes]:
    """`bitmap(positions, size).to_bytes((size + 7) // 8, "little")` of each term's positions
    (as bytes of native ints, `array("i")`), made by numpy (bit p of the int is bit p % 8 of
    byte p // 8: numpy's little bit order)."""
    import numpy as np

    found = {}
    for term, raw in postings.items():
        flags = np.zeros(size, dtype=np.bool_)
        flags[np.frombuffer(raw, dtype=np.intc)] = True
        found[term] = np.packbits(flags, bitorder="little").tobytes()
    return found


def positions(bits: int, start: int, stop: int) -> list[int]:
    """The set bits of `bits` in `start .. stop-1`, ascending (`bits` may be negative: the
    complement of a bitmap, as `~b`)."""
    if stop <= start:
        return []
    x = (bits >> start) & ((1 << (stop - start)) - 1)
    if not x:
        return []
    return list(compress(range(start, stop), flags(x)))


def flags(bits: int) -> bytes:
    """Byte p of the result is 1 when bit p of `bits` (not negative) is set, else 0; it ends
    at the highest set bit: a position at or past its length is not set."""
    return bin(bits)[:1:-1].encode().translate(_FLAGS)  # the lowest bit first, one byte per bit
