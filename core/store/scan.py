"""Files -> entries (SPEC §1, §2): which files are memory, read incrementally by size and
mtime, parsed (or served from the index's parsed-entry cache), each bad file its own
reported problem."""

from __future__ import annotations

import hashlib
import json
import os
import stat as stat_mod
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import markdown as md
from ..bounded_reader import NotRegularFile, read_regular
from ..fileio import sha256
from ..forgetting import expiry_value
from ..model import IMPORTANCE_OF, LAYER_OF, STATUS_OF, Entry, Importance, Status, importance_of, status_of
from ..paths import MAX_FILE_BYTES, Problem, iter_memory_files, relative_posix
from ..relevance import entry_terms
from ..scope import scope_of
from ..supersession import listed, superseding_id
from .rows import conversation_entry  # noqa: F401  (re-exported)

CACHE_VERSION = 6  # bump when what is cached changes shape


def _code_digest() -> str:
    """The parse cache is also keyed by the code that fills it (parsing, terms, this module):
    a change to how entries are split or terms made is never served from an older cache."""
    h = hashlib.sha256(str(CACHE_VERSION).encode())
    here = Path(__file__).resolve()
    for source in (here, here.parent.parent / "markdown.py", here.parent.parent / "relevance.py",
                   here.parent.parent / "supersession.py",
                   # the parsing the face markdown.py gathers (SPEC §2)
                   here.parent.parent / "markdown_lines.py", here.parent.parent / "frontmatter.py",
                   here.parent.parent / "markdown_entries.py"):
        try:
            h.update(source.read_bytes())
        except OSError:
            h.update(b"unreadable")
    return h.hexdigest()[:16]


CACHE_KEY = f"{CACHE_VERSION}-{_code_digest()}"


@dataclass
class FileRecord:
    path: Path
    layer: str
    rel: str
    size: int
    mtime_ns: int
    sha: str
    data: bytes
    entries: tuple[Entry, ...]
    saved_payload: str | None  # the parsed entries as cached in the index (`payload`), once made
    _parsed: md.ParsedFile | None = None
    _fields: tuple[dict[str, Any], list[list[Any]]] | None = None  # `_file_entries` of the parse, for `payload`
    cached: bool = False  # served from the index's cache (so the cache is current)
    ino: int = 0
    ctime_ns: int = 0  # any write moves it, even one that puts the mtime back

    @property
    def payload(self) -> str:
        """The parsed entries as cached in the index (`make_payload`), made when first asked."""
        if self.saved_payload is None:
            self.saved_payload = (_payload(self.layer, *self._fields) if self._fields is not None
                                  else make_payload(self.layer, self.path, self.parsed))
            self._fields = None
        return self.saved_payload

    @property
    def parsed(self) -> md.ParsedFile:
        """The file's structure, for splicing; parsed on first use (loads may come from the cache)."""
        if self._parsed is None:
            self._parsed = md.parse_text(self.data.decode("utf-8"))
        return self._parsed


def _importance(meta: dict[str, Any]) -> Importance:
    return importance_of(meta.get("importance"))


def _status(meta: dict[str, Any]) -> Status:
    return status_of(meta.get("status"))


def file_fields(meta: dict[str, Any]) -> dict[str, Any]:
    """The frontmatter fields every entry of a file shares (`updated_at` None: use the mtime)."""
    return {
        "category": md.text_field(meta, "type"), "tags": list(md.tags_of(meta)),
        "source": md.text_field(meta, "source"), "importance": _importance(meta), "status": _status(meta),
        "raw_status": md.text_field(meta, "status"), "name": md.text_field(meta, "name"),
        "description": md.text_field(meta, "description"), "updated_at": md.frontmatter_updated_at(meta),
        "pinned": _pinned(meta),
        "paths": list(scope_of(meta)),  # SPEC §16: the files the memory is about
        "superseded": [list(item) for item in listed(meta)],  # SPEC §17: [entry text, by, by_text]
        "expires": expiry_value(meta.get("expires")),  # SPEC §18
    }


def _pinned(meta: dict[str, Any]) -> bool:
    """SPEC §15: `pinned: true` or `alwaysApply: true` (a YAML boolean, not the string) keeps
    the file's entries present in focused injection."""
    return meta.get("pinned") is True or meta.get("alwaysApply") is True


def _file_entries(layer: str, path: Path, parsed: md.ParsedFile) -> tuple[dict[str, Any], list[list[Any]]]:
    """A file's shared fields (`file_fields`) and its entries as [id, text, section, line_start,
    line_end, kind, terms], what the index's cache holds of it."""
    fields = file_fields(parsed.meta)
    tags = fields["tags"]
    seen: dict[str, int] = {}
    entries = []
    for raw in parsed.entries:
        k = seen.get(raw.text, 0)
        seen[raw.text] = k + 1
        entries.append([md.entry_id(layer, str(path), raw.text, k), raw.text, raw.section, raw.line_start,
                        raw.line_end, raw.kind,
                        entry_terms(raw.text, raw.section, fields["name"], fields["description"], tags)])
    return fields, entries


def make_payload(layer: str, path: Path, parsed: md.ParsedFile) -> str:
    """A file's entries with their ids and terms, as cached in the index (keyed by path + hash)."""
    return _payload(layer, *_file_entries(layer, path, parsed))


def _payload(layer: str, fields: dict[str, Any], entries: list[list[Any]]) -> str:
    return json.dumps({"v": CACHE_KEY, "layer": layer, "fields": fields,
                       "entries": [[*entry[:6], sorted(entry[6])] for entry in entries]}, ensure_ascii=False)


def entries_from_payload(layer: str, path: Path, rel: str, payload: str, mtime: float,
                         roots: dict[str, Path] | None = None) -> tuple[Entry, ...] | None:
    data = json.loads(payload)
    if data.get("v") != CACHE_KEY or data.get("layer") != layer:
        return None
    return _entries(layer, path, rel, data["fields"], data["entries"], mtime, roots)


def _entries(layer: str, path: Path, rel: str, f: dict[str, Any], entries: list[list[Any]],
             mtime: float, roots: dict[str, Path] | None = None) -> tuple[Entry, ...]:
    if f.get("superseded"):
        return _with_superseded(layer, path, rel, f, entries, mtime, roots)
    common = dict(  # the layer, importance and status as their enum members (the payload holds their names)
        layer=LAYER_OF[layer], category=f["category"], tags=tuple(f["tags"]), source=f["source"],
        importance=IMPORTANCE_OF[f["importance"]], status=STATUS_OF[f["status"]], raw_status=f["raw_status"], name=f["name"],
        description=f["description"], updated_at=mtime if f["updated_at"] is None else f["updated_at"],
        path=path, rel_path=rel, pinned=bool(f.get("pinned", False)), paths=tuple(f.get("paths", ())), expires=f.get("expires"),
    )
    return tuple(Entry(id=entry_id, text=text, section=section, line_start=start, line_end=end, kind=kind,
                       terms=frozenset(map(sys.intern, terms)), **common)  # (one string per term, not per entry)
                 for entry_id, text, section, start, end, kind, terms in entries)


def _with_superseded(layer: str, path: Path, rel: str, f: dict[str, Any], entries: list[list[Any]],
                     mtime: float, roots: dict[str, Path] | None) -> tuple[Entry, ...]:
    """`_entries` of a file whose frontmatter lists superseded entries (SPEC §17): those are
    archived, shown as `superseded`, and name the entry that replaced them."""
    from dataclasses import replace

    known = dict(roots or {})
    known.setdefault(layer, path.parents[rel.count("/")])  # this file's own root
    by_text = {text: superseding_id(by, new_text, known) for text, by, new_text in f["superseded"]}
    plain = _entries(layer, path, rel, dict(f, superseded=[]), entries, mtime)
    return tuple(replace(e, status=Status.ARCHIVED, raw_status="superseded", superseded_by=by_text[e.text])
                 if e.text in by_text else e for e in plain)


class Scan:
    """The Markdown side of the store: the files of the user and project layers, read
    incrementally, with every file that cannot be memory kept as a reported problem.

    Containment is structural: whatever goes wrong while reading one file (an OSError, a
    parser bug, bad YAML) becomes that file's problem, and the other files still load."""

    def __init__(self, roots: dict[str, Path], within: dict[str, Path] | None = None):
        self.roots = roots
        # what each root must resolve inside (SPEC §1: `.muse/memory` inside the workspace)
        self.within = within or {}
        self.files: dict[Path, FileRecord] = {}
        self._file_problems: dict[Path, tuple[str, Problem, tuple[int, int, int] | None]] = {}
        self._walk_problems: dict[str, list[Problem]] = {}
        self.layer_errors: dict[str, Problem] = {}

    @property
    def problems(self) -> list[Problem]:
        found = [p for _, p, _ in self._file_problems.values()]
        for layer in self.roots:
            found += self._walk_problems.get(layer, [])
        return found

    def layer_problems(self, layer: str) -> list[Problem]:
        """The problems of one layer's files and walk."""
        found = [p for lay, p, _ in self._file_problems.values() if lay == layer]
        return found + self._walk_problems.get(layer, [])

    def entries(self, layer: str) -> list[Entry]:
        out: list[Entry] = []
        for rec in sorted((r for r in self.files.values() if r.layer == layer), key=lambda r: r.rel):
            out.extend(rec.entries)
        return out

    def file_states(self, layer: str) -> dict[str, tuple[Any, ...]] | None:
        """path -> (size, mtime_ns, inode, sha256 or "", problem message or "") of every file of
        the layer as it was read; None when one of them could not be stat-ed (nothing to check
        a saved state against)."""
        out: dict[str, tuple[Any, ...]] = {}
        for path, rec in self.files.items():
            if rec.layer == layer:
                out[str(path)] = (rec.size, rec.mtime_ns, rec.ino, rec.sha, "")
        for path, (lay, problem, stat_key) in self._file_problems.items():
            if lay == layer:
                if stat_key is None:
                    return None
                out[str(path)] = (*stat_key, "", problem.message)
        return out

    def problem_of(self, path: Path) -> Problem | None:
        found = self._file_problems.get(path)
        return found[1] if found else None

    def reload_layer(self, layer: str, changed: set[Path], full: bool, touched: list[str],
                     cache: dict[str, tuple[str, str]] | None) -> tuple[bool, list[FileRecord]]:
        """Re-read the layer's changed files. Returns (anything changed?, records to index)."""
        root = self.roots[layer]
        files, walk_problems = iter_memory_files(root, within=self.within.get(layer))
        dirty = walk_problems != self._walk_problems.get(layer, [])
        root_problem = next((p for p in walk_problems if p.source == str(root)), None)
        if root_problem is not None:
            self.layer_errors[layer] = root_problem
        else:
            self.layer_errors.pop(layer, None)
        self._walk_problems[layer] = walk_problems
        current = set(files)
        for old in [p for p, rec in self.files.items() if rec.layer == layer and p not in current]:
            del self.files[old]
            touched.append(str(old))
            dirty = True
        for old in [p for p, (lay, _, _) in self._file_problems.items() if lay == layer and p not in current]:
            del self._file_problems[old]
            dirty = True
        reindex: list[FileRecord] = []
        for path in files:
            rec = self.files.get(path)
            try:
                st = path.stat()
            except OSError as exc:
                dirty |= self._set_problem(layer, path, f"cannot read: {exc.strerror or exc}", None)
                if self.files.pop(path, None) is not None:
                    touched.append(str(path))
                continue
            stat_key = (st.st_size, st.st_mtime_ns, st.st_ino)
            if not full and path not in changed:
                if rec is not None and (rec.size, rec.mtime_ns, rec.ino, rec.ctime_ns) == (*stat_key, st.st_ctime_ns):
                    continue
                known = self._file_problems.get(path)
                if rec is None and known is not None and known[2] == stat_key:
                    continue  # still the same bad file: already reported
            new = self._read_contained(layer, root, path, st, cache)
            if new is None:
                dirty = True
                if self.files.pop(path, None) is not None:
                    touched.append(str(path))
                continue
            if self._file_problems.pop(path, None) is not None:
                dirty = True
            self.files[path] = new
            if rec is not None and rec.sha == new.sha and rec.entries == new.entries:
                continue  # touched but unchanged (e.g. `touch`): nothing to tell
            touched.append(str(path))
            reindex.append(new)
            dirty = True
        return dirty, reindex

    def read_files(self, layer: str, paths: list[Path]) -> list[FileRecord]:
        """Read just these files of the layer (the others are known unchanged), each as
        `reload_layer` reads it: a record, or its reported problem (`file_states` has both)."""
        root = self.roots[layer]
        out: list[FileRecord] = []
        for path in paths:
            try:
                st = path.stat()
            except OSError as exc:
                self._set_problem(layer, path, f"cannot read: {exc.strerror or exc}", None)
                continue
            new = self._read_contained(layer, root, path, st, None)
            if new is not None:
                self.files[path] = new
                out.append(new)
        return out

    def _read_contained(self, layer: str, root: Path, path: Path, st: os.stat_result,
                        cache: dict[str, tuple[str, str]] | None) -> FileRecord | None:
        try:
            return self._read_file(layer, root, path, st, cache)
        except Exception as exc:  # one file's failure is that file's problem, whatever it is
            self._set_problem(layer, path, f"cannot be read as memory ({type(exc).__name__}: {exc}); "
                              "skipped, not rewritten", (st.st_size, st.st_mtime_ns, st.st_ino))
            return None

    def _set_problem(self, layer: str, path: Path, message: str, stat_key: tuple[int, int, int] | None) -> bool:
        problem = Problem(str(path), message)
        previous = self._file_problems.get(path)
        self._file_problems[path] = (layer, problem, stat_key)
        return previous is None or previous[1] != problem

    def _read_file(self, layer: str, root: Path, path: Path, st: os.stat_result,
                   cache: dict[str, tuple[str, str]] | None = None) -> FileRecord | None:
        stat_key = (st.st_size, st.st_mtime_ns, st.st_ino)
        if not stat_mod.S_ISREG(st.st_mode):
            self._set_problem(layer, path, "not a regular file; skipped without opening it", stat_key)
            return None
        if st.st_size > MAX_FILE_BYTES:
            self._set_problem(layer, path, f"file is {st.st_size} bytes, over the 1 MiB limit; skipped", stat_key)
            return None
        try:
            data = read_regular(path, MAX_FILE_BYTES)
        except NotRegularFile as exc:
            self._set_problem(layer, path, f"{exc}; skipped", stat_key)
            return None
        except OSError as exc:
            self._set_problem(layer, path, f"cannot read: {exc.strerror or exc}", None)
            return None
        sha = sha256(data)
        rel = relative_posix(path, root)
        cached = cache.get(str(path)) if cache else None
        if cached is not None and cached[0] == sha:
            entries = entries_from_payload(layer, path, rel, cached[1], st.st_mtime, self.roots)
            if entries is not None:
                # (its payload is not kept: it is indexed already, and made again from `data` if ever asked for)
                return FileRecord(path, layer, rel, st.st_size, st.st_mtime_ns, sha, data, entries, None,
                                  cached=True, ino=st.st_ino, ctime_ns=st.st_ctime_ns)
        try:
            text = md.decode(data)
            if "\x00" in text:
                raise md.MemoryFileError("looks binary (contains NUL bytes)")
            parsed = md.parse_text(text)
        except md.MemoryFileError as exc:
            self._set_problem(layer, path, f"{exc}; skipped, not rewritten", stat_key)
            return None
        made = _file_entries(layer, path, parsed)
        entries = _entries(layer, path, rel, *made, st.st_mtime, self.roots)
        return FileRecord(path, layer, rel, st.st_size, st.st_mtime_ns, sha, data, entries, None, parsed, made,
                          ino=st.st_ino, ctime_ns=st.st_ctime_ns)
