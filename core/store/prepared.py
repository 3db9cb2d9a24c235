"""The prepared index: what `memtui preview` and the hook need to answer a query, saved by
the process that last loaded the memories and checked, not trusted, by the next one.

It holds, per layer and in a file of its own, the injection engine's own `LayerIndex` state
(entries in base order, term postings, each entry's one-line text with redaction applied,
its cost and what a candidate shows of it), so a warm run reads three files instead of
parsing Markdown, turning rows into entries and redacting every line. Beside it, in a section
read only by the TUI, the order its pane lists the layer in (`layer_index.pane_state`), so the
pane lists tens of thousands of entries making only those it shows. It is derived and
rebuildable: it lives in `<home>/cache/`, never in a workspace. A layer is rebuilt whole on
any doubt about it:

- another format, Python or memtui code (the stamp of memtui's core sources);
- other `maxItemChars` or `redactSecrets` settings (the lines depend on them);
- a damaged file (every part is checked against its CRC-32 when first read);
- memtui's change counter over muse.db's conversation rows missing (its triggers dropped),
  or what changed since it was saved not fully in memtui's change log.

What changed since it was saved is otherwise taken in, never rebuilt:

- a Markdown file added, removed, or with another size, mtime or inode (a file that had
  changed within a few seconds of being read is hashed again: a same-size edit within one
  mtime tick keeps size and mtime) is parsed again alone, its entries spliced into the saved
  layer (`layer_index.splice`: the other entries keep their saved lines, JSON and postings)
  and the layer's file saved again;
- conversation rows added, changed or deleted by any writer since (memtui's change log,
  `generation`, names them) are read alone and laid over the saved layer
  (`layer_index.PatchedLayer`), which stays as saved until they are many
  (`REBASE_ROWS`); then they are spliced in and the layer saved again.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import marshal
import mmap
import os
import sqlite3
import sys
import time
import weakref
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate, compress, count
from operator import add, ne
from pathlib import Path
from typing import Any, NoReturn

from .. import gate
from ..fileio import open_regular, read_regular, sha256
from ..injection import LayerCandidates, LineMaker
from ..model import LAYERS, Layer
from ..paths import MAX_FILE_BYTES, Paths, Problem, memory_file_names
from ..settings import Settings
from . import rows as row_changes
from .generation import LOG_KEPT
from .layer_index import (
    ENTRY_FIELDS,
    LayerIndex,
    LineCache,
    PatchedLayer,
    json_record,
    read_pane,
    saved_pane,
    splice,
    split_record,
)
from .level_counts import bitmap
from .rows import conversation_columns, conversation_state

log = logging.getLogger("memtui.prepared")

FORMAT = 11  # bump when what is saved changes
MAGIC = b"MEMTUIP3"
FRESH_NS = 3_000_000_000  # a file whose mtime is this close to its reading is hashed again
REBASE_ROWS = 1_000  # changed conversation rows laid over the saved layer before it is saved again
# A spawned child (`prepare(spawn=True)`) costs a new interpreter and its imports (≈0.3 s of CPU): worth it
# only beside a conversation layer that takes longer than that, i.e. a muse.db of ≈10,000 rows or more.
SPAWN_DB_BYTES = 8_000_000
MAX_SAVED_BYTES = 1 << 34  # a saved layer bigger than this is not one of ours
_CORE = Path(__file__).resolve().parent.parent
_PATH_AT = ENTRY_FIELDS.index("path")
_ID_AT = ENTRY_FIELDS.index("id")
_NEXT = functools.partial(add, 1)


@dataclass
class Prepared:
    indexes: dict[str, LayerCandidates]
    problems: list[Problem]
    failed_layers: frozenset[str]
    # what the layers are, exactly, when all of them are saved state (files and, for rows laid
    # over a saved layer, the change counter): §13 keeps each layer's vectors beside it
    stamp: str | None = field(default=None)

    @property
    def row_gen(self) -> int | None:
        """memtui's change counter over the conversation rows (`rows.generation`) that the
        conversation layer is exactly current at, when known: a store loading behind the
        prepared index takes the layer's entries as they are while it has not moved."""
        gen = getattr(self.indexes.get(Layer.CONVERSATION), "row_gen", None)
        return gen if isinstance(gen, int) and Layer.CONVERSATION not in self.failed_layers else None

    @classmethod
    def of(cls, layers: Mapping[str, tuple[LayerCandidates, list[Problem]]], failed: frozenset[str] = frozenset(),
           stamp: str | None = None) -> Prepared:
        """From each layer's index and problems."""
        indexes = {str(layer): layers[layer][0] for layer in LAYERS}
        problems = sorted({p for layer in LAYERS for p in layers[layer][1]}, key=lambda p: (p.source, p.message))
        return cls(indexes, problems, failed, stamp)


def cache_name(paths: Paths) -> str:
    digest = hashlib.sha256(str(paths.workspace).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"injection-{digest}"


def cache_path(paths: Paths, layer: str) -> Path:
    """The file of one layer's saved state."""
    return paths.home / "cache" / f"{cache_name(paths)}-{layer}.bin"


@functools.cache
def code_stamp() -> str:
    """Changes with any source file of memtui's core (terms, parsing, redaction, the engine);
    found once per process (the code it runs is the code it imported)."""
    h = hashlib.sha256(f"{FORMAT} {sys.version}".encode())
    for folder in (_CORE, _CORE / "store"):
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
        except OSError:
            return "unknown"
        for name in names:
            try:
                st = os.stat(folder / name)
            except OSError:
                return "unknown"
            h.update(f"{folder.name}/{name} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _settings_key(settings: Settings) -> list[int | bool]:
    return [settings.max_item_chars, bool(settings.redact_secrets)]


def _generation(paths: Paths, create: bool = False) -> int | str:
    from .conversations import Conversations

    db = Conversations(paths.db_path)
    try:
        return db.row_generation(create=create)
    finally:
        db.close()


# ---------------------------------------------------------------------- sections
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
        """The table of `chunks` (one after the other, as `_Writer` writes them) as saved."""
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


class _Sections:
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

    def __init__(self, sections: _Sections, chunks: Sequence[tuple[int, int, int]], size: int):
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
    """The saved candidates' JSON pieces as UTF-8 records (`layer_index.json_record`: each
    candidate's JSON before its score and after its status, joined by a NUL), one after the
    other in chunks, where each ends in `ends` (a section of its own, of 8-byte offsets over
    the records of every chunk taken as one). Read back as the (before, after) pairs `Chunks`
    gives, or as the records themselves (`records`), to be written as bytes (`preview --json`)."""

    def __init__(self, sections: _Sections, chunks: Sequence[tuple[int, int, int]], size: int,
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

    def __init__(self, sections: _Sections, directory: dict[str, tuple[int, int, int]]):
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


class _Writer:
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


# ---------------------------------------------------------------------- loading
HEADER = len(MAGIC) + 8 + 4  # magic, the length of the checked part, its crc32


@dataclass
class SavedLayer:
    """One layer's file as opened: its index (sections read from `sections` when first
    needed) and what the file says of it (`saved`: what it was built from, its state)."""

    index: LayerIndex
    saved: dict[str, Any]
    sections: _Sections

    def stamp(self) -> str:
        st = os.fstat(self.sections.fd)
        return f"{st.st_ino}-{st.st_size}-{st.st_mtime_ns}"

    def positions(self, ids: frozenset[str]) -> list[int]:
        """The positions of the entries whose id is in `ids` (the ids are a section of their
        own, read only to take changed rows in; no map of every id is made)."""
        return list(compress(count(), map(ids.__contains__, self.sections.read(*self.saved["ids"]))))

    def close(self) -> None:
        self.sections.close()


def _open_layer(paths: Paths, settings: Settings, layer: str) -> SavedLayer | None:
    """The layer's saved file when it is whole and made by this code for these settings (what
    it was built from is not checked here)."""
    path = cache_path(paths, layer)
    try:
        fd = open_regular(path, MAX_SAVED_BYTES)  # a FIFO or device put in its place is refused, never waited on
    except OSError:
        return None
    sections = None
    try:
        head = os.pread(fd, HEADER, 0)
        if len(head) != HEADER or head[:8] != MAGIC:
            return None
        length, crc = int.from_bytes(head[8:16], "big"), int.from_bytes(head[16:20], "big")
        size = os.fstat(fd).st_size
        if length > size - HEADER:  # a damaged length: never read (or allocate) past the file
            log.info("prepared index not used: %s: its header claims more than the file holds", path)
            return None
        body = os.pread(fd, length, HEADER)
        if len(body) != length or zlib.crc32(body) != crc:
            return None
        data = marshal.loads(body)
        if (data["stamp"] != code_stamp() or data["workspace"] != str(paths.workspace)
                or data["settings"] != _settings_key(settings) or data["layer"] != layer):
            return None
        sections = _Sections(path, fd, HEADER + length, size)
        core = data["core"]
        tables = [ChunkTable(*saved) for saved in data["sections"]]
        lists: list[Chunks] = [Chunks(sections, chunks, core["size"]) for chunks in tables]
        if data.get("records"):  # the JSON pieces as UTF-8 records
            lists[3] = Records(sections, tables[3], core["size"], data["records"])
        index = _index(core, lists, Postings(sections, data["postings"]))
        index.bitmaps = Postings(sections, data["bitmaps"])
        pane_at = tuple(data["pane"])
        index._pane = lambda: read_pane(sections.read(*pane_at))  # the TUI's panes ask for it
        return SavedLayer(index, data, sections)
    except (OSError, KeyError, ValueError, TypeError, IndexError, EOFError) as exc:
        log.info("prepared index not used: %s: %s", path, exc)
        if sections is not None:
            sections.close()
        return None
    finally:
        if sections is None:
            os.close(fd)


def _index(core: dict[str, Any], lists: Sequence[Sequence[Any]], postings: Mapping[str, bytes]) -> LayerIndex:
    rows, shown, made, frags = lists
    return LayerIndex.from_state(core, rows, shown, made, frags, postings)


def load_prepared(paths: Paths, settings: Settings, sources: bool = True) -> Prepared | None:
    """The saved state brought up to date with what changed since (see the module's notes),
    or None when a layer has to be rebuilt whole. With `sources` False, the files and rows it
    was built from are not checked: only for what depends on nothing else (a line depends on
    its text and the settings alone)."""
    layers = current_layers(paths, settings, sources)
    if len(layers) != len(LAYERS):
        return None
    return _prepared(layers)


def saved_indexes(paths: Paths, settings: Settings) -> dict[str, LayerIndex]:
    """Each layer's saved index as it is, what it was built from not checked: only for what
    depends on nothing else (a line depends on its text and the settings alone)."""
    found = {}
    for layer in LAYERS:
        saved = _open_layer(paths, settings, layer)
        if saved is not None:
            found[str(layer)] = saved.index
    return found


def saved_conversation(paths: Paths, settings: Settings) -> LayerCandidates | None:
    """The conversation layer as saved, with the rows changed since taken in (its `row_gen`
    the counter it is exactly current at); None when none is saved or it must be rebuilt.
    For a reader that wants the rows' entries without reading every row (the doctor)."""
    saved = _open_layer(paths, settings, Layer.CONVERSATION)
    if saved is None:
        return None
    try:
        now = _rows_now(paths, settings, saved)
    except (DamagedPreparedIndex, OSError, KeyError, ValueError, TypeError, IndexError, EOFError, sqlite3.Error) as exc:
        log.info("prepared conversation layer not used: %s", exc)
        now = None
    if now is None:
        saved.close()
        return None
    return now[0]


def _prepared(layers: Mapping[str, tuple[LayerCandidates, list[Problem], str | None]],
              failed: frozenset[str] = frozenset()) -> Prepared:
    stamps = [layers[layer][2] for layer in LAYERS]
    stamp = None if any(s is None for s in stamps) else "|".join(stamps)  # type: ignore[arg-type]
    return Prepared.of({layer: (layers[layer][0], layers[layer][1]) for layer in LAYERS}, failed, stamp)


def current_layers(paths: Paths, settings: Settings, sources: bool = True,
                   layers: tuple[str, ...] = LAYERS) -> dict[str, tuple[LayerCandidates, list[Problem], str | None]]:
    """Each layer (of `layers`) whose saved file, brought up to date, describes its memories
    exactly: (index, problems, stamp of exactly this state or None)."""
    read_ns = time.time_ns()  # before anything is looked at: a file changed after it is hashed next time
    found: dict[str, tuple[LayerCandidates, list[Problem], str | None]] = {}
    for layer in layers:
        saved = _open_layer(paths, settings, layer)
        if saved is None:
            continue
        try:
            if not sources:
                now: tuple[LayerCandidates, list[Problem], str | None] | None = (saved.index, [], None)
            elif layer == Layer.CONVERSATION:
                now = _rows_now(paths, settings, saved)
            else:
                now = _files_now(paths, settings, layer, saved, read_ns)
        except DamagedPreparedIndex as exc:  # the file is removed: the layer is rebuilt
            log.info("%s", exc)
            now = None
        except (OSError, KeyError, ValueError, TypeError, IndexError, EOFError, sqlite3.Error) as exc:
            log.info("prepared %s layer not used: %s", layer, exc)
            now = None
        if now is None:
            saved.close()
        else:
            found[layer] = now
    return found


def _rows_now(paths: Paths, settings: Settings,
              saved: SavedLayer) -> tuple[LayerCandidates, list[Problem], str | None] | None:
    """The conversation layer with the rows changed since it was saved taken in, or None."""
    since = saved.saved["info"]["gen"]
    if not isinstance(since, int):  # no rows then ("absent", "empty"): valid while still so
        return (saved.index, [], saved.stamp()) if row_changes.generation(paths.db_path) == since else None
    changes = row_changes.changes_since(paths.db_path, paths.workspace, since, LOG_KEPT)
    if changes is None:
        return None
    if not changes.ids:
        saved.index.row_gen = changes.gen
        return saved.index, [], saved.stamp()
    removed = saved.positions(changes.ids)
    added = LayerIndex.from_entries(Layer.CONVERSATION, [row_changes.conversation_entry(r) for r in changes.rows])
    if len(changes.ids) <= REBASE_ROWS:  # laid over the saved layer, which stays as it is
        patched = PatchedLayer(saved.index, removed, added)
        patched.row_gen = changes.gen
        return patched, [], f"{saved.stamp()}+{changes.gen}"
    # many: spliced in, and the layer saved again as of now
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    core, lists, postings = splice(saved.index, removed, added, maker)
    _save_layer(paths, settings, Layer.CONVERSATION, core, lists, postings, {"gen": changes.gen})
    index = _index(core, lists, postings)
    index.row_gen = changes.gen
    return index, [], None


def _files_now(paths: Paths, settings: Settings, layer: str, saved: SavedLayer,
               read_ns: int) -> tuple[LayerCandidates, list[Problem], str | None] | None:
    """A Markdown layer with the files changed since it was saved parsed again and spliced in
    (and saved), or None when the layer's root cannot be read."""
    files, walk_problems = memory_file_names(paths.root(layer), within=paths.container(layer))  # paths.memory_files
    root = str(paths.root(layer))
    if any(p.source == root for p in walk_problems):
        return None  # a failed layer: the store reports it
    info = saved.saved["info"]
    states: dict[str, Any] = info["files"]
    fresh = info["read_ns"] - FRESH_NS
    changed: list[str] = []
    problems: list[Problem] = []
    for path in files:
        state = states.get(path)
        if state is None or not _unchanged(path, state, fresh):
            changed.append(path)
        elif state[4]:
            problems.append(Problem(path, state[4]))
    gone = set(changed)
    if len(states) != len(files) - sum(1 for name in changed if name not in states):  # a saved file is gone
        current = set(files)
        gone |= {name for name in states if name not in current}
    if not gone:
        return saved.index, problems + walk_problems, saved.stamp()
    from .scan import Scan

    scan = Scan({layer: paths.root(layer)}, within={layer: paths.container(layer)})
    records = scan.read_files(layer, [Path(name) for name in changed])
    read = scan.file_states(layer)
    base = saved.index
    if not isinstance(base._rows, Chunks):
        return None
    removed = [pos for pos, row in enumerate(base._rows.materialize()) if row[_PATH_AT] in gone]
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    lines = LineCache()  # an edited file's other entries keep their saved lines: few are made (and redacted)
    base.seed_positions(lines, maker, removed)
    added = LayerIndex.from_entries(layer, [e for rec in records for e in rec.entries], lines)
    core, lists, postings = splice(base, removed, added, maker)
    kept = {name: state for name, state in states.items() if name not in gone}
    if read is not None:
        _save_layer(paths, settings, layer, core, lists, postings, {"files": {**kept, **read}, "read_ns": read_ns})
    saved.close()
    problems += [p for p in scan.layer_problems(layer)]
    return _index(core, lists, postings), problems + walk_problems, None


def _unchanged(path: str, state: Sequence[Any], fresh: int) -> bool:
    size, mtime_ns, ino, sha, _ = state
    try:
        st = os.stat(path)
    except OSError:
        return False
    if (st.st_size, st.st_mtime_ns, st.st_ino) != (size, mtime_ns, ino):
        return False
    # a write within one mtime tick, or one that put the mtime back, changes neither size
    # nor mtime, but always the ctime (which no one can set back): hashed again then
    if mtime_ns >= fresh or st.st_ctime_ns >= fresh:
        if not sha:
            return False
        try:
            return sha256(read_regular(path, MAX_FILE_BYTES)) == sha
        except OSError:
            return False
    return True


# ---------------------------------------------------------------------- building
def open_prepared(paths: Paths, settings: Settings, spawn: bool = False) -> Prepared:
    """The saved state brought up to date, the layers that cannot be rebuilt alone (`spawn`:
    as `prepare`'s).

    While another writer holds muse.db so that it cannot be read (SPEC §8, "a locked database
    costs the prompt nothing"), the conversation layer is left out at once, said in the
    problems, and the Markdown layers answer as usual; nothing waits on the lock."""
    if row_changes.locked(paths.db_path):
        layers = current_layers(paths, settings, layers=(Layer.USER, Layer.PROJECT))
        problem = Problem(str(paths.db_path), "conversation memories unavailable: the database is locked by another "
                                              "writer, so they were left out rather than waited for")
        have = {layer: (now[0], now[1]) for layer, now in layers.items()}
        have[Layer.CONVERSATION] = (LayerIndex.from_entries(Layer.CONVERSATION, []), [problem])
        prepared = prepare(paths, settings, have=have, spawn=spawn) if len(have) < len(LAYERS) else Prepared.of(have)
        return replace(prepared, failed_layers=prepared.failed_layers | {Layer.CONVERSATION}, stamp=None)
    layers = current_layers(paths, settings)
    if len(layers) == len(LAYERS):
        return _prepared(layers)
    return prepare(paths, settings, have={layer: (now[0], now[1]) for layer, now in layers.items()}, spawn=spawn)


def prepare(paths: Paths, settings: Settings, save: bool = True,
            have: Mapping[str, tuple[LayerCandidates, list[Problem]]] | None = None, spawn: bool = False) -> Prepared:
    """The layers not in `have` loaded from the memories (the store, read-only) and indexed;
    each saved for the next process when everything it was built from can be checked later.
    The layers in `have` are taken as they are.

    When the conversation layer and a Markdown layer are both missing (a first run), a child
    process builds and saves the Markdown layers while this one builds the conversation
    layer (the two share nothing); they are then opened as any saved layer is, checked
    against their files. Whatever the child did not save is built here. The child is forked
    from a process without other threads; from one with threads (the TUI's), only with
    `spawn`, as a new interpreter (which pays for its imports, ≈0.3 s, beside this one: only
    for a muse.db of `SPAWN_DB_BYTES` or more)."""
    have = dict(have or {})
    missing: list[str] = [str(layer) for layer in LAYERS if layer not in have]
    aside = [layer for layer in missing if layer != Layer.CONVERSATION]
    child = None
    if save and paths.home.is_dir() and Layer.CONVERSATION in missing and aside:
        child = _build_aside(paths, settings, aside, spawn)
    layers: dict[str, tuple[LayerCandidates, list[Problem]]] = dict(have)
    if child is None:
        built, failed = _build(paths, settings, save, missing)
        layers.update(built)
        return Prepared.of(layers, failed)
    try:
        built, failed = _build(paths, settings, save, [str(Layer.CONVERSATION)])
    finally:
        _wait(child)
    if Layer.CONVERSATION in failed and _locked_out(built[Layer.CONVERSATION][1]):
        # the child, opening muse.db beside this one (a fresh database turned to WAL, its
        # tables made), can hold it longer than the wait: once it is gone, read the rows again
        built, failed = _build(paths, settings, save, [str(Layer.CONVERSATION)])
    layers.update(built)
    read_ns = time.time_ns()
    for layer in aside:
        saved = _open_layer(paths, settings, layer)
        now = None
        if saved is not None:
            try:
                now = _files_now(paths, settings, layer, saved, read_ns)
            except (DamagedPreparedIndex, OSError, KeyError, ValueError, TypeError, IndexError, EOFError) as exc:
                log.info("prepared %s layer not used: %s", layer, exc)
            if now is None:
                saved.close()
        if now is None:  # not saved by the child (a bad file just changed, an error): built here
            alone, failed_alone = _build(paths, settings, save, [layer])
            layers.update(alone)
            failed |= failed_alone
        else:
            layers[layer] = (now[0], now[1])
    return Prepared.of(layers, failed)


def _locked_out(problems: Sequence[Problem]) -> bool:
    return any("locked" in p.message or "busy" in p.message for p in problems)


def _build_aside(paths: Paths, settings: Settings, layers: list[str], spawn: bool = False) -> Any:
    """A child process that builds and saves `layers` (a pid when forked, a Popen when
    spawned), or None where that is not safe (a process with other threads is never forked)
    or not possible."""
    import threading

    if not hasattr(os, "fork") or threading.active_count() != 1:
        return _spawn_aside(paths, layers) if spawn and _db_bytes(paths) >= SPAWN_DB_BYTES else None
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid:
        log.info("prepared index: the %s layers built by a child process (%d)", " and ".join(layers), pid)
        return pid
    code = 1
    try:
        _build(paths, settings, True, layers)
        code = 0
    except BaseException:  # noqa: BLE001 - the parent builds what was not saved
        pass
    finally:
        os._exit(code)


def _db_bytes(paths: Paths) -> int:
    try:
        return paths.db_path.stat().st_size
    except OSError:
        return 0


def _spawn_aside(paths: Paths, layers: list[str]) -> Any:
    from .. import process_gate

    code = "import sys; from memtui.core.store.prepared import build_aside; build_aside(sys.argv[1:])"
    try:  # isolated, in the Muse home: nothing the workspace ships is imported (SPEC §8)
        child = process_gate.start_python(["-c", code, str(paths.home), str(paths.workspace), *layers],
                                          home=paths.home)
    except OSError as exc:
        log.info("prepared index: no child process for the %s layers: %s", " and ".join(layers), exc)
        return None
    log.info("prepared index: the %s layers built by a child process (%d)", " and ".join(layers), child.pid)
    return child


def build_aside(argv: Sequence[str]) -> None:
    """A spawned child's work (`_spawn_aside`): HOME WORKSPACE LAYER... built and saved with
    the settings read here (a layer saved with other settings than the parent's is not used)."""
    from ..settings import load_settings

    paths = Paths(Path(argv[0]), Path(argv[1]))
    _build(paths, load_settings(paths), True, list(argv[2:]))


def _wait(child: Any) -> None:
    if not isinstance(child, int):
        child.wait()
        return
    try:
        os.waitpid(child, 0)
    except ChildProcessError:
        pass


def _build(paths: Paths, settings: Settings, save: bool,
           missing: list[str]) -> tuple[dict[str, tuple[LayerCandidates, list[Problem]]], frozenset[str]]:
    """`missing` loaded from the memories and indexed (and saved): each one's index and
    problems, and those of them that failed."""
    from .memory import MemoryStore

    lines = LineCache()  # the lines saved for the layers rebuilt here: most of their texts did not change
    for layer in missing:
        stale = _open_layer(paths, settings, layer)
        if stale is not None:
            try:
                stale.index.seed_made(lines)
            except DamagedPreparedIndex:
                pass
            finally:
                stale.close()
    gen = _generation(paths, create=save and paths.home.is_dir()) if Layer.CONVERSATION in missing else None
    read_ns = time.time_ns()
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    store = MemoryStore(paths, index=False)
    try:
        files = [layer for layer in missing if layer != Layer.CONVERSATION]
        if files:
            store.load_layers(files)
        built: dict[str, LayerCandidates] = {layer: LayerIndex.from_entries(layer, store.snapshot(layer), lines,
                                                                            keep_terms=False) for layer in files}
        failed = frozenset(layer for layer in files if layer in store.layer_errors)
        problems = {layer: store.layer_problems(layer) for layer in files}
        conversation = None
        if Layer.CONVERSATION in missing:
            # its saved state made straight from the rows, in bulk (no entry per row)
            try:
                columns = conversation_columns(store.conversations.raw_rows(paths.workspace))
                problems[Layer.CONVERSATION] = []
            except Exception as exc:  # the layer fails alone, as in the store; the others still load
                columns = conversation_columns([])
                problems[Layer.CONVERSATION] = [Problem(str(paths.db_path), f"conversation memories unavailable: {exc}")]
                failed |= {Layer.CONVERSATION}
            conversation = conversation_state(columns, maker, lines)
            built[Layer.CONVERSATION] = _index(*conversation)
        if save and not failed and paths.home.is_dir():
            for layer in missing:
                info: dict[str, Any]
                if layer == Layer.CONVERSATION:
                    if gen == "untracked" or conversation is None:
                        continue
                    info = {"gen": gen}
                    core, lists, postings = conversation
                else:
                    states = store.scan.file_states(layer)
                    if states is None:
                        continue
                    info = {"files": states, "read_ns": read_ns}
                    index = built[layer]
                    assert isinstance(index, LayerIndex)
                    state = index.state(maker)
                    lists = [state.pop(name) for name in ("rows", "shown", "made", "frags")]
                    postings = state.pop("postings")
                    core = {**state, "size": len(lists[0])}
                    built[layer] = _index(core, lists, postings)  # answers with the lines and JSON just made
                _save_layer(paths, settings, layer, core, lists, postings, info)
            rows_index = built.get(Layer.CONVERSATION)
            if isinstance(rows_index, LayerIndex) and isinstance(gen, int):
                rows_index.row_gen = gen  # read before the rows: they are at least as new
        return {layer: (built[layer], problems[layer]) for layer in missing}, failed
    finally:
        store.close()


def _save_layer(paths: Paths, settings: Settings, layer: str, core: dict[str, Any], lists: list[list[Any]],
                postings: Mapping[str, bytes], info: dict[str, Any]) -> None:
    """Save one layer's state (`core`, its per-position lists, its postings) and what it was
    built from (`info`); never raises (a cache is never required)."""
    for _, mtime_ns, _, _, problem in info.get("files", {}).values():
        if problem and mtime_ns >= info["read_ns"] - FRESH_NS:
            return  # a bad file just changed: nothing to hash it against later
    writer = _Writer()
    directory = {term: writer.raw(raw) for term, raw in sorted(postings.items())}
    n_active = core["n_active"]
    bitmaps = {}  # a frequent term's bitmap (fewer bytes than its positions): a query's counts in a few int operations
    if n_active >= LayerIndex.BITMAP_MIN:
        for term, raw in sorted(postings.items()):
            if len(raw) * 8 >= n_active:  # at least one active entry in 32 has it
                bits = bitmap(memoryview(raw).cast("i"), n_active)
                bitmaps[term] = writer.raw(bits.to_bytes((n_active + 7) // 8, "little"))
    pane = core.get("pane")
    data: dict[str, Any] = {"stamp": code_stamp(), "workspace": str(paths.workspace), "settings": _settings_key(settings),
            "layer": str(layer), "info": info, "core": {name: value for name, value in core.items() if name != "pane"},
            "postings": directory, "bitmaps": bitmaps, "ids": writer.raw(marshal.dumps([row[_ID_AT] for row in lists[0]])),
            # the order the TUI's pane lists the entries in (a section of its own: only the TUI reads it)
            "pane": writer.raw(marshal.dumps(saved_pane(pane) if pane is not None else
                                             saved_pane(_index(core, lists, postings).pane()))),
            "sections": [ChunkTable.saved(writer.chunked(values)) for values in lists[:3]]}
    records = writer.records(lists[3])
    data["records"] = records[1] if records is not None else None  # where each record ends
    data["sections"].append(ChunkTable.saved(records[0] if records is not None else writer.chunked(lists[3])))
    target = cache_path(paths, layer)
    try:
        body = marshal.dumps(data)
        gate.make_dir(target.parent, root=paths.home, mode=0o700)
        header = MAGIC + len(body).to_bytes(8, "big") + zlib.crc32(body).to_bytes(4, "big")
        gate.write(target, b"".join([header, body, *writer.parts]), root=paths.home, kind=gate.Kind.DATA)
        legacy = target.parent / f"{cache_name(paths)}.bin"  # the one file of every layer memtui saved before
        if legacy.exists():
            gate.remove(legacy, root=paths.home)
    except (OSError, ValueError) as exc:
        log.info("prepared index not saved: %s", exc)


def check_rows(index: LayerCandidates) -> None:
    """Read every saved chunk of a layer's rows and check it (not unmarshalled, not kept):
    whoever makes its entries one by one later (the TUI's panes, as they page) finds a
    damaged section now, not then. A layer indexed in this process has nothing to check."""
    base = index.base if isinstance(index, PatchedLayer) else index
    rows = getattr(base, "_rows", None)
    if isinstance(rows, Chunks):
        rows.check()
