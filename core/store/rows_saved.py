"""The conversation layer's prepared state made from muse.db's rows a batch at a time and
saved as it is made, so the build holds one batch of rows, never every row.

The rows are read newest first (`Conversations.raw_rows_ordered`: SQLite sorts them), which
is the layer's base order for ordinary values; each batch is checked to follow it exactly
(`rows.base_keys`), and a database whose values SQLite orders otherwise (a text date, an id
that is a number) is built in memory instead (`NotStreamed`). Each batch's entry rows, shown
values, lines and JSON records go, marshalled in chunks, to four unnamed spool files beside
the prepared index (each list stays one run in the file, as `prepared.ChunkTable` and
`Records` read it), its terms to the postings (positions as bytes); once the last batch is
in, the layer's file is written through the gate: header, body, then the spools and the
sections kept in memory (postings, bitmaps, ids, pane), exactly as `prepared._save_layer`
lays them out. For a large layer (a full first batch), what depends on a row's text (its
line, JSON record, terms: `_Texts`) is made by a forked child on the other core (`_Aside`),
which writes the lines' and records' spools itself.
"""

from __future__ import annotations

import marshal
import os
import signal
import sys
import threading
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, suppress
from itertools import accumulate, chain
from operator import le
from pathlib import Path
from typing import IO, Any, cast

from .. import gate
from ..bitmaps import bitmap, bitmap_bytes_many
from ..injection import LineMaker
from .candidate_json import json_record
from .conversations import Conversations
from .layer_index import LayerIndex
from .pane_order import saved_pane
from .row_postings import RowPostings
from .rows import base_keys, conversation_columns, conversation_core, conversation_made, conversation_shown

BATCH = 8192  # rows read, made and written at a time (a multiple of `prepared.CHUNK`)
Chunk = tuple[int, int, int]  # (offset, length, crc32) of a saved chunk


class NotStreamed(Exception):
    """The rows cannot be saved a batch at a time (SQLite's order is not the base order, a
    text is not UTF-8, a line holds a lone surrogate): the caller builds them in memory."""


class _Spool:
    """One saved list's chunks, written one after the other into an unnamed file."""

    def __init__(self, file: IO[bytes]):
        self.file = file
        self.size = 0
        self.chunks: list[Chunk] = []

    def add(self, piece: bytes) -> None:
        self.chunks.append((self.size, len(piece), zlib.crc32(piece)))
        self.file.write(piece)
        self.size += len(piece)

    def add_each(self, pieces: Iterable[bytes]) -> None:
        for piece in pieces:
            self.add(piece)



class _Tail:
    """The sections kept in memory until the end (`prepared._Writer`'s way of counting)."""

    def __init__(self, start: int):
        self.parts: list[bytes] = []
        self.size = start

    def raw(self, piece: bytes) -> Chunk:
        at = (self.size, len(piece), zlib.crc32(piece))
        self.parts.append(piece)
        self.size += len(piece)
        return at


Frame = Callable[[dict[str, Any]], bytes]  # a layer file's header and body of its sections' directory


def save_rows_streamed(target: Path, home: Path, conversations: Conversations, workspace: Path, maker: LineMaker,
                       chunk: int, frame: Frame) -> None:
    """Build the conversation layer of `workspace` from `conversations`' rows a batch at a time
    and save it to `target` (below `home`) as `prepared` lays a layer's file out: chunks of
    `chunk` positions, its header and body made by `frame` from the directory of the
    sections. Raises NotStreamed (nothing saved) when that cannot be done exactly, the
    database's own errors as `Conversations.raw_rows` raises them, OSError when the file
    cannot be written."""
    if BATCH % chunk:
        raise NotStreamed(f"a batch of {BATCH} rows is not a whole number of chunks of {chunk}")
    gate.make_dir(target.parent, root=home, mode=0o700)
    with ExitStack() as stack:
        spools = [_Spool(stack.enter_context(gate.spool(target.parent, root=home))) for _ in range(4)]
        built = _Built(spools, maker, chunk)
        for raw in conversations.raw_rows_ordered(workspace, BATCH):
            if built.n == 0 and len(raw) == BATCH and isinstance(built.texts, _Texts):  # a large layer: its lines
                # and postings made beside it
                aside = _Aside.start(built.texts, stack.enter_context(gate.spool(target.parent, root=home)))
                if aside is not None:
                    built.texts = stack.enter_context(aside)
            built.add(raw)
        gate.write_parts(target, built.file(frame), root=home)


class _Texts:
    """What is made of the rows' texts, in this process: each row's line and JSON record
    (spooled: `made` and `records`, with where each record ends) and the postings."""

    def __init__(self, made: _Spool, records: _Spool, maker: LineMaker, chunk: int, aside: bool = False):
        self.aside = aside  # in the child: numpy's way at once, for the postings and the bitmaps
        self.count = 0
        self.made = made
        self.records = records
        self.maker = maker
        self.chunk = chunk
        self.ends = array("Q", [0])  # where each JSON record ends
        self.terms = RowPostings(0 if aside else None)

    def add(self, texts: list[str], tags: list[tuple[str, ...]], shown: list[Any], start: int) -> None:
        CHUNK, n = self.chunk, len(texts)
        made, frags = conversation_made(texts, shown, self.maker)
        for i in range(0, n, CHUNK):
            self.made.add(marshal.dumps(made[i:i + CHUNK]))
        try:
            records = list(map(json_record, frags))
        except UnicodeEncodeError:
            raise NotStreamed("a line holds a lone surrogate") from None
        self.ends.extend(map(self.ends[-1].__add__, accumulate(map(len, records))))
        for i in range(0, n, CHUNK):
            self.records.add(b"".join(records[i:i + CHUNK]))
        self.terms.add(texts, tags, start)
        self.count += n

    def finish(self) -> tuple[dict[str, bytes], dict[str, bytes]]:
        """The postings, and the bitmaps (as bytes) of the terms one row in 32 or more holds
        (a posting of 4-byte positions at least an eighth of the rows' count in bytes), from
        `LayerIndex.BITMAP_MIN` rows (as `saved_layer` keeps them)."""
        postings, n = self.terms.postings(), self.count
        common = {term: raw for term, raw in postings.items() if len(raw) * 8 >= n} if n >= LayerIndex.BITMAP_MIN else {}
        if self.aside:
            return postings, bitmap_bytes_many(common, n)
        return postings, {term: bitmap(memoryview(raw).cast("i"), n).to_bytes((n + 7) // 8, "little")
                          for term, raw in common.items()}

    def state(self) -> tuple[Any, ...]:
        """What the spools and ends hold, to be sent (`take`) to the process that writes the file."""
        for spool in (self.made, self.records):
            spool.file.flush()
        return self.made.chunks, self.made.size, self.records.chunks, self.records.size, self.ends.tobytes()

    def take(self, state: tuple[Any, ...]) -> None:
        self.made.chunks, self.made.size, self.records.chunks, self.records.size, ends = state
        self.ends = array("Q")
        self.ends.frombytes(ends)


class _Aside:
    """`_Texts` made by a forked child process, on the other core, from the texts, tags and
    shown values sent to it batch by batch through a pipe: it writes the lines' and records'
    spools (which the parent does not touch meanwhile) and leaves the postings and what the
    spools hold, marshalled, in a spool both share. The parent meanwhile reads the rows and
    makes everything else of the layer."""

    def __init__(self, pid: int, pipe: int, texts: _Texts, out: IO[bytes]):
        self.pid = pid
        self.pipe: int | None = pipe
        self.texts = texts
        self.out = out

    @classmethod
    def start(cls, texts: _Texts, out: IO[bytes]) -> _Aside | None:
        """The child, or None where forking is not safe (a process with other threads) or fails."""
        if not hasattr(os, "fork") or threading.active_count() != 1:
            return None
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        read, write = os.pipe()
        with suppress(ImportError, OSError, AttributeError):
            import fcntl

            fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 1 << 20)  # (Linux) a larger pipe: fewer waits
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return None
        if pid:
            os.close(read)
            return cls(pid, write, texts, out)
        code = 1
        try:  # the child: nothing of the parent's (its database, its other spools) is touched but these
            os.close(write)
            made = _Texts(texts.made, texts.records, texts.maker, texts.chunk, aside=True)
            with os.fdopen(read, "rb") as batches:
                start = 0
                while head := batches.read(8):
                    texts_of, tags, shown = marshal.loads(batches.read(int.from_bytes(head, "little")))
                    made.add(texts_of, tags, list(chain.from_iterable(map(marshal.loads, shown))), start)
                    start += len(texts_of)
            data = memoryview(marshal.dumps((made.finish(), made.state())))
            fd = out.fileno()
            while data:
                data = data[os.write(fd, data):]
            code = 0
        except BaseException:  # noqa: BLE001 - the parent builds the layer in memory instead
            pass
        finally:
            os._exit(code)

    def add(self, texts: list[str], tags: list[tuple[str, ...]], shown: list[bytes]) -> None:
        """A batch: its texts and tags, and its shown values as the chunks marshalled for their spool."""
        data = marshal.dumps((texts, tags, shown))
        assert self.pipe is not None
        view = memoryview(len(data).to_bytes(8, "little") + data)
        while view:
            view = view[os.write(self.pipe, view):]

    @property
    def ends(self) -> array[int]:
        return self.texts.ends

    def finish(self) -> tuple[dict[str, bytes], dict[str, bytes]]:
        """`_Texts.finish`; the spools' state taken over (`_Texts.take`)."""
        if self._finish() != 0:
            raise NotStreamed("the child process making the lines and postings failed")
        self.out.seek(0)
        found, state = marshal.loads(self.out.read())
        self.texts.take(state)
        return cast(tuple[dict[str, bytes], dict[str, bytes]], found)

    def _finish(self, stop: bool = False) -> int:
        if self.pipe is not None:
            os.close(self.pipe)
            self.pipe = None
        if self.pid < 0:
            return 1
        if stop:  # its work is not wanted: ended now rather than waited for
            with suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        _, status = os.waitpid(self.pid, 0)
        self.pid = -1
        return os.waitstatus_to_exitcode(status)

    def __enter__(self) -> _Aside:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pid >= 0:  # left early (an error)
            self._finish(stop=True)


class _Built:
    """The layer as its batches come in: the spooled lists and what the end needs."""

    def __init__(self, spools: list[_Spool], maker: LineMaker, chunk: int):
        self.spools = spools
        self.maker = maker
        self.chunk = chunk
        self.n = 0
        self.last: tuple[float, str] | None = None
        self.ids = bytearray()  # the ids, marshalled (version 2: no references) one after the other
        self.texts: _Texts | _Aside = _Texts(spools[2], spools[3], maker, chunk)
        self.groups: dict[str, tuple[float, array[int]]] = {}  # a title's newest updated_at and positions

    def add(self, raw: list[tuple[Any, ...]]) -> None:
        CHUNK = self.chunk
        column = conversation_columns(raw)
        keys = base_keys(column)
        if (self.last is not None and keys and keys[0] < self.last) or not all(map(le, keys, keys[1:])):
            raise NotStreamed("the rows as SQLite orders them are not in the base order")
        if keys:
            self.last = keys[-1]
        start, n = self.n, len(keys)
        rows, shown = conversation_shown(column)
        self.spools[0].add_each(marshal.dumps(rows[i:i + CHUNK]) for i in range(0, n, CHUNK))
        shown_chunks = [marshal.dumps(shown[i:i + CHUNK]) for i in range(0, n, CHUNK)]
        self.spools[1].add_each(shown_chunks)
        if isinstance(self.texts, _Aside):
            self.texts.add(column["text"], column["tags"], shown_chunks)
        else:
            self.texts.add(column["text"], column["tags"], shown, start)
        self.ids += marshal.dumps(column["id"], 2)[5:]  # past the list's type and length
        for pos, (title, updated) in enumerate(zip(column["conversation_title"], column["updated_at"]), start):
            group = self.groups.get(title)
            if group is None:  # its first row in the base order is its newest
                group = self.groups[title] = (updated, array("i"))
            group[1].append(pos)
        self.n += n

    def pane(self) -> list[Any]:
        """`layer_index.pane_state` of the rows as saved: by conversation (the one added to
        last first, memories without one last), each newest first, which is the base order."""
        ordered = sorted(self.groups.items(), key=lambda g: (not g[0], -g[1][0], g[0]))
        order = array("i")
        for _, (_, positions) in ordered:
            order.extend(positions)
        return saved_pane((order, [(title, newest, len(positions)) for title, (newest, positions) in ordered]))

    def file(self, frame: Frame) -> Iterator[bytes | IO[bytes]]:
        """The layer's file, in pieces: as `prepared._save_layer` writes it."""
        n = self.n
        found, common = self.texts.finish()  # (the child's spools taken over first)
        postings = dict(sorted(found.items()))
        core = conversation_core(self.maker, n)
        sizes = [spool.size for spool in self.spools]
        starts = list(accumulate(sizes, initial=0))
        sections = [_chunk_table([(at + first, length, crc) for at, length, crc in spool.chunks])
                    for spool, first in zip(self.spools, starts)]
        tail = _Tail(starts[-1])
        directory = {term: tail.raw(raw) for term, raw in postings.items()}
        bitmaps = {term: tail.raw(common[term]) for term in postings if term in common}
        del postings, found, common
        data: dict[str, Any] = {
            "core": core, "postings": directory, "bitmaps": bitmaps,
            "ids": tail.raw(b"[" + n.to_bytes(4, "little") + bytes(self.ids)), "pane": tail.raw(marshal.dumps(self.pane())),
            "sections": sections[:3], "records": tail.raw(self.texts.ends.tobytes())}
        data["sections"].append(sections[3])
        yield frame(data)
        yield from (spool.file for spool in self.spools)  # each copied whole (by the kernel where it can)
        yield from _drain(tail.parts)


def _drain(parts: list[bytes]) -> Iterator[bytes]:
    """`parts`, each let go once given."""
    parts.reverse()
    while parts:
        yield parts.pop()



def _chunk_table(chunks: list[Chunk]) -> tuple[bytes, bytes]:
    """`prepared.ChunkTable.saved`: each chunk's offset (and where the last ends), each one's crc32."""
    starts = array("Q", [offset for offset, _, _ in chunks])
    starts.append(chunks[-1][0] + chunks[-1][1] if chunks else 0)
    return starts.tobytes(), array("I", [crc for _, _, crc in chunks]).tobytes()
