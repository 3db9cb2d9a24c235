"""One layer's saved file: where it lives, the stamp that says it was made by this code for
these settings, saving a layer's state (`save_layer`) and opening it again as a `LayerIndex`
reading its sections when first needed (`open_layer`). What it was built from is checked
elsewhere (`current_layers`)."""

from __future__ import annotations

import functools
import hashlib
import logging
import marshal
import os
import sys
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, count
from pathlib import Path
from typing import Any

from .. import gate
from ..bitmaps import bitmap
from ..bounded_reader import open_regular
from ..injection import LayerCandidates
from ..model import LAYERS
from ..paths import Paths
from ..settings import Settings
from .entry_rows import ID_AT
from .layer_index import LayerIndex
from .pane_order import read_pane, saved_pane
from .patched_layer import PatchedLayer
from .saved_file import HEADER, MAGIC, Chunks, ChunkTable, Postings, Records, Sections, Writer

log = logging.getLogger("memtui.prepared")

FORMAT = 11  # bump when what is saved changes
FRESH_NS = 3_000_000_000  # a file whose mtime is this close to its reading is hashed again
MAX_SAVED_BYTES = 1 << 34  # a saved layer bigger than this is not one of ours
_CORE = Path(__file__).resolve().parent.parent


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


def settings_key(settings: Settings) -> list[int | bool]:
    return [settings.max_item_chars, bool(settings.redact_secrets)]



@dataclass
class SavedLayer:
    """One layer's file as opened: its index (sections read from `sections` when first
    needed) and what the file says of it (`saved`: what it was built from, its state)."""

    index: LayerIndex
    saved: dict[str, Any]
    sections: Sections

    def stamp(self) -> str:
        st = os.fstat(self.sections.fd)
        return f"{st.st_ino}-{st.st_size}-{st.st_mtime_ns}"

    def positions(self, ids: frozenset[str]) -> list[int]:
        """The positions of the entries whose id is in `ids` (the ids are a section of their
        own, read only to take changed rows in; no map of every id is made). Rows added since
        (the common change: ids the layer never had) are told from the section's bytes alone:
        marshal keeps each id's UTF-8 bytes as they are, so an id whose bytes are nowhere in
        them is in no position, and the section's hundreds of thousands of ids are not made
        into strings (at ten times the store, ≈20 MB made and let go, twice per TUI start)."""
        raw = self.sections.raw(*self.saved["ids"])  # (its checksum checked)
        if not any(i.encode("utf-8", "surrogatepass") in raw for i in ids):
            return []
        return list(compress(count(), map(ids.__contains__, marshal.loads(raw))))

    def close(self) -> None:
        self.sections.close()


def open_layer(paths: Paths, settings: Settings, layer: str) -> SavedLayer | None:
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
                or data["settings"] != settings_key(settings) or data["layer"] != layer):
            return None
        sections = Sections(path, fd, HEADER + length, size)
        core = data["core"]
        tables = [ChunkTable(*saved) for saved in data["sections"]]
        lists: list[Chunks] = [Chunks(sections, chunks, core["size"]) for chunks in tables]
        if data.get("records"):  # the JSON pieces as UTF-8 records
            lists[3] = Records(sections, tables[3], core["size"], data["records"])
        index = index_of(core, lists, Postings(sections, data["postings"]))
        index.bitmaps = Postings(sections, data["bitmaps"])
        pane_at = tuple(data["pane"])
        index.pane_saved = lambda: read_pane(sections.read(*pane_at))  # the TUI's panes ask for it
        return SavedLayer(index, data, sections)
    except (OSError, KeyError, ValueError, TypeError, IndexError, EOFError) as exc:
        log.info("prepared index not used: %s: %s", path, exc)
        if sections is not None:
            sections.close()
        return None
    finally:
        if sections is None:
            os.close(fd)


def index_of(core: dict[str, Any], lists: Sequence[Sequence[Any]], postings: Mapping[str, bytes]) -> LayerIndex:
    rows, shown, made, frags = lists
    return LayerIndex.from_state(core, rows, shown, made, frags, postings)



def saved_indexes(paths: Paths, settings: Settings) -> dict[str, LayerIndex]:
    """Each layer's saved index as it is, what it was built from not checked: only for what
    depends on nothing else (a line depends on its text and the settings alone)."""
    found = {}
    for layer in LAYERS:
        saved = open_layer(paths, settings, layer)
        if saved is not None:
            found[str(layer)] = saved.index
    return found



def save_layer(paths: Paths, settings: Settings, layer: str, core: dict[str, Any], lists: list[list[Any]],
                postings: Mapping[str, bytes], info: dict[str, Any]) -> None:
    """Save one layer's state (`core`, its per-position lists, its postings) and what it was
    built from (`info`); never raises (a cache is never required)."""
    for _, mtime_ns, _, _, problem in info.get("files", {}).values():
        if problem and mtime_ns >= info["read_ns"] - FRESH_NS:
            return  # a bad file just changed: nothing to hash it against later
    writer = Writer()
    directory = {term: writer.raw(raw) for term, raw in sorted(postings.items())}
    n_active = core["n_active"]
    bitmaps = {}  # a frequent term's bitmap (fewer bytes than its positions): a query's counts in a few int operations
    if n_active >= LayerIndex.BITMAP_MIN:
        for term, raw in sorted(postings.items()):
            if len(raw) * 8 >= n_active:  # at least one active entry in 32 has it
                bits = bitmap(memoryview(raw).cast("i"), n_active)
                bitmaps[term] = writer.raw(bits.to_bytes((n_active + 7) // 8, "little"))
    pane = core.get("pane")
    data: dict[str, Any] = {"stamp": code_stamp(), "workspace": str(paths.workspace), "settings": settings_key(settings),
            "layer": str(layer), "info": info, "core": {name: value for name, value in core.items() if name != "pane"},
            "postings": directory, "bitmaps": bitmaps, "ids": writer.raw(marshal.dumps([row[ID_AT] for row in lists[0]])),
            # the order the TUI's pane lists the entries in (a section of its own: only the TUI reads it)
            "pane": writer.raw(marshal.dumps(saved_pane(pane) if pane is not None else
                                             saved_pane(index_of(core, lists, postings).pane()))),
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
    if isinstance(base, LayerIndex) and isinstance(base.rows, Chunks):
        base.rows.check()
