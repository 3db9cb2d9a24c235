"""The prepared index: what `memtui preview` and the hook need to answer a query, saved by
the process that last loaded the memories and checked, not trusted, by the next one.

It holds, per layer, the injection engine's own `LayerIndex` state (entries in base order,
term postings, each entry's one-line text with redaction applied, its cost and what a
candidate shows of it), so a warm run reads one file instead of parsing Markdown, turning
rows into entries and redacting every line. It is derived and rebuildable: it lives in
`<home>/cache/`, never in a workspace, and any doubt means it is rebuilt:

- another format, Python or memtui code (the stamp of memtui's core sources);
- other `maxItemChars` or `redactSecrets` settings (the lines depend on them);
- a Markdown file added, removed, or with another size, mtime or inode; a file that had
  changed within a few seconds of being read is hashed again (a same-size edit within one
  mtime tick keeps size and mtime);
- muse.db's conversation rows: a change counter kept by memtui's triggers in memtui's own
  table moved, or the triggers are missing (the layer is then never taken from here).
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import sqlite3
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import gate
from ..fileio import sha256
from ..injection import LAYER_ORDER, LayerIndex, LineMaker
from ..model import FILE_LAYERS
from ..paths import Paths, Problem
from ..settings import Settings
from .generation import GENERATION_TRIGGERS

log = logging.getLogger("memtui.prepared")

FORMAT = 1  # bump when what is saved changes
MAGIC = b"MEMTUIP2"
FRESH_NS = 3_000_000_000  # a file whose mtime is this close to its reading is hashed again
_CORE = Path(__file__).resolve().parent.parent


@dataclass
class Prepared:
    indexes: dict[str, LayerIndex]
    problems: list[Problem]
    failed_layers: frozenset[str]
    from_cache: bool = False


def cache_path(paths: Paths) -> Path:
    digest = hashlib.sha256(str(paths.workspace).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return paths.home / "cache" / f"injection-{digest}.bin"


def code_stamp() -> str:
    """Changes with any source file of memtui's core (terms, parsing, redaction, the engine)."""
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


def _settings_key(settings: Settings) -> list:
    return [settings.max_item_chars, bool(settings.redact_secrets)]


def _generation(paths: Paths, create: bool = False) -> int | str:
    from .index import MuseDB

    db = MuseDB(paths.db_path)
    try:
        return db.row_generation(create=create)
    finally:
        db.close()


# ---------------------------------------------------------------------- sections
CHUNK = 512  # positions per saved chunk of rows or shown values


class DamagedPreparedIndex(RuntimeError):
    """A section of the saved state fails its checksum (found only when it is first read)."""


class _Sections:
    """The saved file's sections, each read (`pread`) and checked when first asked for."""

    def __init__(self, path: Path, fd: int, base: int):
        self.path = path
        self.fd = fd
        self.base = base

    def read(self, offset: int, length: int, crc: int) -> list:
        piece = os.pread(self.fd, length, self.base + offset)
        if len(piece) != length or zlib.crc32(piece) != crc:
            try:
                gate.remove(self.path, root=self.path.parent)  # rebuilt by the next run
            except OSError:
                pass
            raise DamagedPreparedIndex(f"{self.path}: the prepared index is damaged (a section fails its "
                                       "checksum); it was removed and is rebuilt on the next run")
        return marshal.loads(piece)


class Chunks(Sequence):
    """A saved list read back a chunk at a time, on first use: the hook reads the few entries
    it injects, `--json` all of them."""

    def __init__(self, sections: _Sections, chunks: list[tuple[int, int, int]], size: int):
        self._sections = sections
        self._chunks = chunks
        self._loaded: list[list | None] = [None] * len(chunks)
        self._size = size

    def __len__(self) -> int:
        return self._size

    def materialize(self) -> list:
        """Every value as one plain list (when all of them are wanted)."""
        out: list = []
        for i in range(len(self._chunks)):
            part = self._loaded[i]
            if part is None:
                part = self._loaded[i] = self._sections.read(*self._chunks[i])
            out += part
        return out

    def __getitem__(self, pos):
        i = pos // CHUNK
        part = self._loaded[i]
        if part is None:
            part = self._loaded[i] = self._sections.read(*self._chunks[i])
        return part[pos - i * CHUNK]


class _Writer:
    """Collects the sections after the header: (offset, length, crc32) of each chunk."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def chunked(self, values: list) -> list[tuple[int, int, int]]:
        out = []
        for i in range(0, len(values), CHUNK):
            piece = marshal.dumps(values[i:i + CHUNK])
            out.append((self.size, len(piece), zlib.crc32(piece)))
            self.parts.append(piece)
            self.size += len(piece)
        return out


# ---------------------------------------------------------------------- loading
HEADER = len(MAGIC) + 8 + 4  # magic, the length of the checked part, its crc32


def load_prepared(paths: Paths, settings: Settings, sources: bool = True) -> Prepared | None:
    """The saved state when it still describes the memories exactly, else None. With
    `sources` False, the files and rows it was built from are not checked: only for what
    depends on nothing else (a line depends on its text and the settings alone)."""
    path = cache_path(paths)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    keep = False
    try:
        head = os.pread(fd, HEADER, 0)
        if len(head) != HEADER or head[:8] != MAGIC:
            return None
        length, crc = int.from_bytes(head[8:16], "big"), int.from_bytes(head[16:20], "big")
        body = os.pread(fd, length, HEADER)
        if len(body) != length or zlib.crc32(body) != crc:
            return None
        data = marshal.loads(body)
        prepared = _check(paths, settings, data, _Sections(path, fd, HEADER + length), sources)
        keep = prepared is not None  # its sections are read from `fd` as needed
        return prepared
    except (OSError, KeyError, ValueError, TypeError, IndexError, EOFError, sqlite3.Error) as exc:
        log.info("prepared index not used: %s", exc)
        return None
    finally:
        if not keep:
            os.close(fd)


def _read_generation(paths: Paths) -> int | str:
    """`MuseDB.row_generation` read-only with the standard library alone (no write, no wait)."""
    if not paths.db_path.is_file():
        return "absent"
    conn = sqlite3.connect(f"{paths.db_path.as_uri()}?mode=ro", uri=True, timeout=1.0)
    try:
        names = {r[0]: r[1] for r in conn.execute("SELECT name, sql FROM sqlite_master")}
        if "memories" not in names:
            return "empty"
        if "memtui_state" not in names or any(names.get(n) != sql for n, sql in GENERATION_TRIGGERS.items()):
            return "untracked"
        row = conn.execute("SELECT value FROM memtui_state WHERE key = 'rows_gen'").fetchone()
        return "untracked" if row is None else int(row[0])
    finally:
        conn.close()


def _check(paths: Paths, settings: Settings, data: dict, sections: _Sections, sources: bool = True) -> Prepared | None:
    if (data["stamp"] != code_stamp() or data["workspace"] != str(paths.workspace)
            or data["settings"] != _settings_key(settings)):
        return None
    if not sources:
        return _prepared(data, sections, [])
    gen = data["gen"]
    if gen == "untracked" or _read_generation(paths) != gen:
        return None
    problems: list[Problem] = []
    for layer in FILE_LAYERS:
        files, walk_problems = paths.memory_files(layer)
        root = str(paths.root(layer))
        if any(p.source == root for p in walk_problems):
            return None  # a failed layer: the store reports it
        saved: dict = data["files"][layer]
        if len(files) != len(saved):
            return None
        for path in files:
            state = saved.get(str(path))
            if state is None:
                return None
            size, mtime_ns, ino, sha, problem = state
            st = os.stat(path)
            if (st.st_size, st.st_mtime_ns, st.st_ino) != (size, mtime_ns, ino):
                return None
            # a write within one mtime tick, or one that put the mtime back, changes neither size
            # nor mtime, but always the ctime (which no one can set back): hashed again then
            fresh = data["read_ns"] - FRESH_NS
            if mtime_ns >= fresh or st.st_ctime_ns >= fresh:
                if not sha:
                    return None
                with open(path, "rb") as fh:
                    if sha256(fh.read()) != sha:
                        return None
            if problem:
                problems.append(Problem(str(path), problem))
        problems += walk_problems
    return _prepared(data, sections, problems)


def _prepared(data: dict, sections: _Sections, problems: list[Problem]) -> Prepared:
    indexes: dict[str, LayerIndex] = {}
    for name, (core, rows, shown, made, frags) in zip(LAYER_ORDER, data["layers"]):
        size = core["size"]
        indexes[str(name)] = LayerIndex.from_state(core, Chunks(sections, rows, size), Chunks(sections, shown, size),
                                               Chunks(sections, made, size), Chunks(sections, frags, size))
    problems = sorted(set(problems), key=lambda p: (p.source, p.message))
    return Prepared(indexes, problems, frozenset(), from_cache=True)


# ---------------------------------------------------------------------- building
def prepare(paths: Paths, settings: Settings, save: bool = True) -> Prepared:
    """Load the memories (the store, read-only), index them, and save the state for the next
    process when everything it was built from can be checked later."""
    from .memory import MemoryStore

    gen = _generation(paths, create=save and paths.home.is_dir())
    read_ns = time.time_ns()
    store = MemoryStore(paths, index=False)
    try:
        store.load()
        indexes = {str(layer): LayerIndex.from_entries(layer, store.snapshot(layer)) for layer in LAYER_ORDER}
        prepared = Prepared(indexes, store.problems, frozenset(store.layer_errors))
        if save and gen != "untracked" and not store.layer_errors and paths.home.is_dir():
            states = {str(layer): store.scan.file_states(layer) for layer in FILE_LAYERS}
            if all(s is not None for s in states.values()):
                _save(paths, settings, gen, read_ns, states, indexes)
    finally:
        store.close()
    return prepared


def _layer_sections(state: dict, writer: _Writer) -> tuple:
    rows, shown, made, frags = state.pop("rows"), state.pop("shown"), state.pop("made"), state.pop("frags")
    state["size"] = len(rows)
    return (state, writer.chunked(rows), writer.chunked(shown), writer.chunked(made), writer.chunked(frags))


def _save(paths: Paths, settings: Settings, gen: int | str, read_ns: int, files: dict, indexes: dict) -> None:
    for layer_files in files.values():
        for state in layer_files.values():
            size, mtime_ns, ino, sha, problem = state
            if problem and mtime_ns >= read_ns - FRESH_NS:
                return  # a bad file just changed: nothing to hash it against later
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    writer = _Writer()
    data = {
        "stamp": code_stamp(), "workspace": str(paths.workspace), "settings": _settings_key(settings),
        "gen": gen, "read_ns": read_ns, "files": files,
        "layers": [_layer_sections(indexes[layer].state(maker), writer) for layer in LAYER_ORDER],
    }
    target = cache_path(paths)
    try:
        body = marshal.dumps(data)
        gate.make_dir(target.parent, root=paths.home, mode=0o700)
        header = MAGIC + len(body).to_bytes(8, "big") + zlib.crc32(body).to_bytes(4, "big")
        gate.write(target, b"".join([header, body, *writer.parts]), root=paths.home, kind=gate.Kind.DATA)
    except (OSError, ValueError) as exc:  # a cache is never required
        log.info("prepared index not saved: %s", exc)
