"""The prepared index's file format: a header (magic, the length of the checked part, its
CRC-32), then sections each checked against its CRC-32 when first read: per-position lists
saved in chunks (`Chunks`), the candidates' JSON as UTF-8 records (`Records`), the postings
read per term (`Postings`), and the `Writer` that lays them out."""

from __future__ import annotations

import functools
import marshal
import mmap
import os
import weakref
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, compress
from operator import add, ne
from pathlib import Path
from typing import Any, NoReturn

from .. import gate
from .candidate_json import json_record, split_record

MAGIC = b"MEMTUIP3"
HEADER = len(MAGIC) + 8 + 4  # magic, the length of the checked part, its crc32
_NEXT = functools.partial(add, 1)

CHUNK = 64  # positions per saved chunk of rows, shown values, lines or JSON: the hook reads a few dozen chunks


class ChunkTable(Sequence[tuple[int, int, int]]):
    """Where a saved list's chunks are, (offset, length, crc32) each, kept as two arrays (as
    saved: read without a tuple per chunk; a layer of 365,000 entries has 5,700 per list)."""

    def __init__(self, starts: bytes, crcs: bytes):
        self._starts = memoryview(starts).cast("Q")  # each chunk's offset, then where the last one ends
        self._crcs = memoryview(crcs).cast("I")
        if len(self._starts) != len(self._crcs) + 1:
            raise ValueError("a chunk table's arrays do not match")

    @staticmethod
    def saved(chunks: Sequence[tuple[int, int, int]]) -> tuple[bytes, bytes]:
        """The table of `chunks` (one after the other, as `Writer` writes them) as saved."""
        starts = array("Q", [offset for offset, _, _ in chunks])
        starts.append(chunks[-1][0] + chunks[-1][1] if chunks else 0)
        return starts.tobytes(), array("I", [crc for _, _, crc in chunks]).tobytes()

    def __len__(self) -> int:
        return len(self._crcs)

    def __getitem__(self, i):
        if i < 0:
            i += len(self._crcs)
        if not 0 <= i < len(self._crcs):
            raise IndexError(i)
        return self._starts[i], self._starts[i + 1] - self._starts[i], self._crcs[i]


class DamagedPreparedIndex(RuntimeError):
    """A section of the saved state fails its checksum (found only when it is first read)."""


class Sections:
    """The saved file's sections, each read (`pread`) and checked when first asked for. It
    owns `fd`: `close()` closes it, or the last reader's going (never close it yourself)."""

    def __init__(self, path: Path, fd: int, base: int, size: int):
        self.path = path
        self.fd = fd
        self.base = base
        self.size = size  # the file's length: no section may claim more than is there
        # the file stays open while an index reads from it, and is closed with the last of them
        self.close = weakref.finalize(self, os.close, fd)

    def read(self, offset: int, length: int, crc: int) -> list[Any]:
        values: list[Any] = marshal.loads(self.raw(offset, length, crc))
        return values

    def span(self, chunks: Sequence[tuple[int, int, int]]) -> bytes | memoryview:
        """The chunks, one after the other in the file, read at once, each checked."""
        if not chunks:
            return b""
        first, stop = chunks[0][0], chunks[-1][0] + chunks[-1][1]
        if any(chunks[i][0] + chunks[i][1] != chunks[i + 1][0] for i in range(len(chunks) - 1)):
            return b"".join(self.raw(*at) for at in chunks)
        if first < 0 or self.base + stop > self.size:
            self.damaged()
        try:  # mapped, not copied: the page cache's own pages, each record sliced out as it is written
            whole: bytes | memoryview = memoryview(mmap.mmap(self.fd, 0, access=mmap.ACCESS_READ))[
                self.base + first:self.base + stop]
        except (OSError, ValueError):
            whole = self.raw(first, stop - first, None)
        view = memoryview(whole)
        for offset, length, crc in chunks:
            if zlib.crc32(view[offset - first:offset - first + length]) != crc:
                self.damaged()
        return whole

    def raw(self, offset: int, length: int, crc: int | None) -> bytes:
        fits = offset >= 0 and length >= 0 and self.base + offset + length <= self.size
        piece = os.pread(self.fd, length, self.base + offset) if fits else b""
        if not fits or len(piece) != length or (crc is not None and zlib.crc32(piece) != crc):
            self.damaged()
        return piece

    def damaged(self) -> NoReturn:
        try:
            gate.remove(self.path, root=self.path.parent)  # rebuilt by the next run
        except OSError:
            pass
        raise DamagedPreparedIndex(f"{self.path}: the prepared index is damaged (a section fails its "
                                   "checksum); it was removed and is rebuilt on the next run")


class Chunks(Sequence[Any]):
    """A saved list read back a chunk at a time, on first use: the hook reads the few entries
    it injects, `--json` all of them."""

    def __init__(self, sections: Sections, chunks: Sequence[tuple[int, int, int]], size: int):
        self._sections = sections
        self._chunks = chunks
        self._loaded: list[list[Any] | None] = [None] * len(chunks)
        self._size = size

    def __len__(self) -> int:
        return self._size

    def check(self) -> None:
        """Every chunk not read yet checked against its checksum (DamagedPreparedIndex)."""
        for i, at in enumerate(self._chunks):
            if self._loaded[i] is None:
                self._sections.raw(*at)

    def materialize(self, keep: bool = True) -> list[Any]:
        """Every value as one plain list (when all of them are wanted); without `keep` the
        chunks read are not kept here (read once, for what is made of them elsewhere)."""
        out: list[Any] = []
        for i in range(len(self._chunks)):
            part = self._loaded[i]
            if part is None:
                part = self._sections.read(*self._chunks[i])
                if keep:
                    self._loaded[i] = part
            out += part
        return out

    def __getitem__(self, pos):
        i = pos // CHUNK
        part = self._loaded[i]
        if part is None:
            part = self._loaded[i] = self._sections.read(*self._chunks[i])
        return part[pos - i * CHUNK]

    def peek(self, pos: int) -> Any:
        """The value at `pos`, its chunk read and not kept (unless it is already)."""
        i = pos // CHUNK
        part = self._loaded[i]
        if part is None:
            part = self._sections.read(*self._chunks[i])
        return part[pos - i * CHUNK]

    def pieces(self) -> Iterator[list[Any]]:
        """Every chunk's values in turn, those not kept read and let go: a pass over every
        value holds one chunk of them at a time."""
        for i, at in enumerate(self._chunks):
            part = self._loaded[i]
            yield part if part is not None else self._sections.read(*at)


class Records(Chunks):
    """The saved candidates' JSON pieces as UTF-8 records (`candidate_json.json_record`: each
    candidate's JSON before its score and after its status, joined by a NUL), one after the
    other in chunks, where each ends in `ends` (a section of its own, of 8-byte offsets over
    the records of every chunk taken as one). Read back as the (before, after) pairs `Chunks`
    gives, or as the records themselves (`records`), to be written as bytes (`preview --json`)."""

    def __init__(self, sections: Sections, chunks: Sequence[tuple[int, int, int]], size: int,
                 ends: tuple[int, int, int]):
        super().__init__(sections, chunks, size)
        self._ends_at = ends
        self._ends: memoryview | None = None
        self._whole: bytes | memoryview | None = None

    def ends(self) -> memoryview:
        """Where each record ends (and the next starts: the first at 0)."""
        if self._ends is None:
            ends = memoryview(self._sections.raw(*self._ends_at)).cast("Q")
            if len(ends) != self._size + 1:
                self._sections.damaged()
            self._ends = ends
        return self._ends

    def whole(self) -> bytes | memoryview:
        """Every record, every chunk read (and checked) now, kept as one bytes-like object."""
        if self._whole is None:
            self._whole = self._sections.span(self._chunks)
            if len(self._whole) != self.ends()[-1]:
                self._sections.damaged()
        return self._whole

    def each(self, positions: Iterable[int]) -> list[bytes | memoryview]:
        """The record of each of `positions`, bytes-like."""
        whole, ends = self.whole(), self.ends()
        return [whole[ends[p]:ends[p + 1]] for p in positions]

    def records(self, positions: Sequence[int]) -> list[bytes | memoryview]:
        """The records of `positions` (ascending), bytes-like: those of consecutive positions
        as one slice (they are one after the other in the run)."""
        whole, ends = self.whole(), self.ends()
        if len(positions) < 2:
            return [whole[ends[p]:ends[p + 1]] for p in positions]
        # where a run of consecutive positions starts and ends, found in C
        breaks = list(map(ne, positions[1:], map(_NEXT, positions)))
        firsts = [positions[0], *compress(positions[1:], breaks)]
        lasts = [*compress(positions, breaks), positions[-1]]
        return [whole[ends[a]:ends[b + 1]] for a, b in zip(firsts, lasts)]

    def _part(self, i: int) -> list[Any]:
        part = self._loaded[i]
        if part is None:
            raw, ends, first = self._sections.raw(*self._chunks[i]), self.ends(), i * CHUNK
            base = ends[first]
            part = self._loaded[i] = [raw[ends[p] - base:ends[p + 1] - base]
                                      for p in range(first, min(first + CHUNK, self._size))]
        return part

    def materialize(self, keep: bool = True) -> list[Any]:
        return list(map(split_record, self.each(range(self._size))))

    def __getitem__(self, pos):
        if self._whole is not None:
            ends = self.ends()
            return split_record(self._whole[ends[pos]:ends[pos + 1]])
        return split_record(self._part(pos // CHUNK)[pos % CHUNK])


class Postings(Mapping[str, bytes]):
    """A saved layer's postings, term -> bytes of positions, each read (and checked) when a
    query asks for its term: the hook reads the lists of its prompt's terms, not every list."""

    def __init__(self, sections: Sections, directory: dict[str, tuple[int, int, int]]):
        self._sections = sections
        self.directory = directory

    def __getitem__(self, term: str) -> bytes:
        return self._sections.raw(*self.directory[term])

    def __contains__(self, term: object) -> bool:
        return term in self.directory

    def __iter__(self) -> Iterator[str]:
        return iter(self.directory)

    def __len__(self) -> int:
        return len(self.directory)


class Writer:
    """Collects the sections after the header: (offset, length, crc32) of each chunk."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def raw(self, piece: bytes) -> tuple[int, int, int]:
        at = (self.size, len(piece), zlib.crc32(piece))
        self.parts.append(piece)
        self.size += len(piece)
        return at

    def records(self, pieces: Sequence[tuple[str, str]]) -> tuple[list[tuple[int, int, int]], tuple[int, int, int]] | None:
        """The JSON pieces as `Records`: its chunks and where each record ends; None (nothing
        written) when one is not UTF-8 (a lone surrogate): the layer saves them as
        marshalled pairs instead."""
        try:
            records = list(map(json_record, pieces))
        except UnicodeEncodeError:
            return None
        ends = array("Q", [0])
        ends.extend(accumulate(map(len, records)))
        chunks = [self.raw(b"".join(records[i:i + CHUNK])) for i in range(0, len(records), CHUNK)]
        return chunks, self.raw(ends.tobytes())

    def chunked(self, values: list[Any]) -> list[tuple[int, int, int]]:
        out = []
        for i in range(0, len(values), CHUNK):
            piece = marshal.dumps(values[i:i + CHUNK])
            out.append((self.size, len(piece), zlib.crc32(piece)))
            self.parts.append(piece)
            self.size += len(piece)
        return out

