"""Bringing memories in and out (SPEC §9), over the store: the plan of an import (what is
added where, what is skipped and why), written as one logged, undoable change; and exports
through the format writers of `core/interop`.

An import never overwrites and never duplicates: each memory is checked against the target
layer (and the memories planned before it) with the near-duplicate rule of `remember`, so
running the same import twice adds nothing. Each imported file says where it came from
(`source: import`, `origin: <path>`), and every file is re-parsed before it is written: a
memory that would not read back as exactly itself is skipped as invalid, with the reason.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from . import gate, interop
from . import markdown as md
from .interop import Memory
from .model import FILE_LAYERS, Entry, Layer
from .paths import escapes
from .store import MemoryStore
from .store.edits import RowChange
from .store.index import MuseDB, now_ms

IMPORT_FOLDER = "imported"


@dataclass
class PlannedFile:
    path: Path
    layer: str
    data: bytes
    memories: list[Memory]

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
    change_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format, "source": self.source, "dry_run": self.dry_run,
            "added": len(self.added), "skipped_duplicate": len(self.duplicates), "skipped_invalid": len(self.invalid),
            "files": [{"path": str(f.path), "target": str(f.real), "layer": f.layer, "memories": len(f.memories)}
                      for f in self.files],
            "conversation_rows": len(self.rows),
            "duplicates": [{"text": m.text[:200], "layer": m.layer, "existing": where} for m, where in self.duplicates],
            "invalid": [{"path": p, "reason": r} for p, r in self.invalid],
            "change": self.change_id,
        }


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def _file_stem(memory: Memory, fallback: str) -> str:
    base = memory.name or Path(memory.origin).stem or fallback
    stem = _UNSAFE_NAME.sub("-", base).strip("-.").lower()[:60]
    return stem or fallback


def _frontmatter(fields: dict[str, Any]) -> str:
    clean = {k: v for k, v in fields.items() if v not in (None, "", [], ())}
    if not clean:
        return ""
    return "---\n" + yaml.safe_dump(clean, sort_keys=False, allow_unicode=True, default_flow_style=False) + "---\n\n"


def _common_fields(group: list[Memory], origin: str, fmt: str) -> dict[str, Any]:
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
        fields["updatedAt"] = datetime.fromtimestamp(max(stamps), tz=UTC).date().isoformat()
    sources = {m.source for m in group}
    # SPEC §9: an imported file says where it came from; a JSON Lines restore keeps the
    # memory's own `source` (it is the lossless backup) and still names its origin
    fields["source"] = sources.pop() if fmt == "jsonl" and len(sources) == 1 and first.source else "import"
    fields["origin"] = origin
    own = {k: v for k, v in first.extra.items() if k not in _NOT_KEPT and _plain(v)}
    if own and len(group) == 1:
        fields[fmt] = own  # what only that format knows (Claude Code's type, Cursor's globs), for export
    return fields


_NOT_KEPT = {"file", "conversation", "created_at"}


def _plain(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return True
    if isinstance(value, list):
        return all(isinstance(v, (str, int, float, bool)) for v in value)
    return False


def _item(text: str) -> str:
    lines = text.split("\n")
    return "- " + lines[0] + "".join("\n" + ("  " + line if line else "") for line in lines[1:]) + "\n"


def render_forms(group: list[Memory], origin: str, fmt: str) -> list[str]:
    """Ways to write `group` as one memory file, most natural first: a single memory as the
    whole body (how a named memory or a file of prose reads), then as list items under
    headings for their sections."""
    head = _frontmatter(_common_fields(group, origin, fmt))
    forms = []
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


def _first_form(group: list[Memory], origin: str, fmt: str) -> tuple[str | None, str]:
    why = ""
    for data in render_forms(group, origin, fmt):
        problem = _reads_back(data, group)
        if problem is None:
            return data, ""
        why = problem
    return None, why


def plan_import(store: MemoryStore, fmt: str, source: Path | None, layer: str | None, user_home: Path,
                dry_run: bool = False) -> ImportReport:
    """What importing `fmt` from `source` would add (a plan; nothing is written)."""
    from .similarity import NearDuplicates

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
    memories = result.memories
    if in_workspace and fmt == "jsonl":
        memories = _from_a_repository(memories, layer, report)
    pool: dict[str, NearDuplicates[Entry]] = {name: NearDuplicates() for name in Layer}
    for entry in store.entries():
        pool[entry.layer].add(entry, entry.text)
    planned: dict[str, NearDuplicates[Entry]] = {name: NearDuplicates() for name in Layer}
    accepted: list[Memory] = []
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
        existing = pool[target].best(memory.text) or planned[target].best(memory.text)
        if existing is not None:
            report.duplicates.append((memory, existing.source_ref if existing.id else "this import"))
            continue
        planned[target].add(Entry(id="", layer=target, text=memory.text), memory.text)
        accepted.append(memory)
    # group by the file they came from; conversation memories become rows
    groups: dict[tuple[str, str], list[Memory]] = {}
    for memory in accepted:
        if memory.layer == Layer.CONVERSATION:
            report.rows.append(_row(memory))
            report.added.append(memory)
            continue
        key = (memory.layer, memory.path if fmt == "jsonl" and memory.path else memory.origin or fmt)
        groups.setdefault(key, []).append(memory)
    taken: set[Path] = set()
    for (target, where), group in groups.items():
        origin = group[0].origin or where
        data, why = _first_form(group, origin, fmt)
        if data is not None:
            _add_file(report, paths.root(target), fmt, target, group, data, taken,
                      preferred=where if fmt == "jsonl" else None)
            continue
        for m in group:  # one file per memory before giving up on any
            one, why = _first_form([m], m.origin or origin, fmt)
            if one is None:
                report.invalid.append((m.origin or origin, f"{_where(m)}: {why}"))
            else:
                _add_file(report, paths.root(target), fmt, target, [m], one, taken)
    for f in report.files:  # the write gate, dry run or not: never through a link, never out of the root
        gate.target(f.path, paths.root(f.layer), paths.container(f.layer))
    return report


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
                                                                       if k != "conversation"}))
    return kept


def _where(memory: Memory) -> str:
    """Which memory of its file, without quoting its text."""
    place = memory.path or Path(memory.origin).name or "memory"
    return f"{place}, section {memory.section!r}" if memory.section else str(place)


def _add_file(report: ImportReport, root: Path, fmt: str, layer: str, group: list[Memory], data: str,
              taken: set[Path], preferred: str | None = None) -> None:
    path = _free_path(root, fmt, _file_stem(group[0], fmt), taken, preferred)
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
        "id": memory.id or str(uuid.uuid4()), "type": "conversation", "category": memory.category or "knowledge",
        "content": memory.text, "tags": json.dumps(list(memory.tags), ensure_ascii=False),
        "source": memory.source or "import", "conversation_id": memory.conversation_id, "file_path": None,
        "created_at": created, "updated_at": updated,
    }


def apply_import(store: MemoryStore, report: ImportReport) -> ImportReport:
    """Write a planned import as one logged, undoable change (refused whole on a conflict)."""
    if report.dry_run or not (report.files or report.rows):
        return report
    writes: dict[Path, tuple[str, bytes | None]] = {f.path: (f.layer, f.data) for f in report.files}
    expected: dict[Path, bytes | None] = {f.path: None for f in report.files}
    rows = [RowChange(str(r["id"]), None, r) for r in report.rows]
    if rows:
        _ensure_conversations(store.db, report)
    change = store.log.apply("import", f"import {len(report.added)} memories ({report.format})", writes, expected,
                             store.db, rows, MuseDB.write_rows if rows else None)
    report.change_id = change.id
    store.reload(changed=list(writes), conversation=bool(rows), reason="write")
    return report


def _with_format_fields(store: MemoryStore, memory: Memory, entry: Entry, fmt: str) -> Memory:
    """What an earlier import from `fmt` kept of that format (its frontmatter key `fmt`)."""
    rec = store.file_record(entry.path) if entry.path else None
    if rec is None:
        return memory
    own = rec.parsed.meta.get(fmt)
    if not isinstance(own, dict):
        return memory
    return replace(memory, extra={**own, **memory.extra})


def _ensure_conversations(db: MuseDB, report: ImportReport) -> None:
    for memory in report.added:
        if memory.layer != Layer.CONVERSATION or not memory.conversation_id:
            continue
        found = memory.extra.get("conversation")
        conv: dict[str, Any] = found if isinstance(found, dict) else {}
        db.ensure_conversation(memory.conversation_id, str(conv.get("title") or memory.conversation_title or ""),
                               conv.get("workspace_path"))


def export(store: MemoryStore, fmt: str, dest: Path | None, user_home: Path,
           layer: str | None = None) -> tuple[Path, list[Path], int]:
    """Write the memories in `fmt` (every field for jsonl; the active user and project
    memories for the other formats) to `dest` (default: where that tool reads them)."""
    if dest is None:
        dest = interop.default_source(fmt, store.paths.workspace, user_home)
    dest = Path(os.path.abspath(dest))
    workspace = store.paths.workspace
    if dest == workspace or workspace in dest.parents:
        # a folder of the repository (`.cursor/rules`, `memory-bank`) must not link out of it
        try:
            gate.target(dest, workspace, root_itself=True)
        except gate.Refused as exc:
            raise interop.WriteRefused(str(exc), [dest]) from None
    entries = store.entries(layer)
    if fmt != "jsonl":
        entries = [e for e in entries if e.layer in FILE_LAYERS and not e.archived]
    memories = [_with_format_fields(store, interop.memory_from_entry(e, origin=str(e.path or "")), e, fmt)
                for e in entries]
    written = interop.write(fmt, memories, dest)
    return dest, written, len(memories)

