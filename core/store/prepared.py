"""The prepared index: what `memtui preview` and the hook need to answer a query, saved by
the process that last loaded the memories and checked, not trusted, by the next one.

It holds, per layer, the injection engine's own `LayerIndex` state (entries in base order,
term postings, each entry's one-line text with redaction applied, its cost and what a
candidate shows of it), so a warm run reads one file instead of parsing Markdown, turning
rows into entries and redacting every line. It is derived and rebuildable: it lives in
`<home>/cache/`, never in a workspace, and any doubt means it is rebuilt, each layer on its
own (an edited Markdown file rebuilds its layer; the conversation rows stay as saved):

- another format, Python or memtui code (the stamp of memtui's core sources);
- other `maxItemChars` or `redactSecrets` settings (the lines depend on them);
- a Markdown file added, removed, or with another size, mtime or inode; a file that had
  changed within a few seconds of being read is hashed again (a same-size edit within one
  mtime tick keeps size and mtime);
- muse.db's conversation rows: a change counter kept by memtui's triggers in memtui's own
  table moved, or the triggers are missing (the layer is then never taken from here).

Within a rebuilt Markdown layer only the changed files are parsed again (the store's
parsed-entry cache in muse.db has the others).
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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import gate
from ..fileio import sha256
from ..injection import LineMaker
from ..model import LAYERS, Layer
from ..paths import Paths, Problem
from ..settings import Settings
from .generation import GENERATION_TRIGGERS
from .layer_index import LayerIndex, LineCache

log = logging.getLogger("memtui.prepared")

FORMAT = 3  # bump when what is saved changes
MAGIC = b"MEMTUIP2"
FRESH_NS = 3_000_000_000  # a file whose mtime is this close to its reading is hashed again
_CORE = Path(__file__).resolve().parent.parent


@dataclass
class Prepared:
    indexes: dict[str, LayerIndex]
    problems: list[Problem]
    failed_layers: frozenset[str]

    @classmethod
    def of(cls, layers: dict[str, tuple[LayerIndex, list[Problem]]], failed: frozenset[str] = frozenset()) -> Prepared:
        """From each layer's index and problems."""
        indexes = {str(layer): layers[layer][0] for layer in LAYERS}
        problems = sorted({p for layer in LAYERS for p in layers[layer][1]}, key=lambda p: (p.source, p.message))
        return cls(indexes, problems, failed)


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
    from .conversations import Conversations

    db = Conversations(paths.db_path)
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

    def __init__(self, path: Path, fd: int, base: int, size: int):
        self.path = path
        self.fd = fd
        self.base = base
        self.size = size  # the file's length: no section may claim more than is there

    def read(self, offset: int, length: int, crc: int) -> list:
        return marshal.loads(self.raw(offset, length, crc))

    def raw(self, offset: int, length: int, crc: int) -> bytes:
        fits = offset >= 0 and length >= 0 and self.base + offset + length <= self.size
        piece = os.pread(self.fd, length, self.base + offset) if fits else b""
        if not fits or len(piece) != length or zlib.crc32(piece) != crc:
            try:
                gate.remove(self.path, root=self.path.parent)  # rebuilt by the next run
            except OSError:
                pass
            raise DamagedPreparedIndex(f"{self.path}: the prepared index is damaged (a section fails its "
                                       "checksum); it was removed and is rebuilt on the next run")
        return piece


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


class Postings(Mapping):
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

    def copied(self, sections: _Sections, chunks: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """Chunks of another saved file, as they are (checked on the way)."""
        out = []
        for offset, length, crc in chunks:
            piece = sections.raw(offset, length, crc)
            out.append((self.size, length, crc))
            self.parts.append(piece)
            self.size += length
        return out

    def raw(self, piece: bytes) -> tuple[int, int, int]:
        at = (self.size, len(piece), zlib.crc32(piece))
        self.parts.append(piece)
        self.size += len(piece)
        return at

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


@dataclass
class SavedLayer:
    """One layer as loaded from the saved file: its index, its problems, and what the file
    holds of it (kept as it is when another layer is rebuilt)."""

    index: LayerIndex
    problems: list[Problem]
    saved: dict
    sections: _Sections


def load_prepared(paths: Paths, settings: Settings, sources: bool = True) -> Prepared | None:
    """The saved state when it still describes the memories exactly, else None. With
    `sources` False, the files and rows it was built from are not checked: only for what
    depends on nothing else (a line depends on its text and the settings alone)."""
    layers = load_layers(paths, settings, sources)
    if len(layers) != len(LAYERS):
        return None
    return Prepared.of({layer: (saved.index, saved.problems) for layer, saved in layers.items()}, frozenset())


def load_layers(paths: Paths, settings: Settings, sources: bool = True) -> dict[str, SavedLayer]:
    """The layers of the saved state that still describe their memories exactly (each layer
    is checked on its own: an edited Markdown file leaves the conversation rows valid)."""
    path = cache_path(paths)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return {}
    keep = False
    try:
        head = os.pread(fd, HEADER, 0)
        if len(head) != HEADER or head[:8] != MAGIC:
            return {}
        length, crc = int.from_bytes(head[8:16], "big"), int.from_bytes(head[16:20], "big")
        size = os.fstat(fd).st_size
        if length > size - HEADER:  # a damaged length: never read (or allocate) past the file
            log.info("prepared index not used: %s: its header claims more than the file holds", path)
            return {}
        body = os.pread(fd, length, HEADER)
        if len(body) != length or zlib.crc32(body) != crc:
            return {}
        data = marshal.loads(body)
        if (data["stamp"] != code_stamp() or data["workspace"] != str(paths.workspace)
                or data["settings"] != _settings_key(settings)):
            return {}
        sections = _Sections(path, fd, HEADER + length, size)
        found = {}
        gen = _read_generation(paths) if sources and Layer.CONVERSATION in data["layers"] else None
        for layer, saved in data["layers"].items():
            problems = _check_layer(paths, layer, saved, gen) if sources else []
            if problems is not None:
                found[layer] = SavedLayer(_layer_index(saved, sections), problems, saved, sections)
        keep = bool(found)  # their sections are read from `fd` as needed
        return found
    except (OSError, KeyError, ValueError, TypeError, IndexError, EOFError, sqlite3.Error) as exc:
        log.info("prepared index not used: %s", exc)
        return {}
    finally:
        if not keep:
            os.close(fd)


def _read_generation(paths: Paths) -> int | str:
    """`Conversations.row_generation` read-only with the standard library alone (no write, no wait)."""
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


def _check_layer(paths: Paths, layer: str, saved: dict, gen: int | str | None) -> list[Problem] | None:
    """The layer's problems when what it was built from is unchanged, else None."""
    if layer == Layer.CONVERSATION:
        return [] if saved["gen"] != "untracked" and saved["gen"] == gen else None
    files, walk_problems = paths.memory_files(layer)
    root = str(paths.root(layer))
    if any(p.source == root for p in walk_problems):
        return None  # a failed layer: the store reports it
    states: dict = saved["files"]
    if len(files) != len(states):
        return None
    problems: list[Problem] = []
    for path in files:
        state = states.get(str(path))
        if state is None:
            return None
        size, mtime_ns, ino, sha, problem = state
        st = os.stat(path)
        if (st.st_size, st.st_mtime_ns, st.st_ino) != (size, mtime_ns, ino):
            return None
        # a write within one mtime tick, or one that put the mtime back, changes neither size
        # nor mtime, but always the ctime (which no one can set back): hashed again then
        fresh = saved["read_ns"] - FRESH_NS
        if mtime_ns >= fresh or st.st_ctime_ns >= fresh:
            if not sha:
                return None
            with open(path, "rb") as fh:
                if sha256(fh.read()) != sha:
                    return None
        if problem:
            problems.append(Problem(str(path), problem))
    return problems + walk_problems


def _layer_index(saved: dict, sections: _Sections) -> LayerIndex:
    core = saved["core"]
    size = core["size"]
    rows, shown, made, frags = (Chunks(sections, chunks, size) for chunks in saved["sections"])
    return LayerIndex.from_state(core, rows, shown, made, frags, Postings(sections, saved["postings"]))


# ---------------------------------------------------------------------- building
def prepare(paths: Paths, settings: Settings, save: bool = True,
            have: dict[str, SavedLayer] | None = None) -> Prepared:
    """The layers not in `have` loaded from the memories (the store, read-only) and indexed;
    the state saved for the next process when everything it was built from can be checked
    later. The layers in `have` are kept as they are, in the saved file too."""
    from .memory import MemoryStore

    have = dict(have or {})
    missing: list[str] = [str(layer) for layer in LAYERS if layer not in have]
    lines = LineCache()  # the lines saved for the layers rebuilt here: most of their texts did not change
    if have:
        stale = load_layers(paths, settings, sources=False)
        try:
            for layer in missing:
                if layer in stale:
                    stale[layer].index.seed_made(lines)
        except DamagedPreparedIndex:
            pass
        finally:
            for fd in {saved.sections.fd for saved in stale.values()}:
                os.close(fd)
    gen = _generation(paths, create=save and paths.home.is_dir()) if Layer.CONVERSATION in missing else None
    read_ns = time.time_ns()
    store = MemoryStore(paths, index=False)
    try:
        store.load_layers(missing)
        built: dict[str, tuple[LayerIndex, list[Problem]]] = {layer: (LayerIndex.from_entries(layer, store.snapshot(layer), lines), store.layer_problems(layer))
                 for layer in missing}
        failed = frozenset(layer for layer in missing if layer in store.layer_errors)
        layers = {layer: (saved.index, saved.problems) for layer, saved in have.items()}
        layers.update(built)
        prepared = Prepared.of(layers, failed)
        if save and not failed and paths.home.is_dir() and gen != "untracked":
            new: dict[str, dict] = {}
            for layer in missing:
                if layer == Layer.CONVERSATION:
                    new[layer] = {"gen": gen}
                else:
                    states = store.scan.file_states(layer)
                    if states is None:
                        return prepared
                    new[layer] = {"files": states, "read_ns": read_ns}
            _save(paths, settings, {layer: (built[layer][0], info) for layer, info in new.items()}, have)
    finally:
        store.close()
    return prepared


def _save(paths: Paths, settings: Settings, built: dict[str, tuple[LayerIndex, dict]],
          kept: dict[str, SavedLayer]) -> None:
    for _, info in built.values():
        for state in info.get("files", {}).values():
            size, mtime_ns, ino, sha, problem = state
            if problem and mtime_ns >= info["read_ns"] - FRESH_NS:
                return  # a bad file just changed: nothing to hash it against later
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    writer = _Writer()
    layers: dict[str, dict] = {}
    try:
        for layer in LAYERS:
            if layer in built:
                index, info = built[layer]
                state = index.state(maker)
                lists = [state.pop(name) for name in ("rows", "shown", "made", "frags")]
                state["size"] = len(lists[0])
                postings = {term: writer.raw(b) for term, b in sorted(state.pop("postings").items())}  # first
                layers[str(layer)] = {**info, "core": state, "sections": [writer.chunked(values) for values in lists],
                                      "postings": postings}
            else:
                saved = kept[layer]
                directory = saved.saved["postings"]
                postings = dict(zip(directory, writer.copied(saved.sections, list(directory.values()))))
                layers[str(layer)] = {**saved.saved, "postings": postings,
                                      "sections": [writer.copied(saved.sections, chunks)
                                                   for chunks in saved.saved["sections"]]}
    except DamagedPreparedIndex as exc:  # a kept layer went bad on disk: save nothing, rebuilt next time
        log.info("prepared index not saved: %s", exc)
        return
    data = {"stamp": code_stamp(), "workspace": str(paths.workspace), "settings": _settings_key(settings),
            "layers": layers}
    target = cache_path(paths)
    try:
        body = marshal.dumps(data)
        gate.make_dir(target.parent, root=paths.home, mode=0o700)
        header = MAGIC + len(body).to_bytes(8, "big") + zlib.crc32(body).to_bytes(4, "big")
        gate.write(target, b"".join([header, body, *writer.parts]), root=paths.home, kind=gate.Kind.DATA)
    except (OSError, ValueError) as exc:  # a cache is never required
        log.info("prepared index not saved: %s", exc)
