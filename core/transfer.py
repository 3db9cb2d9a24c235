"""Bringing memories in and out (SPEC §9), over the store: the plan of an import (what is
added where, what is skipped and why), written as one logged, undoable change; and exports
through the format writers of `core/interop`.

An import never overwrites, never duplicates and never drops text a source holds: a memory is
skipped only when the same text (its words, whatever the spacing) is already in the target
layer or another file of the same import brings it, so running the same import twice adds
nothing. Each imported file says where it came from (`source: import`, `origin: <path>`) and
keeps the source's body as it was (less the entries skipped, taken out the way memtui deletes
an entry), with the source's own frontmatter under the format's key (so an export gives the
file back byte for byte); every file is re-parsed before it is written: a memory that would
not read back as exactly itself is skipped as invalid, with the reason. The jsonl backup
(`core/backup.py`) adds what only a restore does through `plan_import`'s `restore`.

Exports go through `interop.sync` (re-runnable; only files memtui wrote are replaced) and
every exported text and file name through `interop._files.outbound_text`/`outbound_name`.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from . import gate, interop
from . import markdown as md
from .interop import Memory, ReadResult
from .interop import sync as export_sync
from .interop._files import outbound_name, outbound_text
from .interop.scoping import exported_scope, imported_scope
from .model import FILE_LAYERS, LAYER_OF, Entry, Importance, Layer
from .paths import escapes
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
    if first.importance in (Importance.HIGH, Importance.LOW) and all(m.importance == first.importance for m in group):
        fields["importance"] = str(first.importance)  # plain: YAML writes no enum
    status = first.raw_status or first.status  # as the source wrote it (a backup's `superseded`)
    if status in ("archived", "superseded") and all((m.raw_status or m.status) == status for m in group):
        fields["status"] = str(status)
    stamps = [m.updated_at for m in group if m.updated_at]
    if stamps:
        fields["updatedAt"] = datetime.fromtimestamp(max(stamps), tz=UTC).date()
    sources = {m.source for m in group}
    # SPEC §9: an imported file says where it came from; a memory that says who wrote it (only
    # the lossless backup's do) keeps its own `source` and still names its origin
    fields["source"] = sources.pop() if len(sources) == 1 and first.source else "import"
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


def same_text(text: str) -> str:
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


# what a format that restores memtui's own files does first with what was read (the jsonl
# backup, core/backup.py): (store, result, --user/--project, the report, paths taken, the source is
# inside the workspace) -> the memories still to plan the ordinary way
Restore = Callable[[MemoryStore, ReadResult, str | None, ImportReport, set[Path], bool], list[Memory]]


def plan_import(store: MemoryStore, fmt: str, source: Path | None, layer: str | None, user_home: Path,
                dry_run: bool = False, restore: Restore | None = None) -> ImportReport:
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
    taken: set[Path] = set()
    memories = result.memories if restore is None else restore(store, result, layer, report, taken, in_workspace)
    accepted: list[Memory] = []
    # Only what the target layer holds, and what OTHER files of this import bring, counts as a
    # duplicate, and only the same text: a source file's own entries all come in.
    stored = {str(name): {same_text(e.text): e for e in store.entries(name)} for name in Layer}
    brought: dict[str, dict[str, str]] = {str(name): {} for name in Layer}  # text -> the origin that brings it
    for memory in memories:
        try:
            gate.check_text(memory.text, "the memory text")
        except gate.TextRefused as exc:
            report.invalid.append((memory.origin or str(where_from), f"{where_in_file(memory)}: {exc}"))
            continue
        target = layer or memory.layer
        if target not in {str(name) for name in Layer}:
            target = Layer.PROJECT
        memory = replace(memory, layer=LAYER_OF[target])
        if not memory.text.strip():
            continue
        # skipped only when the same text is stored already (or another file of this import
        # brings it): a near-duplicate is other text, and an import never drops text a source holds
        same = same_text(memory.text)
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
        key = (memory.layer, memory.path or memory.origin or fmt)  # a backup's memory names its memtui file
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
                      preferred=group[0].path or None, source=found)
            continue
        for m in group:  # one file per memory before giving up on any
            one, why = _first_form([m], m.origin or origin, fmt, found)
            if one is None:
                report.invalid.append((m.origin or origin, f"{where_in_file(m)}: {why}"))
            else:
                _add_file(report, paths.root(target), fmt, target, [m], one, taken)
    for f in report.files:  # the write gate, dry run or not: never through a link, never out of the root
        gate.target(f.path, paths.root(f.layer), paths.container(f.layer))
    return report


def where_in_file(memory: Memory) -> str:
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
    return report


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
    folder (in the user's home) gets both file layers (the jsonl backup everything: core/backup.py)."""
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


def plan_export(store: MemoryStore, fmt: str, dest: Path | None, user_home: Path,
                layers: tuple[str, ...] | None = None, redact: bool | None = None) -> ExportPlan:
    """What exporting `fmt` to `dest` (default: where that tool reads them) would write: the
    rendered files, redacted, and the sync plan against what memtui wrote there before."""
    plan = new_export_plan(store, fmt, dest, user_home, layers or default_layers(fmt), redact)
    memories = [m for m in _file_memories(store, plan.layers, fmt, plan.scope_notes) if m.layer in plan.layers]
    plan.memories = len(memories)
    if fmt in REPOSITORY_FORMATS:  # files of the repository: no user layer to carry
        plan.layerless = sum(1 for m in memories if m.layer != Layer.PROJECT)
    names = 0

    def clean_name(name: str) -> str:
        nonlocal names
        out, n = outbound_name(name, plan.redact)
        names += n
        return out

    rendered: dict[Path, str] = {}
    for path, text in interop.layout(fmt, memories, plan.dest, clean_name).items():
        rendered[path], n = outbound_text(text, plan.redact)
        plan.redacted += n
    plan.redacted += names
    return sync_export(store, plan, rendered)


def new_export_plan(store: MemoryStore, fmt: str, dest: Path | None, user_home: Path, layers: tuple[str, ...],
                    redact: bool | None, to_stdout: bool = False) -> ExportPlan:
    """An export's plan before anything is rendered: the destination (default: where that tool
    reads them; `-` for standard output), the layers, and whether secrets are redacted (default:
    the settings)."""
    from .settings import load_settings

    if redact is None:
        redact = load_settings(store.paths).redact_secrets
    if dest is None and not to_stdout:
        dest = interop.default_source(fmt, store.paths.workspace, user_home)
    return ExportPlan(fmt, Path(os.path.abspath(dest)) if dest is not None else Path("-"), tuple(layers), redact)


def sync_export(store: MemoryStore, plan: ExportPlan, rendered: dict[Path, str]) -> ExportPlan:
    """The sync plan of writing `rendered` (path -> text) at the plan's destination."""
    base = plan.dest.parent if plan.dest.suffix.lower() in (".md", ".jsonl", ".ndjson", ".json") else plan.dest
    files = {path: text.encode("utf-8") for path, text in rendered.items()}
    workspace = store.paths.workspace
    inside = base == workspace or workspace in base.parents
    export_sync.check_base(base, workspace)
    single = next(iter(rendered)) if interop.one_file(plan.format) and len(rendered) == 1 else None
    plan.sync = export_sync.plan(files, base, store.paths.home, plan.format, target=single,
                                 container=workspace if inside else None, adopt=interop.adopt(plan.format))
    return plan


def apply_export(plan: ExportPlan) -> ExportPlan:
    if plan.sync is not None:
        export_sync.apply(plan.sync)
    return plan
