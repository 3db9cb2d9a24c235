"""Bringing memories in and out (SPEC §9), over the store: the plan of an import (what is
added where, what is skipped and why), written as one logged, undoable change; and exports
through the format writers of `core/interop`.

An import never overwrites and never duplicates: each memory is checked against what the
target layer already holds (and what other source files of the same import bring) with the
near-duplicate rule of `remember`, so running the same import twice adds nothing; entries of
one source file that resemble each other all come in (the file's own structure is kept
whole). Each imported file says where it came from (`source: import`, `origin: <path>`) and
keeps the source's body as it was, with the source's own frontmatter under the format's key
(so an export gives the file back byte for byte); every file is re-parsed before it is
written: a memory that would not read back as exactly itself is skipped as invalid, with
the reason. A jsonl backup restores its files whole, byte for byte, where their path is
free and nothing in them is already there, and its conversation rows field for field.

Exports go through `interop.sync` (re-runnable; only files memtui wrote are replaced) and
every exported text and file name through `interop._files.outbound_text`/`outbound_name`.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from . import gate, interop
from . import markdown as md
from .fileio import read_regular, sha256
from .interop import BackupFile, Memory, ReadResult
from .interop import sync as export_sync
from .interop._files import outbound_name, outbound_text
from .interop.scoping import exported_scope, imported_scope
from .model import FILE_LAYERS, Entry, Layer
from .paths import MAX_FILE_BYTES, escapes
from .store import MemoryStore
from .store.conversations import Conversations
from .store.database import now_ms
from .store.edits import RowChange

IMPORT_FOLDER = "imported"


@dataclass
class PlannedFile:
    path: Path
    layer: str
    data: bytes
    memories: list[Memory]
    backup: tuple[str, str] | None = None  # a backup's file restored whole: its (layer, path) in the backup

    @property
    def real(self) -> Path:
        """Where the file lands: its path with every link on the way resolved."""
        return Path(os.path.realpath(self.path))


@dataclass
class ImportReport:
    format: str
    source: str
    dry_run: bool
    added: list[Memory] = field(default_factory=list)
    duplicates: list[tuple[Memory, str]] = field(default_factory=list)  # (memory, source of the existing one)
    invalid: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    files: list[PlannedFile] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    conversations: list[dict[str, Any]] = field(default_factory=list)
    boilerplate: list[Memory] = field(default_factory=list)
    # a backup's review state: (review key, entry id) of the entries the person had accepted
    reviewed: list[tuple[str, str, str, int]] = field(default_factory=list)
    reviewed_restored: int = 0  # how many restored entries came back reviewed
    change_id: str | None = None
    scope_notes: list[tuple[str, str]] = field(default_factory=list)  # (origin, what of its scope was not carried)

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format, "source": self.source, "dry_run": self.dry_run,
            "added": len(self.added), "skipped_duplicate": len(self.duplicates), "skipped_invalid": len(self.invalid),
            "files": [{"path": str(f.path), "target": str(f.real), "layer": f.layer, "memories": len(f.memories)}
                      for f in self.files],
            "conversation_rows": len(self.rows), "skipped_boilerplate": len(self.boilerplate),
            "reviewed_restored": self.reviewed_restored,
            "duplicates": [{"text": m.text[:200], "layer": m.layer, "existing": where} for m, where in self.duplicates],
            "invalid": [{"path": p, "reason": r} for p, r in self.invalid],
            "change": self.change_id,
            "scope_notes": [{"path": p, "note": n} for p, n in self.scope_notes],
        }


_UNSAFE_NAME = re.compile(r"[^\w.-]+")


def _clean_part(part: str) -> str:
    return _UNSAFE_NAME.sub("-", part).strip("-.")[:80]


def _file_stem(memory: Memory, fallback: str, source: interop.SourceText | None = None) -> str:
    """The name of the memtui file an import writes: the source file's own path (folders and
    non-ASCII names kept, `core/general.mdc` -> `core/general`), else the memory's name."""
    if source is not None:
        parts = [_clean_part(p) for p in PurePosixPath(source.rel).with_suffix("").parts]
        if parts and all(parts):
            return "/".join(parts)
    base = memory.name or (Path(memory.path).stem if memory.path else "") or Path(memory.origin).stem or fallback
    return _clean_part(base).lower()[:60] or fallback


class _Dumper(yaml.SafeDumper):
    """Block style, with a kept source text (a frontmatter block, an index) as a literal `|`
    block, readable as it was; YAML falls back to a quoted string where a block cannot hold it."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def _yaml(fields: dict[str, Any]) -> str:
    clean = {k: v for k, v in fields.items() if v not in (None, "", [], ())}
    return yaml.dump(clean, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
                     width=1 << 30)


def _frontmatter(fields: dict[str, Any]) -> str:
    text = _yaml(fields)
    return "---\n" + text + "---\n\n" if text.strip() not in ("", "{}") else ""


def _common_fields(group: list[Memory], origin: str, fmt: str, source: interop.SourceText | None = None,
                   verbatim: bool = False) -> dict[str, Any]:
    first = group[0]
    fields: dict[str, Any] = {}
    if first.name:
        fields["name"] = first.name
    if first.description:
        fields["description"] = first.description
    fields["type"] = first.category or None
    if all(m.tags == first.tags for m in group):
        fields["tags"] = list(first.tags) or None
    if first.importance in ("high", "low") and all(m.importance == first.importance for m in group):
        fields["importance"] = first.importance
    if first.status in ("archived", "superseded") and all(m.status == first.status for m in group):
        fields["status"] = first.status
    stamps = [m.updated_at for m in group if m.updated_at]
    if stamps:
        fields["updatedAt"] = datetime.fromtimestamp(max(stamps), tz=UTC).date()
    sources = {m.source for m in group}
    # SPEC §9: an imported file says where it came from; a JSON Lines restore keeps the
    # memory's own `source` (it is the lossless backup) and still names its origin
    fields["source"] = sources.pop() if fmt == "jsonl" and len(sources) == 1 and first.source else "import"
    fields["origin"] = origin
    scopes = {imported_scope(fmt, m)[0] for m in group}
    if len(scopes) == 1 and (carried := scopes.pop()):
        fields["paths"] = list(carried)  # SPEC §16: the scope, as Muse reads it
    own = {k: v for k, v in first.extra.items() if k not in _NOT_KEPT and _plain(v)} if len(group) == 1 else {}
    if source is not None:
        # where the memories go back to on export; with the body kept as it was, also the
        # source's own frontmatter block exactly, so an export gives the file back byte for byte
        head = {"head": source.head} if verbatim and source.head else {}
        own = {"file": source.rel, **head, **source.keep, **own}
    if own:
        fields[fmt] = own  # what only that format knows (Claude Code's type, Cursor's globs), for export
    return fields


_NOT_KEPT = {"file", "conversation", "created_at", "backup", "scope", "scope_note"}


def _plain(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return True
    if isinstance(value, list):
        return all(isinstance(v, (str, int, float, bool)) for v in value)
    return False


def _item(text: str) -> str:
    lines = text.split("\n")
    return "- " + lines[0] + "".join("\n" + ("  " + line if line else "") for line in lines[1:]) + "\n"


def render_forms(group: list[Memory], origin: str, fmt: str, source: interop.SourceText | None = None,
                 whole: bool = False) -> list[str]:
    """Ways to write `group` as one memory file, most faithful first: the source file's body
    as it was (when the whole file comes in); a single memory as the whole body (how a named
    memory or a file of prose reads); then as list items under headings for their sections."""
    forms = []
    # the source's body as it was; when some of its entries do not come in (a generator's line,
    # an entry already stored), the same body with only those entries taken out (issue 40)
    if source is not None:
        bodies = [source.body] if whole else []
        spliced = _body_without_the_rest(group, source)
        if spliced is not None and spliced not in bodies:
            bodies.append(spliced)
        for kept in bodies:
            meta = _common_fields(group, origin, fmt, source, verbatim=True)
            forms.append("---\n" + _yaml(meta) + "---\n" + kept)
    head = _frontmatter(_common_fields(group, origin, fmt, source))
    if len(group) == 1:
        forms.append(head + group[0].text.strip() + "\n")
    body: list[str] = []
    section = ""
    for m in group:
        if m.section != section:
            section = m.section
            body.append(("\n" if body else "") + (f"## {section}\n\n" if section else ""))
        body.append(_item(m.text.strip()))
    forms.append(head + "".join(body))
    return forms


def _same_text(text: str) -> str:
    """A text as import compares it with what is stored: its words, whatever the spacing."""
    return " ".join(text.split())


def _body_without_the_rest(group: list[Memory], source: interop.SourceText | None) -> str | None:
    """The source's body as it was, with only the entries that are not in `group` taken out
    (a generator's "This file provides guidance to ..." line, an entry already stored), each
    the way memtui deletes an entry (SPEC §2: every other byte stays); None when the body's
    entries are not `group`'s, in order, with others between."""
    if source is None:
        return None
    try:
        parsed = md.parse_text(source.body)  # the body alone: a line of it that reads as frontmatter does not count
    except md.MemoryFileError:
        return None
    wanted = [m.text.strip() for m in group]
    rest, k = [], 0
    for entry in parsed.entries:
        if k < len(wanted) and entry.text == wanted[k]:
            k += 1
        else:
            rest.append(entry)
    if k != len(wanted) or parsed.meta:
        return None
    if not rest:
        return source.body
    try:
        return md.delete_entries(parsed, rest, datetime.now(UTC).date())
    except md.MemoryFileError:
        return None


def _reads_back(data: str, group: list[Memory]) -> str | None:
    """None when the file parses to exactly these entries (text and section), else why not."""
    try:
        parsed = md.parse_text(data)
    except md.MemoryFileError as exc:
        return str(exc)
    got = [(e.text, e.section) for e in parsed.entries]
    want = [(m.text.strip(), m.section) for m in group]
    if got == want:
        return None
    if [t for t, _ in got] == [t for t, _ in want] and any(m.name for m in group):
        return None  # a named memory's section is its own first heading
    return "would not read back as the same memories (its Markdown structure)"


def _first_form(group: list[Memory], origin: str, fmt: str, source: interop.SourceText | None = None,
                whole: bool = False) -> tuple[str | None, str]:
    why = ""
    for data in render_forms(group, origin, fmt, source, whole):
        problem = _reads_back(data, group)
        if problem is None:
            return data, ""
        why = problem
    return None, why


class _Pool:
    """The entries of one layer as the near-duplicate rule sees them, each with the source
    file it came from ("" for what the layer already holds). `similarity.NearDuplicates` finds
    exactly what `near_duplicate` (the rule of `remember`) finds, without comparing a text
    with every entry (SPEC §9): blocked by the length window and a bound on the characters in
    common, only the pairs left judged by the ratio."""

    def __init__(self, entries: list[Entry]):
        from .similarity import NearDuplicates

        self._near: NearDuplicates[tuple[Entry, str]] = NearDuplicates()
        for entry in entries:
            self.add(entry)

    def add(self, entry: Entry, origin: str = "") -> None:
        self._near.add((entry, origin), entry.text)

    def match(self, text: str, skip_origin: str | None = None) -> Entry | None:
        """The closest near-duplicate of `text`, leaving out entries from `skip_origin`; None
        when there is none."""
        skip = None if skip_origin is None else (lambda item: item[1] == skip_origin)
        hit = self._near.best(text, skip)
        return hit[0] if hit is not None else None


def plan_import(store: MemoryStore, fmt: str, source: Path | None, layer: str | None, user_home: Path,
                dry_run: bool = False) -> ImportReport:
    """What importing `fmt` from `source` would add (a plan; nothing is written)."""
    paths = store.paths
    where_from = Path(os.path.abspath(source if source is not None
                                      else interop.default_source(fmt, paths.workspace, user_home)))
    report = ImportReport(fmt, str(where_from), dry_run)
    in_workspace = where_from == paths.workspace or paths.workspace in where_from.parents
    if in_workspace:
        # SPEC §8: a source inside the workspace that links out of it is not read
        reason = escapes(where_from, paths.workspace)
        if reason is not None:
            report.invalid.append((str(where_from), f"{reason}; not read"))
            return report
    result = interop.read(fmt, source, paths.workspace, user_home)
    report.invalid += [(p.path, p.reason) for p in result.problems]
    report.boilerplate = list(result.boilerplate)
    pool = {str(name): _Pool(list(store.entries(name))) for name in Layer}
    taken: set[Path] = set()
    memories = result.memories
    # Only what the target layer holds, and what OTHER files of this import bring, counts as a
    # duplicate: a source file's own entries all come in, even where they resemble each other.
    others = {str(name): _Pool([]) for name in Layer}
    if in_workspace and fmt == "jsonl":
        # a file that came with the repository is no backup of the person's: no file comes
        # back whole, no row or conversation as it was; its project memories come in one by one
        memories = _from_a_repository(memories, layer, report)
    elif fmt == "jsonl" and (result.files or result.rows):
        memories = _plan_backup(store, result, layer, report, pool, others, taken)
    accepted: list[Memory] = []
    # what each layer already holds, by text: only the same text is a duplicate
    stored = {str(name): {_same_text(e.text): e for e in store.entries(name)} for name in Layer}
    brought: dict[str, dict[str, str]] = {str(name): {} for name in Layer}  # text -> the origin that brings it
    for memory in memories:
        try:
            gate.check_text(memory.text, "the memory text")
        except gate.TextRefused as exc:
            report.invalid.append((memory.origin or str(where_from), f"{_where(memory)}: {exc}"))
            continue
        target = layer or memory.layer
        if target not in {str(name) for name in Layer}:
            target = Layer.PROJECT
        memory = replace(memory, layer=target)
        if not memory.text.strip():
            continue
        # skipped only when the same text is stored already (or another file of this import
        # brings it): a near-duplicate is other text, and an import never drops text a source holds
        same = _same_text(memory.text)
        existing = stored[target].get(same)
        elsewhere = brought[target].get(same)
        if existing is not None or (elsewhere is not None and elsewhere != memory.origin):
            report.duplicates.append((memory, existing.source_ref if existing is not None else "this import"))
            continue
        brought[target].setdefault(same, memory.origin)
        accepted.append(memory)
        note = (memory.origin or str(where_from), imported_scope(fmt, memory)[1])
        if note[1] and note not in report.scope_notes:  # one per file, not per entry
            report.scope_notes.append(note)
    # group by the file they came from; conversation memories become rows
    groups: dict[tuple[str, str], list[Memory]] = {}
    for memory in accepted:
        if memory.layer == Layer.CONVERSATION:
            report.rows.append(_row(memory))
            report.added.append(memory)
            continue
        key = (memory.layer, memory.path if fmt == "jsonl" and memory.path else memory.origin or fmt)
        groups.setdefault(key, []).append(memory)
    read_per_origin: dict[str, int] = {}
    for m in result.memories:
        read_per_origin[m.origin] = read_per_origin.get(m.origin, 0) + 1
    for (target, where), group in groups.items():
        origin = group[0].origin or where
        found = result.sources.get(origin)
        data, why = _first_form(group, origin, fmt, found, whole=len(group) == read_per_origin.get(origin))
        if data is not None:
            _add_file(report, paths.root(target), fmt, target, group, data, taken,
                      preferred=where if fmt == "jsonl" else None, source=found)
            continue
        for m in group:  # one file per memory before giving up on any
            one, why = _first_form([m], m.origin or origin, fmt, found)
            if one is None:
                report.invalid.append((m.origin or origin, f"{_where(m)}: {why}"))
            else:
                _add_file(report, paths.root(target), fmt, target, [m], one, taken)
    for f in report.files:  # the write gate, dry run or not: never through a link, never out of the root
        gate.target(f.path, paths.root(f.layer), paths.container(f.layer))
    return report


def _plan_backup(store: MemoryStore, result: ReadResult, layer: str | None, report: ImportReport,
                 pool: dict[str, _Pool], others: dict[str, _Pool], taken: set[Path]) -> list[Memory]:
    """A jsonl backup: each file comes back whole at its own path when that path is free and
    none of its entries is already in its layer; a file already there byte for byte is skipped;
    otherwise its new entries are imported one by one (the other memories of the result).
    Conversation rows come back field for field unless their id or text is already there.
    Returns the memories still to plan the ordinary way."""
    from .store.edits import UndoError, safe_target

    rest: list[Memory] = [m for m in result.memories if "backup" not in m.extra]
    report.reviewed = list(result.reviewed)
    by_file: dict[tuple[str, str], list[Memory]] = {}
    for m in result.memories:
        if m.extra.get("backup") == "file":
            by_file.setdefault((m.layer, m.path), []).append(m)
    for backup in result.files:
        target = layer if layer in (Layer.USER, Layer.PROJECT) else backup.layer
        members = [replace(m, layer=target) for m in by_file.get((backup.layer, backup.path), [])]
        where = f"{report.source}: {target}/{backup.path}"
        try:
            path = safe_target(store.paths, target, backup.path)
        except UndoError as exc:
            report.invalid.append((where, str(exc).replace("undo log names", "names")))
            continue
        data = backup.text.encode("utf-8")
        try:
            gate.check_data(path, data, gate.Kind.MEMORY)
        except gate.Refused as exc:
            report.invalid.append((where, exc.reason))
            continue
        try:
            current = read_regular(path, MAX_FILE_BYTES, follow_symlinks=False)
        except OSError:
            current = None
        if current == data:
            report.duplicates += [(m, f"{backup.path} (the same file)") for m in members]
            continue
        dupes = [(m, hit.source_ref) for m in members if (hit := pool[target].match(m.text)) is not None]
        if not os.path.lexists(path) and path not in taken and not dupes:
            taken.add(path)
            report.files.append(PlannedFile(path, target, data, members, backup=(backup.layer, backup.path)))
            report.added += members
            for m in members:  # the backup's own files never count against each other
                others[target].add(Entry(id="", layer=target, text=m.text), f"backup:{target}/{backup.path}")
            continue
        rest += [replace(m, extra={}) for m in members]  # entry by entry, into imported/jsonl/
    known_rows = store.conversations.existing_ids("memories", [r["id"] for r in result.rows]) if result.rows else set()
    known_convs = (store.conversations.existing_ids("conversations", [c["id"] for c in result.conversations])
                   if result.conversations else set())
    report.conversations = [c for c in result.conversations if c["id"] not in known_convs]
    rows = {r["id"]: r for r in result.rows}
    for m in result.memories:
        if m.extra.get("backup") != "row":
            continue
        hit = pool[Layer.CONVERSATION].match(m.text)
        if m.id in known_rows or hit is not None:
            report.duplicates.append((m, hit.source_ref if hit is not None and hit.id else f"row {m.id}"))
            continue
        known_rows.add(m.id)
        others[Layer.CONVERSATION].add(Entry(id="", layer=Layer.CONVERSATION, text=m.text), "backup:rows")
        report.rows.append(dict(rows[m.id]))
        report.added.append(m)
    return rest


def _from_a_repository(memories: list[Memory], layer: str | None, report: ImportReport) -> list[Memory]:
    """A JSON Lines file inside the workspace came with the repository, not from the person:
    it may add project memories only (unless `--user`/`--project` chooses the layer), never a
    user memory or a conversation row (another workspace's included), and it cannot say who
    wrote a memory (`source` becomes `import`)."""
    kept: list[Memory] = []
    for m in memories:
        if layer is None and m.layer != Layer.PROJECT:
            report.invalid.append((m.origin, f"{_where(m)}: a {m.layer} memory from a file inside the workspace is "
                                             "not imported (a repository must not add to your user memory or to "
                                             "conversations); pass --user or --project to choose its layer"))
            continue
        kept.append(replace(m, source="", conversation_id=None, extra={k: v for k, v in m.extra.items()
                                                                       if k not in ("conversation", "backup")}))
    return kept


def _where(memory: Memory) -> str:
    """Which memory of its file, without quoting its text."""
    place = memory.path or Path(memory.origin).name or "memory"
    return f"{place}, section {memory.section!r}" if memory.section else str(place)


def _add_file(report: ImportReport, root: Path, fmt: str, layer: str, group: list[Memory], data: str,
              taken: set[Path], preferred: str | None = None, source: interop.SourceText | None = None) -> None:
    path = _free_path(root, fmt, _file_stem(group[0], fmt, source), taken, preferred)
    taken.add(path)
    encoded = data.encode("utf-8")
    try:
        gate.check_data(path, encoded, gate.Kind.MEMORY)
    except gate.Refused as exc:
        report.invalid.append((group[0].origin or str(path), exc.reason))
        return
    report.files.append(PlannedFile(path, layer, encoded, group))
    report.added += group


def _free_path(root: Path, fmt: str, stem: str, taken: set[Path], preferred: str | None) -> Path:
    """A file that does not exist yet: the memory's own relative path for a jsonl restore
    (when safe and free), else `imported/<format>/<stem>.md` with a number if needed."""
    if preferred:
        parts = Path(preferred).parts
        if (parts and preferred.endswith(".md") and not Path(preferred).is_absolute()
                and not any(p.startswith(".") or p == ".." for p in parts)):
            candidate = root.joinpath(*parts)
            if not candidate.exists() and not candidate.is_symlink() and candidate not in taken:
                return candidate
    folder = root / IMPORT_FOLDER / fmt
    n = 1
    while True:
        candidate = folder / (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
        if not candidate.exists() and not candidate.is_symlink() and candidate not in taken:
            return candidate
        n += 1


def _row(memory: Memory) -> dict[str, Any]:
    stamp = now_ms()
    updated = int(memory.updated_at * 1000) if memory.updated_at else stamp
    created = memory.extra.get("created_at") if isinstance(memory.extra.get("created_at"), int) else updated
    return {
        "id": memory.id or str(uuid.uuid4()), "type": Layer.CONVERSATION, "category": memory.category or "knowledge",
        "content": memory.text, "tags": json.dumps(list(memory.tags), ensure_ascii=False),
        "source": memory.source or "import", "conversation_id": memory.conversation_id, "file_path": None,
        "created_at": created, "updated_at": updated,
    }


def apply_import(store: MemoryStore, report: ImportReport) -> ImportReport:
    """Write a planned import as one logged, undoable change (refused whole on a conflict)."""
    if report.dry_run or not (report.files or report.rows or report.conversations):
        return report
    if report.conversations:
        store.conversations.restore_conversations(report.conversations)
    if not (report.files or report.rows):
        return report
    writes: dict[Path, tuple[str, bytes | None]] = {f.path: (f.layer, f.data) for f in report.files}
    expected: dict[Path, bytes | None] = {f.path: None for f in report.files}
    rows = [RowChange(str(r["id"]), None, r) for r in report.rows]
    if rows:
        _ensure_conversations(store.conversations, report)
    change = store.log.apply("import", f"import {len(report.added)} memories ({report.format})", writes, expected,
                             rows)
    report.change_id = change.id
    store.reload(changed=list(writes), conversation=bool(rows), reason="write")
    if report.reviewed:
        _restore_review_state(store, report)
    return report


def _restore_review_state(store: MemoryStore, report: ImportReport) -> None:
    """Mark reviewed the restored entries the backup says the person had accepted: an entry
    found again at its place (its file and which entry of that text it is, or its row) with
    the same text. An entry imported one by one, or whose text changed, stays unreviewed.
    The import is written already: a review state that cannot be saved only leaves entries
    in the inbox (and says so)."""
    from . import review
    from .store.database import DatabaseError

    wanted = set(report.reviewed)
    found: list[tuple[str, str]] = []
    for f in report.files:
        rec = store.file_record(f.path) if f.backup is not None else None
        if rec is None or f.backup is None:
            continue
        seen: dict[str, int] = {}
        for e in rec.entries:
            digest = sha256(e.text.encode("utf-8", "surrogatepass"))
            n = seen[digest] = seen.get(digest, -1) + 1
            if (*f.backup, digest, n) in wanted:
                found.append((review.review_key(e), e.id))
    row_ids = {str(r["id"]) for r in report.rows}
    for e in store.entries(Layer.CONVERSATION) if row_ids else ():
        if e.id in row_ids and (str(Layer.CONVERSATION), e.id, sha256(e.text.encode("utf-8", "surrogatepass")),
                                0) in wanted:
            found.append((review.review_key(e), e.id))
    if not found:
        return
    try:
        store.review_state.add(found)
    except (DatabaseError, OSError) as exc:
        report.invalid.append((report.source, f"review state not restored: {exc}"))
        return
    report.reviewed_restored = len(found)


def _ensure_conversations(db: Conversations, report: ImportReport) -> None:
    for memory in report.added:
        if memory.layer != Layer.CONVERSATION or not memory.conversation_id:
            continue
        found = memory.extra.get("conversation")
        conv: dict[str, Any] = found if isinstance(found, dict) else {}
        db.ensure_conversation(memory.conversation_id, str(conv.get("title") or memory.conversation_title or ""),
                               conv.get("workspace_path"))


# ---------------------------------------------------------------------------- export

REPOSITORY_FORMATS = ("agents-md", "cursor", "cline")


def default_layers(fmt: str) -> tuple[str, ...]:
    """SPEC §8: files that live in the repository get the project layer only; Claude Code's
    folder (in the user's home) gets both file layers; the jsonl backup everything."""
    if fmt == "jsonl":
        return tuple(str(layer) for layer in Layer)
    if fmt in REPOSITORY_FORMATS:
        return (str(Layer.PROJECT),)
    return tuple(str(layer) for layer in FILE_LAYERS)


@dataclass
class ExportPlan:
    format: str
    dest: Path
    layers: tuple[str, ...]
    redact: bool
    memories: int = 0
    redacted: int = 0
    sync: export_sync.SyncPlan | None = None
    text: str | None = None  # jsonl to stdout
    scope_notes: list[tuple[str, str]] = field(default_factory=list)  # (memtui file, what of its scope was not carried)
    layerless: int = 0  # user memories written to a format with no user layer (they come back as project memories)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": self.format, "destination": str(self.dest), "layers": list(self.layers),
                               "memories": self.memories, "redacted": self.redacted, "redact": self.redact}
        if self.sync is not None:
            out.update(self.sync.as_dict())
        if self.scope_notes:
            out["scope_notes"] = [{"path": p, "note": n} for p, n in self.scope_notes]
        if self.layerless:
            out["user_memories_as_project"] = self.layerless
        return out


def _file_memories(store: MemoryStore, layers: tuple[str, ...], fmt: str,
                   notes: list[tuple[str, str]] | None = None) -> list[Memory]:
    """The active entries of the file layers, each with what its memtui file knows: the raw
    body (`memtui_body`), whether every entry of the file is exported (`memtui_whole`), the
    file's own description, and what an import from `fmt` kept (its frontmatter key)."""
    out: list[Memory] = []
    for rec in sorted(store.file_records(), key=lambda r: (r.layer, r.rel)):
        if rec.layer not in layers:
            continue
        active = [e for e in rec.entries if not e.archived]
        if not active:
            continue
        parsed = rec.parsed
        own = parsed.meta.get(fmt)
        extra: dict[str, Any] = {**own} if isinstance(own, dict) else {}
        body = _body_of_the_active(parsed, rec.entries)
        extra["memtui_body"] = body if body is not None else parsed.text[parsed.body_offset:]
        extra["memtui_whole"] = body is not None
        extra["memtui_file"] = rec.rel
        carried, note = exported_scope(fmt, active[0].paths, extra)  # SPEC §16: the file's scope, in fmt's terms
        extra.update(carried)
        if note and notes is not None:
            notes.append((rec.rel, note))
        for e in active:
            memory = interop.memory_from_entry(e, origin=str(e.path or ""))
            out.append(replace(memory, extra={**memory.extra, **extra}))
    return out


def _body_of_the_active(parsed: md.ParsedFile, entries: tuple[Entry, ...]) -> str | None:
    """The file's body as it is, less the lines of its archived entries (a superseded one), taken
    out the way memtui deletes an entry (SPEC §2: every other byte stays), so the file still goes
    out whole; None when that would not read back as exactly its active entries."""
    gone = {e.line_start for e in entries if e.archived}
    if not gone:
        return parsed.text[parsed.body_offset:]
    try:
        after = md.parse_text(md.delete_entries(parsed, [r for r in parsed.entries if r.line_start in gone],
                                                datetime.now(UTC).date()))
    except md.MemoryFileError:
        return None
    if [r.text for r in after.entries] != [e.text for e in entries if not e.archived]:
        return None
    return after.text[after.body_offset:]


def _backup(store: MemoryStore, layers: tuple[str, ...], redact: bool) -> tuple[str, int, int]:
    """The jsonl backup text, how many memories it holds, and how many secrets were redacted."""
    from .interop import jsonl

    redacted = 0

    def clean(value: Any) -> Any:
        nonlocal redacted
        if not isinstance(value, str):
            return value
        text, n = outbound_text(value, redact)
        redacted += n
        return text

    def clean_path(rel: str) -> str:
        nonlocal redacted
        parts = []
        for part in rel.split("/"):
            out, n = outbound_name(part, redact)
            redacted += n
            parts.append(out)
        return "/".join(parts)

    where: dict[tuple[str, str], str] = {}
    files: list[BackupFile] = []
    for rec in sorted(store.file_records(), key=lambda r: (r.layer, r.rel)):
        if rec.layer in layers:
            where[(rec.layer, rec.rel)] = clean_path(rec.rel)
            files.append(BackupFile(rec.layer, where[(rec.layer, rec.rel)], clean(rec.data.decode("utf-8"))))
    count = sum(len(rec.entries) for rec in store.file_records() if rec.layer in layers)
    conversations: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    if Layer.CONVERSATION in layers:
        conversations, rows = store.conversations.backup_rows()
        conversations = [{k: clean(v) if k in ("title", "workspace_path") else v for k, v in c.items()}
                         for c in conversations]
        rows = [{k: clean(v) if k == "content" else v for k, v in r.items()} for r in rows]
        count += len(rows)
    return jsonl.render_backup(files, conversations, rows, _review_state(store, layers, redact, where)), count, redacted


def _review_state(store: MemoryStore, layers: tuple[str, ...], redact: bool,
                  where: dict[tuple[str, str], str]) -> list[tuple[str, str, str, int]]:
    """Where each exported entry the person accepted is (SPEC §12; `where`: a file's (layer,
    rel) -> its path in the backup), so a restore brings it back reviewed. An entry whose
    text the redaction changes is left out: it comes back changed, no longer what was accepted."""
    from . import review

    reviewed = store.review_state.accepted()
    if not reviewed:
        return []

    def accepted(e: Entry) -> bool:
        return (review.needs_review(e) and review.review_key(e) in reviewed
                and (not redact or outbound_text(e.text, True)[0] == e.text))

    out: list[tuple[str, str, str, int]] = []
    for rec in sorted(store.file_records(), key=lambda r: (r.layer, r.rel)):
        if rec.layer not in layers:
            continue
        seen: dict[str, int] = {}
        for e in rec.entries:
            digest = sha256(e.text.encode("utf-8", "surrogatepass"))
            n = seen[digest] = seen.get(digest, -1) + 1
            if accepted(e):
                out.append((rec.layer, where[(rec.layer, rec.rel)], digest, n))
    if Layer.CONVERSATION in layers:
        out += [(str(Layer.CONVERSATION), e.id, sha256(e.text.encode("utf-8", "surrogatepass")), 0)
                for e in store.entries(Layer.CONVERSATION) if accepted(e)]
    return out


def plan_export(store: MemoryStore, fmt: str, dest: Path | None, user_home: Path,
                layers: tuple[str, ...] | None = None, redact: bool | None = None,
                to_stdout: bool = False) -> ExportPlan:
    """What exporting `fmt` to `dest` (default: where that tool reads them) would write: the
    rendered files, redacted, and the sync plan against what memtui wrote there before."""
    from .interop import jsonl
    from .settings import load_settings

    if redact is None:
        redact = load_settings(store.paths).redact_secrets
    chosen = tuple(layers) if layers else default_layers(fmt)
    if dest is None and not to_stdout:
        dest = interop.default_source(fmt, store.paths.workspace, user_home)
    plan = ExportPlan(fmt, Path(os.path.abspath(dest)) if dest is not None else Path("-"), chosen, redact)
    if fmt == "jsonl":
        text, plan.memories, plan.redacted = _backup(store, chosen, redact)
        if to_stdout:
            plan.text = text
            return plan
        rendered = {jsonl.target(plan.dest): text}
    else:
        memories = [m for m in _file_memories(store, chosen, fmt, plan.scope_notes) if m.layer in chosen]
        plan.memories = len(memories)
        if fmt in REPOSITORY_FORMATS:  # files of the repository: no user layer to carry
            plan.layerless = sum(1 for m in memories if m.layer != Layer.PROJECT)
        rendered = {}
        names = 0

        def clean_name(name: str) -> str:
            nonlocal names
            out, n = outbound_name(name, redact)
            names += n
            return out

        for path, text in interop.layout(fmt, memories, plan.dest, clean_name).items():
            out, n = outbound_text(text, redact)
            plan.redacted += n
            rendered[path] = out
        plan.redacted += names
    base = plan.dest.parent if plan.dest.suffix.lower() in (".md", ".jsonl", ".ndjson", ".json") else plan.dest
    files = {path: text.encode("utf-8") for path, text in rendered.items()}
    workspace = store.paths.workspace
    inside = base == workspace or workspace in base.parents
    export_sync.check_base(base, workspace)
    single = next(iter(rendered)) if fmt in ("jsonl", "agents-md") and len(rendered) == 1 else None
    plan.sync = export_sync.plan(files, base, store.paths.home, fmt, target=single,
                                 container=workspace if inside else None, adopt=interop.adopt(fmt))
    return plan


def apply_export(plan: ExportPlan) -> ExportPlan:
    if plan.sync is not None:
        export_sync.apply(plan.sync)
    return plan
