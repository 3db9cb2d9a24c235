"""Every user action, written once. The faces (CLI, TUI, hook, MCP server) call these and
render the result; none of them decides a domain question itself (is this a
near-duplicate? which entries does a keyword match? which key holds the switch? what does
undo restore?).

Failures are `ActionError`s whose message is meant for the person: it names the file or
the entry and says why. A face prints it; it never needs a traceback.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from . import gate, review
from .fileio import ConflictError
from .model import FILE_LAYERS, LAYERS, Entry, Layer, memory_file_label
from .paths import Paths
from .settings import Settings, SettingsError, load_settings, set_workspace_enabled
from .similarity import DUPLICATE_SCORE, near_duplicate, normalise_for_duplicates  # noqa: F401 (the faces' one rule)
from .store import Change, ChangeLog, MemoryStore, PlannedDelete
from .store.database import DatabaseError

if TYPE_CHECKING:  # its module is imported when a scope is asked for
    from .rules import ScopeReport

WRITE_RETRIES = 3  # an append that lost a race to another writer is re-read and tried again


class ActionError(Exception):
    """An action refused or failed; the message says why, for a person."""

    exit_code = 1


class MemoryOff(ActionError):
    """Memory is off for this workspace; the message says how to turn it on."""


class NotFound(ActionError):
    """No entry has that id, or nothing matched."""


class Conflict(ActionError):
    """Something changed since it was read; nothing was written."""


class Refused(ActionError):
    """The change would break the file or is not allowed; nothing was written."""


class UsageRefused(Refused):
    """What was asked cannot be done as asked (a flag that would not apply, a REF that names
    more than one entry); nothing was written. A usage error: exit 2."""

    exit_code = 2


# ---------------------------------------------------------------------- opening
def open_store(paths: Paths, layer: str | None = None) -> MemoryStore:
    """A loaded store. With no Muse home yet (a fresh machine) it reads what there is and
    creates nothing. `layer`: that layer alone is read, for a command that shows nothing
    else (the others stay empty; the Markdown index in muse.db is left as it is)."""
    if layer is not None:
        store = MemoryStore(paths, index=False)
        store.load_layers([layer])
        return store
    store = MemoryStore(paths, index=paths.home.is_dir())
    store.load()
    return store


def turn_on_hint(paths: Paths) -> str:
    return (f"Memory is off for this workspace ({paths.workspace}).\n"
            f"Turn it on with `memtui enable` (writes \"memoryEnabled\": true to {paths.workspace_settings}).")


def require_enabled(paths: Paths, settings: Settings | None = None) -> Settings:
    settings = settings or load_settings(paths)
    if not settings.enabled:
        raise MemoryOff(turn_on_hint(paths))
    return settings


# ---------------------------------------------------------------------- decisions
def matches_keyword(entry: Entry, keyword: str) -> bool:
    """Does `keyword` (case-insensitive substring) occur in the entry's text, section, tags
    or name? The one matcher of `forget`, the MCP search and the CLI."""
    needle = keyword.casefold().strip()
    if not needle:
        return False
    hay = " ".join((entry.text, entry.section, entry.name, entry.description, " ".join(entry.tags))).casefold()
    return needle in hay


def matching(store: MemoryStore, keyword: str, layer: str | None = None) -> list[Entry]:
    return [e for e in store.entries(layer) if matches_keyword(e, keyword)]


def search(store: MemoryStore, query: str, layer: str | None = None, limit: int = 20) -> list[tuple[Entry, float]]:
    """Entries relevant to `query`, best first: the injection's relevance score (shared terms,
    SPEC §5) with a substring match as a fallback, so a search finds what an injection would
    and also a keyword the terms split differently. Archived entries last.

    The scores come from the layer's index (`store.lines`, the one the store's injection
    uses, taken from the prepared index when it holds the same entries): the entries that
    share a term with the query are read from its postings, not every entry's terms made
    again per search (at LARGE: 0.46 s a search before)."""
    from .relevance import score as relevance
    from .relevance import share, terms, terms_of
    from .serve import store_layers

    q = terms(query)
    found: list[tuple[Entry, float]] = []
    for name, index in store_layers(store, load_settings(store.paths), LAYERS if layer is None else (layer,)).items():
        scored = {index.shown(pos).id: share(n, len(q)) for pos, n in index.shared(q).items()}
        for e in store.snapshot(name):
            score = relevance(q, terms_of(e)) if e.archived else scored.get(e.id, 0.0)
            if score > 0 or matches_keyword(e, query):
                found.append((e, score))
    found.sort(key=lambda pair: (pair[0].archived, -pair[1], -pair[0].updated_at))
    return found[: max(0, limit)]


def layer_counts(entries: Iterable[Entry]) -> dict[str, dict[str, int]]:
    """Per layer: `total`, `active` and `archived` — the one way every face counts."""
    counts: dict[str, dict[str, int]] = {layer: {"total": 0, "active": 0, "archived": 0} for layer in Layer}
    for e in entries:
        c = counts[e.layer]
        c["total"] += 1
        c["archived" if e.archived else "active"] += 1
    return counts


# ---------------------------------------------------------------------- changes
@dataclass
class Remembered:
    entry: Entry | None
    path: Path | None
    duplicate_of: Entry | None = None
    notes: list[str] = field(default_factory=list)


P = ParamSpec("P")
R = TypeVar("R")


def _guard(call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run a store write, turning its failures into ActionErrors a face can print."""
    from . import markdown as md

    try:
        return call(*args, **kwargs)
    except ConflictError as exc:
        raise Conflict(str(exc)) from None
    except md.MemoryFileError as exc:  # the edit would break the file (SPEC §2): refused, nothing written
        raise Refused(f"not written: {exc}") from None
    except ValueError as exc:
        raise Refused(str(exc)) from None
    except gate.Refused as exc:  # the write gate: a target through a link, or data memtui would not read
        raise Refused(str(exc)) from None
    except (sqlite3.Error, DatabaseError) as exc:  # muse.db locked by Muse, read-only or damaged
        raise ActionError(_database_message(exc)) from exc
    except PermissionError as exc:
        raise ActionError(f"cannot write {exc.filename or ''}: permission denied") from None
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise ActionError(f"cannot write: {where}{exc.strerror or exc}") from None


def _database_message(exc: Exception) -> str:
    from .store.database import busy_or_readonly

    why = busy_or_readonly(exc)
    if why == "locked":
        return "muse.db is locked by another program (Muse?); nothing was changed. Try again in a moment."
    if why == "read-only":
        return "muse.db is read-only; nothing was changed"
    return f"muse.db cannot be used ({exc}); nothing was changed"


def remember(store: MemoryStore, text: str, layer: str = Layer.USER, category: str = "",
             tags: Iterable[str] = (), check_enabled: bool = True, by_model: bool = False,
             section: str | None = None) -> Remembered:
    """Add a memory to a layer (`- TEXT` appended to notes.md / context.md, or a
    conversation row), unless a near-duplicate is already there. `by_model`: a model wrote it
    (MCP): it is marked `source: auto` (learned.md) and waits for review (SPEC §8, §12).
    `section`: under that heading of the file (made at its end when missing) rather than at
    the end of the file."""
    if check_enabled:
        require_enabled(store.paths)
    text = text.strip()
    if not text:
        raise Refused("a memory cannot be empty")
    similar = near_duplicate(store.entries(layer), text)
    if similar is not None:
        return Remembered(None, similar.path, duplicate_of=similar)
    from . import markdown as md

    tags = list(tags)
    source = "auto" if by_model else "manual"
    path = ((store.paths.model_file(layer) if by_model else store.paths.default_file(layer))
            if layer in FILE_LAYERS else None)
    rec = store.file_record(path) if path is not None else None
    if path is not None and rec is not None and (category or tags):
        # type and tags are frontmatter: they belong to the whole file, so an existing file keeps its own
        # type and tags are frontmatter: they belong to the whole file, so a flag the existing
        # file does not already satisfy is refused rather than dropped (SPEC §6)
        have = str(rec.parsed.meta.get("type", "") or "")
        have_tags = set(md.tags_of(rec.parsed.meta))
        wrong = []
        if category and category != have:
            wrong.append(f"its type is {have or '(none)'}, not {category!r}")
        missing = [t for t in tags if t not in have_tags]
        if missing:
            wrong.append(f"its tags ({', '.join(sorted(have_tags)) or 'none'}) lack {', '.join(missing)}")
        if wrong:
            raise UsageRefused(
                f"{path}: {'; '.join(wrong)}. A file's type and tags apply to every entry in it, so "
                "--category and --tag only set them when the file is created; nothing was written. "
                "Leave the flags out, or change the file's frontmatter first")
    for attempt in range(WRITE_RETRIES):
        try:
            entry = _guard(store.create_entry, layer, text, category=category, tags=list(tags), source=source,
                           section=section)
            return Remembered(entry, path)
        except Conflict:
            if attempt == WRITE_RETRIES - 1:
                raise
            store.reload(changed=[path] if path else None, conversation=path is None)
    raise AssertionError("unreachable")


def get_entry(store: MemoryStore, ref: str, layer: str | None = None) -> Entry:
    """The one entry REF names (SPEC §6): its id, or the source label every face prints
    (`notes.md:6`, relative to its layer root; any line of a multi-line entry names it too).
    A label two layers share needs `layer`."""
    entry = store.get(ref)
    if entry is not None and (layer is None or entry.layer == layer):
        return entry
    entries = store.entries(layer)
    found = [e for e in entries if e.source_ref == ref]
    if not found and ":" in ref:
        rel, _, line = ref.rpartition(":")
        if line.isdigit():
            n = int(line) - 1
            found = [e for e in entries if e.layer != Layer.CONVERSATION and e.rel_path == rel
                     and e.line_start <= n < max(e.line_end, e.line_start + 1)]
    if len(found) > 1:
        layers = ", ".join(sorted({str(e.layer) for e in found}))
        raise UsageRefused(f"{ref} names an entry in more than one layer ({layers}); say which with --layer")
    if not found:
        where = f" in the {layer} layer" if layer else ""
        raise NotFound(f"no memory has the id or source {ref!r}{where} (both are shown by `memtui list`)")
    return found[0]


def edit(store: MemoryStore, entry: Entry | str, text: str, layer: str | None = None) -> Entry | None:
    """Replace one entry's text (given the entry, its id or its source label), line-exact (SPEC §2)."""
    if isinstance(entry, str):
        entry = get_entry(store, entry, layer)
    new = _guard(store.edit_entry, entry, text)
    review.edited(store, new)  # an edit is a review (SPEC §12)
    _keep_flags(store, entry, new)
    return new


def supersede(store: MemoryStore, old: Entry | str, new: Entry | str, layer: str | None = None,
              by_layer: str | None = None) -> Change:
    """Mark `old` superseded by `new` (SPEC §17; either given as an entry, an id or a source
    label): `old` stays in its file and leaves the injection; undoable."""
    from .supersede import supersede as mark

    old = get_entry(store, old, layer) if isinstance(old, str) else old
    new = get_entry(store, new, by_layer) if isinstance(new, str) else new
    return _guard(mark, store, old, new)


def keep_both(store: MemoryStore, a: Entry, b: Entry) -> Change:
    """Remember that `a` and `b` do not contradict: the doctor never reports them again
    (undoable)."""
    from .supersede import keep_both as keep

    return _guard(keep, store, a, b)


def _keep_flags(store: MemoryStore, old: Entry, new: Entry | None) -> None:
    """memtui's own edit keeps the entry's own pin and expiry (SPEC §18) under its new id (a copy:
    undoing the edit finds them under the old one still). Never raises: the edit is written."""
    if new is None or new.id == old.id:
        return
    try:
        flags = store.entry_flags(old.id)
        if flags:
            store.log.entry_flags.put([(new.id, new.layer, flags)])
    except Exception as exc:  # noqa: BLE001 - a pin not carried over is said in the log, the edit stands
        import logging

        logging.getLogger("memtui.actions").warning("pin and expiry not carried over to the edited entry: %s", exc)


def plan_delete(store: MemoryStore, entries: Iterable[Entry]) -> PlannedDelete:
    """The delete of `entries` worked out for a confirmation (which `delete_warning` completes);
    `delete` then applies it as it is. Refused here as the delete itself would be."""
    return _guard(store.plan_delete, list(entries))


def delete(store: MemoryStore, entries: Iterable[Entry] | PlannedDelete) -> Change | None:
    """Delete entries as one undoable change (or apply the delete `plan_delete` worked out)."""
    return _guard(store.delete_entries, entries if isinstance(entries, PlannedDelete) else list(entries))


def delete_warning(plan: PlannedDelete) -> str | None:
    """What a confirmation must say besides the entries themselves (SPEC §2's one exception)."""
    if not plan.merged:
        return None
    return "; ".join(f"it is the last list item of {rel}: the rest of the file then reads as one memory"
                     for rel in plan.merged)


# ---------------------------------------------------------------------- review (SPEC §12)
def _reviewed(store: MemoryStore) -> set[str]:
    try:
        return store.review_state.accepted()
    except DatabaseError as exc:
        raise ActionError(f"cannot read the review state: {exc}") from None


def unreviewed(store: MemoryStore) -> Sequence[Entry]:
    """The entries awaiting review, newest first (a large conversation layer left in the
    prepared index: made as they are asked for, `pending_rows`)."""
    from .pending_rows import unreviewed_saved
    from .store.saved_rows import SavedEntries

    saved = store.snapshot(Layer.CONVERSATION)
    if isinstance(saved, SavedEntries):
        return unreviewed_saved([e for layer in FILE_LAYERS for e in store.snapshot(layer)], saved, _reviewed(store))
    return review.newest_first(review.unreviewed_among(store.entries(), _reviewed(store)))


def inbox(store: MemoryStore) -> Sequence[review.Pending]:
    """The entries awaiting review, newest first, each with where it came from."""
    from .pending_rows import PendingEntries, PendingItems

    found = unreviewed(store)
    if isinstance(found, PendingEntries):
        return PendingItems(found, [review.provenance(store, e) for e in found.held])
    return [review.Pending(e, None if e.layer == Layer.CONVERSATION else review.provenance(store, e))
            for e in found]


def accept(store: MemoryStore, entries: Iterable[Entry]) -> list[Entry]:
    """Mark entries reviewed as they are now, as one change in the undo log (undo puts them
    back in the inbox); returns the ones that were awaiting review."""
    reviewed = _reviewed(store)
    todo = [e for e in entries if review.needs_review(e) and review.review_key(e) not in reviewed]
    if todo:
        try:
            store.accept_entries(todo, [review.review_key(e) for e in todo])
        except (DatabaseError, sqlite3.Error, OSError, ConflictError) as exc:
            raise ActionError(f"review state not saved: {exc}") from None
    return todo


def accept_all(store: MemoryStore) -> list[Entry]:
    return accept(store, unreviewed(store))


def reject(store: MemoryStore, entries: Iterable[Entry]) -> Change | None:
    """Delete entries awaiting review: the same undoable change as `delete` (undo restores
    the exact bytes and rows, and the entries come back unreviewed)."""
    entries = list(entries)
    reviewed = _reviewed(store)
    for e in entries:
        if not review.needs_review(e) or review.review_key(e) in reviewed:
            raise Refused(f"{e.source_ref} is not awaiting review; `memtui delete` deletes it")
    return delete(store, entries)


def review_ref(store: MemoryStore, ref: str, layer: str | None = None) -> Entry:
    """The entry REF names for `memtui review accept|reject` (SPEC §6): its id, or the source
    label every face prints (`notes.md:6`, relative to its layer root;
    `conversation:<cid>/<id>`), with `layer` to choose between layers that have the same label."""
    entry = store.get(ref)
    if entry is not None and (layer is None or entry.layer == layer):
        return entry
    found = [e for e in store.entries(layer) if e.source_ref == ref]
    if not found:
        raise NotFound(f"no memory has the id or label {ref!r} (see `memtui review` or `memtui list`)")
    if len({e.layer for e in found}) > 1:
        layers = ", ".join(sorted({str(e.layer) for e in found}))
        raise Refused(f"{ref!r} names a memory in more than one layer ({layers}); choose one with --layer")
    return found[0]


def undo_preview(store: MemoryStore, name: str | None = None) -> Change | None:
    """The change `undo` would reverse now (or the one `name` names), so a face can name it
    before doing it. NotFound when `name` names no change or several."""
    if name is None:
        return store.log.newest()
    log = store.log.history()
    found = [c for c in log if c.id == name] or ([c for c in log if c.id.startswith(name)] if name else [])
    if len(found) != 1:
        raise NotFound(f"no change {name!r} in the log (see `memtui undo --list`)" if not found
                       else f"{name!r} names {len(found)} changes; give more of the id (`memtui undo --list`)")
    return found[0]


def settle_interrupted_undos(store: MemoryStore) -> list[tuple[Change, bool]]:
    """Settle what a killed undo left (SPEC §8: finished, or rolled back when a file changed
    meanwhile) and return those changes, each with True when its undo was finished, so a face
    says so, and a plain `undo` that only meant to finish it undoes nothing more."""
    store.log.history()
    return store.log.take_interrupted()


def undo(store: MemoryStore, expected_id: str | None = None, name: str | None = None) -> Change:
    """Reverse the newest change not yet undone (SPEC §8), passing over changes marked
    conflicting, or the change `name` (its id from `undo --list`, or a unique start of it)."""
    try:
        return store.undo(expected_id, name)
    except LookupError as exc:
        raise NotFound(str(exc.args[0]) if exc.args else "nothing to undo") from None
    except ConflictError as exc:
        raise Conflict(str(exc)) from None
    except (sqlite3.Error, DatabaseError) as exc:  # a row to restore, with muse.db locked by Muse
        why = _database_message(exc).split(";")[0]
        raise ActionError(f"{why}; the undo did not finish. Try again in a moment: an interrupted undo is "
                          "completed or rolled back on the next run, never left half done.") from exc
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""  # which file (one a FIFO took the place of…)
        raise ActionError(f"cannot undo: {where}{exc.strerror or exc}") from None


def undo_log(source: MemoryStore | Paths) -> list[Change]:
    """memtui's changes as this workspace sees them, newest first; from `Paths`, the log alone
    (`memtui undo --list` reads no memory: at LARGE loading them was 0.8 s)."""
    log = source.log if isinstance(source, MemoryStore) else ChangeLog(source)
    return log.history()


def set_enabled(paths: Paths, value: bool) -> Path:
    """Set `memoryEnabled` in the workspace settings (the one key that holds the switch)."""
    try:
        return set_workspace_enabled(paths, value)
    except (SettingsError, ConflictError) as exc:
        raise ActionError(str(exc)) from None
    except OSError as exc:
        where = exc.filename or paths.workspace_settings
        raise ActionError(f"cannot write {where}: {exc.strerror or exc}") from None


def save_settings(paths: Paths, current: Settings, workspace_enabled: bool, global_enabled: bool,
                  memory: dict[tuple[str, ...], object] | None = None, theme: str | None = None) -> list[Path]:
    """Save what the settings screen chose: the workspace switch in the workspace file, the
    global default, budgets/gates/limits (keys under "memory") and the theme (under
    "memtui") in the global file. Only what changed is written; returns the files written."""
    from .settings import set_global

    written: list[Path] = []
    try:
        ws_current = current.workspace_enabled if current.workspace_enabled is not None else current.enabled
        if workspace_enabled != ws_current or (current.workspace_enabled is None and workspace_enabled != current.enabled):
            written.append(set_workspace_enabled(paths, workspace_enabled))
        changes: dict[tuple[str, ...], object] = {("memory", *k) if k[0] != "memory" else k: v
                                                  for k, v in (memory or {}).items()}
        if global_enabled != bool(current.global_enabled):
            changes[("memoryEnabled",)] = global_enabled
        if theme is not None and theme != current.theme:
            changes[("memtui", "theme")] = theme
        if changes:
            written.append(set_global(paths, changes))
    except (SettingsError, ConflictError) as exc:
        raise ActionError(str(exc)) from None
    except OSError as exc:
        raise ActionError(f"cannot write {exc.filename or 'settings'}: {exc.strerror or exc}") from None
    return written


def save_theme(paths: Paths, theme: str) -> None:
    """Remember the chosen theme in the global settings (`"memtui": {"theme": ...}`)."""
    from .settings import set_global

    try:
        set_global(paths, {("memtui", "theme"): theme})
    except (SettingsError, ConflictError) as exc:
        raise ActionError(str(exc)) from None
    except OSError as exc:
        raise ActionError(f"cannot write {exc.filename or 'settings'}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------------- import / export (SPEC §9)
def import_memories(store: MemoryStore, fmt: str, source: Path | None = None, layer: str | None = None,
                    dry_run: bool = False, user_home: Path | None = None) -> Any:
    """Import another tool's memories: near-duplicates and invalid files skipped and counted,
    the rest written as one undoable change (nothing with `dry_run`). Returns the report."""
    from . import backup, interop, transfer

    restore = fmt == backup.FORMAT  # the backup restores memtui's own files (core/backup.py)
    try:
        if restore:
            report = backup.plan_import(store, source, layer, user_home or Path.home(), dry_run)
        else:
            report = transfer.plan_import(store, fmt, source, layer, user_home or Path.home(), dry_run)
    except interop.InteropError as exc:
        raise Refused(str(exc)) from None
    except gate.Refused as exc:  # a planned file would be written through a link or out of its root
        raise Refused(f"import refused: {exc}") from None
    return _guard(backup.apply_import if restore else transfer.apply_import, store, report)


def export_memories(store: MemoryStore, fmt: str, dest: Path | None = None, layers: tuple[str, ...] | None = None,
                    user_home: Path | None = None, dry_run: bool = False, redact: bool | None = None,
                    to_stdout: bool = False) -> Any:
    """Export in another tool's format as a sync (SPEC §9): files memtui wrote there before and
    nobody changed are replaced, changed ones are conflicts, others are never touched; every
    text and name through the outbound redaction. Returns the plan (carried out unless
    `dry_run`; with `to_stdout`, the jsonl backup text in `plan.text`)."""
    from . import backup, interop, transfer

    try:
        if fmt == backup.FORMAT:  # the backup writes memtui's own files whole (core/backup.py)
            plan = backup.plan_export(store, dest, user_home or Path.home(), layers, redact, to_stdout)
        else:
            plan = transfer.plan_export(store, fmt, dest, user_home or Path.home(), layers, redact)
        return plan if dry_run or to_stdout else transfer.apply_export(plan)
    except interop.InteropError as exc:
        raise Refused(str(exc)) from None
    except gate.Refused as exc:  # the write gate: the export record's folder leads through a link
        raise Refused(f"export refused: {exc}") from None
    except (ConflictError, DatabaseError) as exc:
        raise ActionError(str(exc)) from None
    except OSError as exc:
        raise ActionError(f"cannot write {exc.filename or dest}: {exc.strerror or exc}") from None




def on_disk_now(store: MemoryStore, entry: Entry) -> Entry | None:
    """The version of `entry` in the store now: the same id, or else what stands at its place
    (same file, same first line) — what an edit that met a conflict would overwrite."""
    same = store.get(entry.id)
    if same is not None or entry.path is None:  # a conversation row has no place but its id
        return same
    return store.entry_at(entry.path, entry.line_start)


ENTRY_ORDERS = ("file", "most", "last")  # file order, most injected first, last injected first
ORDER_TITLES = {"file": "file order", "most": "most injected", "last": "last injected"}


def sort_entries(entries: list[Entry], stats: dict[str, tuple[int, int]], order: str) -> list[Entry]:
    """`entries` in `order` (one of ENTRY_ORDERS) by their injection history `stats`
    (id -> (count, last_ms)): ties and never-injected entries keep their given order."""
    if order == "file":
        return list(entries)
    if order not in ENTRY_ORDERS:
        raise ValueError(f"unknown order {order!r}; one of {', '.join(ENTRY_ORDERS)}")
    slot = 0 if order == "most" else 1
    return sorted(entries, key=lambda e: -stats.get(e.id, (0, 0))[slot])


def muse_scopes(store: MemoryStore) -> list[tuple[str, tuple[str, ...]]]:
    """Muse's memory files as `rules.discover` takes them: (label, `paths:` globs); a project
    file is labelled by its workspace-relative path, a user file by `~/.muse/memory/<path>` (`model.memory_file_label`)."""
    seen: dict[str, tuple[str, ...]] = {}
    for e in store.entries():
        if e.layer == Layer.CONVERSATION or not e.rel_path:
            continue
        label = memory_file_label(e)
        seen.setdefault(label, e.paths)
    return sorted(seen.items())


def scope_report(store: MemoryStore, path: str) -> ScopeReport:
    """SPEC §16, `memtui scope PATH`: for the workspace-relative `path`, which memory and rule
    files each assistant would load and why, and the rules that can never fire."""
    from . import rules
    from .workspace_files import list_files

    workspace = store.paths.workspace
    return rules.report(workspace, path, list_files(workspace), muse_scopes(store))
