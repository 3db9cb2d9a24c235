"""The jsonl backup over the store (SPEC §9): every memory file whole, every conversation and
conversation row, and the review state of the entries the person had accepted, written out
(`plan_export`) and restored (`plan_import`, `apply_import`). Its line format is
`interop/jsonl.py`; the import and export pipeline every format shares is `transfer.py`,
which this module hands what only a backup does:

- a backup's file comes back whole, byte for byte, at its own path when that path is free
  and none of its entries is already in its layer (else its entries come in one by one, the
  ordinary way), its conversation rows field for field unless their id or their text (the same words) is there;
- a backup found inside the workspace came with the repository, not from the person: it
  adds project memories only, one by one, never a user memory or a conversation;
- after the restore is written, the entries the person had accepted are reviewed again.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import gate, transfer
from .bounded_reader import read_regular
from .fileio import sha256
from .interop import BackupFile, Memory, ReadResult, jsonl
from .interop._files import outbound_name, outbound_text
from .model import LAYER_OF, Entry, Layer
from .paths import MAX_FILE_BYTES
from .store import MemoryStore
from .store.edits import UndoError, safe_target
from .transfer import ExportPlan, ImportReport, PlannedFile

FORMAT = "jsonl"
EVERY_LAYER = tuple(str(layer) for layer in Layer)


def plan_import(store: MemoryStore, source: Path | None, layer: str | None, user_home: Path,
                dry_run: bool = False) -> ImportReport:
    """What restoring the backup at `source` would add (a plan; nothing is written)."""
    return transfer.plan_import(store, FORMAT, source, layer, user_home, dry_run, restore=_restore)


def apply_import(store: MemoryStore, report: ImportReport) -> ImportReport:
    """Write the planned restore as one undoable change, then review again what had been accepted."""
    transfer.apply_import(store, report)
    if report.change_id is not None and report.reviewed:
        _restore_review_state(store, report)
    return report


def plan_export(store: MemoryStore, dest: Path | None, user_home: Path, layers: tuple[str, ...] | None = None,
                redact: bool | None = None, to_stdout: bool = False) -> ExportPlan:
    """The backup of `layers` (default: every layer), to `dest` as a sync, or its text alone
    in `plan.text` (`to_stdout`)."""
    plan = transfer.new_export_plan(store, FORMAT, dest, user_home, layers or EVERY_LAYER, redact, to_stdout)
    text, plan.memories, plan.redacted = backup_text(store, plan.layers, plan.redact)
    if to_stdout:
        plan.text = text
        return plan
    return transfer.sync_export(store, plan, {jsonl.target(plan.dest): text})


def _restore(store: MemoryStore, result: ReadResult, layer: str | None, report: ImportReport, taken: set[Path],
             in_workspace: bool) -> list[Memory]:
    """`transfer.Restore` for the backup: the memories still to plan the ordinary way."""
    if in_workspace:
        # a file that came with the repository is no backup of the person's: no file comes
        # back whole, no row or conversation as it was; its project memories come in one by one
        return _from_a_repository(result.memories, layer, report)
    if result.files or result.rows:
        return _restore_files_and_rows(store, result, layer, report, taken)
    return result.memories  # memtui's older entry records: one by one


def _restore_files_and_rows(store: MemoryStore, result: ReadResult, layer: str | None, report: ImportReport,
                            taken: set[Path]) -> list[Memory]:
    """A jsonl backup: each file comes back whole at its own path when that path is free and
    none of its entries is already in its layer; a file already there byte for byte is skipped;
    otherwise its new entries are imported one by one (the other memories of the result).
    Conversation rows come back field for field unless their id or text is already there.
    Returns the memories still to plan the ordinary way."""
    pool = {str(name): Pool(list(store.entries(name))) for name in Layer}
    rest: list[Memory] = [m for m in result.memories if "backup" not in m.extra]
    report.reviewed = list(result.reviewed)
    by_file: dict[tuple[str, str], list[Memory]] = {}
    for m in result.memories:
        if m.extra.get("backup") == "file":
            by_file.setdefault((m.layer, m.path), []).append(m)
    for backup in result.files:
        target = layer if layer in (Layer.USER, Layer.PROJECT) else backup.layer
        members = [replace(m, layer=LAYER_OF[target]) for m in by_file.get((backup.layer, backup.path), [])]
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
        hit = pool[Layer.CONVERSATION].same(m.text)  # a near-duplicate row is other text: restored
        if m.id in known_rows or hit is not None:
            report.duplicates.append((m, hit.source_ref if hit is not None and hit.id else f"row {m.id}"))
            continue
        known_rows.add(m.id)
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
            report.invalid.append((m.origin, f"{transfer.where_in_file(m)}: a {m.layer} memory from a file inside the workspace is "
                                             "not imported (a repository must not add to your user memory or to "
                                             "conversations); pass --user or --project to choose its layer"))
            continue
        kept.append(replace(m, source="", conversation_id=None, extra={k: v for k, v in m.extra.items()
                                                                       if k not in ("conversation", "backup")}))
    return kept


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


class Pool:
    """The entries of one layer as the near-duplicate rule sees them, each with the source
    file it came from ("" for what the layer already holds). `similarity.NearDuplicates` finds
    exactly what `near_duplicate` (the rule of `remember`) finds, without comparing a text
    with every entry (SPEC §9): blocked by the length window and a bound on the characters in
    common, only the pairs left judged by the ratio."""

    def __init__(self, entries: list[Entry]):
        from .similarity import NearDuplicates

        self._near: NearDuplicates[tuple[Entry, str]] = NearDuplicates()
        self._same: dict[str, Entry] = {}
        for entry in entries:
            self.add(entry)

    def add(self, entry: Entry, origin: str = "") -> None:
        self._near.add((entry, origin), entry.text)
        self._same.setdefault(transfer.same_text(entry.text), entry)

    def same(self, text: str) -> Entry | None:
        """An entry with the same text as `text` (the same words, whatever the spacing)."""
        return self._same.get(transfer.same_text(text))

    def match(self, text: str, skip_origin: str | None = None) -> Entry | None:
        """The closest near-duplicate of `text`, leaving out entries from `skip_origin`; None
        when there is none."""
        skip = None if skip_origin is None else (lambda item: item[1] == skip_origin)
        hit = self._near.best(text, skip)
        return hit[0] if hit is not None else None


def backup_text(store: MemoryStore, layers: tuple[str, ...], redact: bool) -> tuple[str, int, int]:
    """The jsonl backup text, how many memories it holds, and how many secrets were redacted."""
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
