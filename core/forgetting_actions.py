"""The actions of SPEC §18 for every face: pin and unpin, an entry's own expiry, each entry's
strength and level, the forecast, and the private mode. The rules are `core.forgetting`'s."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import forgetting as fg
from .actions import ActionError, Refused
from .model import Entry
from .paths import Paths
from .settings import Settings, SettingsError, load_settings, set_global
from .store import MemoryStore
from .store.database import DatabaseError
from .store.edits import Change, ConflictError

RECENT_MESSAGES = 50  # the forecast looks at this many of the newest recorded injections


def _flags_of(store: MemoryStore) -> dict[str, fg.Flags]:
    try:
        return fg.read_flags(store.paths.db_path)
    except sqlite3.Error as exc:
        raise ActionError(f"{store.paths.db_path}: pins and expiries cannot be read: {exc}") from None


def _write(store: MemoryStore, action: str, entries: list[Entry], flags: list[fg.Flags]) -> Change:
    try:
        return store.set_flags(action, entries, [None if f.empty else f.as_dict() for f in flags])
    except (sqlite3.Error, DatabaseError, OSError, ConflictError) as exc:
        raise ActionError(f"{action} not saved: {exc}") from None


# ---------------------------------------------------------------------- pins
@dataclass
class Pinned:
    """What `pin` / `unpin` did: the change (None when nothing changed) and a note per entry
    that needed none."""

    change: Change | None
    changed: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def pin(store: MemoryStore, entries: Iterable[Entry], on: bool = True) -> Pinned:
    """Pin (or unpin) entries: their own pin in memtui's table, one undoable change. A pin
    its file's frontmatter sets (`pinned: true`, `alwaysApply: true`) belongs to the file: unpin
    refuses it and says where it is."""
    flags = _flags_of(store)
    todo: list[Entry] = []
    after: list[fg.Flags] = []
    out = Pinned(None)
    for e in entries:
        own = flags.get(e.id, fg.Flags())
        if not on and e.pinned:
            raise Refused(f"{e.source_ref} is pinned by its file's frontmatter (`pinned: true` or `alwaysApply: true` "
                          f"in {e.rel_path or 'its file'}); remove that line to unpin it")
        if own.pinned == on:
            out.notes.append(f"{e.source_ref} is {'already' if on else 'not'} pinned")
            continue
        if on and e.pinned:
            out.notes.append(f"{e.source_ref} is pinned by its file's frontmatter already")
            continue
        todo.append(e)
        after.append(fg.Flags(on, own.expires))
    if todo:
        out.change = _write(store, "pin" if on else "unpin", todo, after)
        out.changed = todo
    return out


# ---------------------------------------------------------------------- expiry
def set_expiry(store: MemoryStore, entries: Iterable[Entry], at: float | None) -> Change | None:
    """Give entries their own expiry (None: remove it), one undoable change."""
    flags = _flags_of(store)
    todo = [e for e in entries if flags.get(e.id, fg.Flags()).expires != at]
    if not todo:
        return None
    after = [fg.Flags(flags.get(e.id, fg.Flags()).pinned, at) for e in todo]
    return _write(store, "expire" if at is not None else "unexpire", todo, after)


# ---------------------------------------------------------------------- strength and level
def last_injected(db_path: Path, workspace: Path | str | None) -> dict[str, float]:
    """entry id -> time of its last recorded injection in this workspace (seconds); {} when
    there is no history."""
    from .history import stats

    if not db_path.exists():
        return {}
    return {entry_id: value[1] / 1000.0 for entry_id, value in stats(db_path, workspace).items()}


def entry_vitals(store: MemoryStore, settings: Settings, now: float | None = None,
                 entries: Iterable[Entry] | None = None) -> dict[str, fg.Vital]:
    """Every entry's pin, expiry, strength and level at `now` (SPEC §18). Strength and level
    only with `memory.decay.halfLifeDays`; an unreadable history counts as no injection."""
    moment = time.time() if now is None else now
    flags = _flags_of(store)
    injected: dict[str, float] = {}
    if settings.half_life_days is not None:
        try:
            injected = last_injected(store.paths.db_path, store.paths.workspace)
        except Exception:  # noqa: BLE001 - the history is an input, not a requirement
            injected = {}
    return fg.vitals(store.entries() if entries is None else entries, moment, settings.half_life_days, flags, injected)


# ---------------------------------------------------------------------- the forecast
def forecast(store: MemoryStore, settings: Settings, days: float, now: float | None = None) -> dict[str, Any]:
    """What changes within `days` if nothing is used meanwhile: each entry whose level changes
    (strength falls below a level's floor) or that expires, and the recent recorded injections
    that included such an entry. The history keeps which entries each injection held, never
    the message: an entry that expires will be left out of that message's injection; one whose
    level falls ranks lower (its decayed score orders it), so it may be left out when its
    layer's budget is full."""
    moment = time.time() if now is None else now
    until = moment + days * fg.DAY
    entries = store.entries()
    vit = entry_vitals(store, settings, moment, entries)
    half = settings.half_life_days
    changing: list[dict[str, Any]] = []
    then: dict[str, str] = {}  # id -> what it will be by then ("expired" or its level)
    for e in entries:
        if e.archived:
            continue
        v = vit[e.id]
        if v.expired:
            continue
        item: dict[str, Any] = {"id": e.id, "layer": e.layer, "source": e.source_ref,
                                "text": " ".join(e.text.split())[:120]}
        changes: list[dict[str, str]] = []
        if half is not None and not v.pinned:
            changes += [{"at": fg.iso(at), "level": level} for at, level in fg.level_changes(v.last_used, moment, until, half)]
        if v.expires is not None and v.expires <= until:  # nothing after it matters: it is left out
            changes = [c for c in changes if c["at"] < fg.iso(v.expires)]
            changes.append({"at": fg.iso(v.expires), "level": "expired"})
        if not changes:
            continue
        changes.sort(key=lambda c: c["at"])
        expiring = v.expires is not None and v.expires <= until
        item.update(strength=None if v.strength is None else round(v.strength, 4), level=v.level,
                    then="expired" if expiring else changes[-1]["level"], changes=changes)
        then[e.id] = item["then"]
        changing.append(item)
    changing.sort(key=lambda i: (i["changes"][0]["at"], i["source"]))
    return {"now": fg.iso(moment), "until": fg.iso(until), "days": days,
            "decay": None if half is None else {"halfLifeDays": half},
            "entries": changing, "messages": _messages(store, then, vit),
            "note": ("the history keeps which memories each injection held, not the message: an expired memory "
                     "is left out of it; one whose level falls ranks lower and may be left out when its layer's "
                     "budget is full")}


def _messages(store: MemoryStore, then: dict[str, str], vit: dict[str, fg.Vital]) -> list[dict[str, Any]]:
    from .history import HistoryError, records

    if not then:
        return []
    try:
        recent = records(store.paths.db_path, limit=RECENT_MESSAGES, workspace=store.paths.workspace)
    except HistoryError:
        return []
    out = []
    for r in recent:
        hit = [{"id": i, "source": s, "level": vit[i].level if i in vit else None, "then": then[i]}
               for i, s in r.entries if i in then]
        if hit:
            out.append({"record": r.id, "time": fg.iso(r.time_ms / 1000), "count": r.count, "target": r.target,
                        "changes": hit, "left_out": sum(1 for h in hit if h["then"] == "expired")})
    return out


# ---------------------------------------------------------------------- private mode
def private_state(settings: Settings) -> dict[str, Any]:
    """{"private": bool, "until": ISO or None}: what `status` and the TUI header show."""
    on = settings.private
    return {"private": on, "until": fg.iso(settings.private_until) if on and settings.private_until else None}


def set_private(paths: Paths, until: float | None) -> Path:
    """Write `memory.privateUntil` (an ISO time; None removes it) in the global settings,
    keeping every other key (through the write gate). ActionError names the file and why."""
    try:
        return set_global(paths, {("memory", "privateUntil"): ... if until is None else fg.iso(until)})
    except (SettingsError, ConflictError) as exc:
        raise ActionError(str(exc)) from None


def private_on(paths: Paths, seconds: float | None = None, now: float | None = None) -> float:
    """Private mode until `now + seconds` (default one hour); the moment it ends."""
    moment = time.time() if now is None else now
    until = moment + (fg.PRIVATE_DEFAULT.total_seconds() if seconds is None else seconds)
    set_private(paths, until)
    return until


def private_off(paths: Paths) -> bool:
    """End private mode; False when it was not on (nothing written then)."""
    settings = load_settings(paths)
    if settings.private_until is None:
        return False
    set_private(paths, None)
    return True


def vital_of(paths: Paths, settings: Settings, entry: Entry, last_injected_ms: int | None = None,
             now: float | None = None) -> fg.Vital:
    """One entry's vitals (the TUI's detail): its own flags read now, its last injection as
    the caller knows it (`history.stats`)."""
    flags, _ = fg.safe_flags(paths.db_path)
    injected = {entry.id: last_injected_ms / 1000.0} if last_injected_ms else {}
    return fg.vitals([entry], time.time() if now is None else now, settings.half_life_days, flags, injected)[entry.id]


def describe_vital(v: fg.Vital) -> str:
    """`strength 0.55 · decaying · pinned · expires 2026-12-01 00:00 UTC`, or '' when it says nothing."""
    parts = []
    if v.strength is not None:
        parts += [f"strength {v.strength:.2f}", (v.level or "").replace("_", " ")]
    if v.pinned:
        parts.append("pinned")
    if v.expires is not None:
        parts.append(f"{'expired' if v.expired else 'expires'} {fg.iso(v.expires)[:16].replace('T', ' ')} UTC")
    return " · ".join(parts)
