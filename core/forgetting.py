"""Forgetting you can see (SPEC §18): strength and level, expiry, pins, the forecast, and
the private mode.

- **Strength** is §13's decay factor `0.5 ** (age / halfLifeDays)`, `age` in days since the
  entry was last injected (§11 history) or updated, whichever is later; a pinned entry does
  not decay (strength 1). Its **level**: `active` ≥ 0.7, `decaying` ≥ 0.3, `to_compress` ≥
  0.1, `to_evict` below. Without `memory.decay.halfLifeDays` there is no strength and no level.
- **Expiry**: `expires:` in a file's frontmatter (every entry of the file), or an entry's own
  expiry in memtui's table `memtui_entry_flags` (`remember --expires`, a conversation row).
  From that moment on the entry is left out of the injection with status `expired`. A date
  (`2026-12-01`) means the end of that day (UTC): the entry is still injected that day.
- **Pins**: `pinned: true` in a file's frontmatter, or an entry's own pin in the same table
  (`memtui pin REF`), keyed by layer and entry id like the review state, so editing other
  entries of the file keeps it.
- **Private mode**: `memory.privateUntil` (ISO time, global settings); until then nothing is
  injected (`disabled_reason` "private") and nothing is recorded in the history.

What is here reads (the flags with the standard library alone: the hook's path); the writes
go through the store (`MemoryStore.set_flags`, an undoable change) and `core.settings`.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from .model import Entry

DAY = 86400.0
TABLE = "memtui_entry_flags"

ACTIVE, DECAYING, TO_COMPRESS, TO_EVICT = "active", "decaying", "to_compress", "to_evict"
# (level, the strength it starts at), strongest first
LEVELS: tuple[tuple[str, float], ...] = ((ACTIVE, 0.7), (DECAYING, 0.3), (TO_COMPRESS, 0.1), (TO_EVICT, 0.0))
PRIVATE_DEFAULT = timedelta(hours=1)  # `memtui private on` without --for


# ---------------------------------------------------------------------- strength and level
def level_of(strength: float) -> str:
    for name, floor in LEVELS:
        if strength >= floor:
            return name
    return TO_EVICT


def strength(last_used: float, now: float, half_life_days: float, pinned: bool = False) -> float:
    """`0.5 ** (age / N)`, age in days since `last_used` (never negative); 1 when pinned."""
    if pinned:
        return 1.0
    age = max(0.0, now - last_used) / DAY
    return 0.5 ** (age / half_life_days)


def level_changes(last_used: float, now: float, until: float, half_life_days: float) -> list[tuple[float, str]]:
    """(moment, new level) of each level an unused, unpinned entry falls to after `now` and by
    `until`: its strength passes below a level's floor `f` at age `N * log2(1 / f)` days."""
    out = []
    for (_, floor), (lower, _) in zip(LEVELS, LEVELS[1:]):
        at = last_used + half_life_days * math.log2(1 / floor) * DAY
        if now < at <= until:
            out.append((at, lower))
    return out


# ---------------------------------------------------------------------- dates and durations
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(m|min|h|d|w)\s*$", re.IGNORECASE)
_UNIT = {"m": 60.0, "min": 60.0, "h": 3600.0, "d": DAY, "w": 7 * DAY}


def parse_duration(value: str) -> float | None:
    """`30m`, `1h`, `7d`, `2w` as seconds; None when it is not one."""
    match = _DURATION.match(value)
    if not match:
        return None
    seconds = float(match.group(1)) * _UNIT[match.group(2).lower()]
    return seconds if seconds > 0 else None


def end_of_day(day: date) -> float:
    """The moment a date has passed: 00:00 UTC of the next day."""
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() + DAY


def expiry_value(value: Any) -> float | None:
    """A frontmatter `expires` (a YAML date or datetime, or an ISO string) as the moment the
    entry is expired from (seconds since the epoch), None when it gives none. A date means
    the end of that day, a time without a zone is UTC."""
    if isinstance(value, str):
        text = value.strip()
        try:
            value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
        except ValueError:
            return None
    if isinstance(value, datetime):
        return (value if value.tzinfo is not None else value.replace(tzinfo=UTC)).timestamp()
    if isinstance(value, date):
        return end_of_day(value)
    return None


def parse_expiry(value: str, now: float) -> float:
    """`--expires 7d|DATE|ISO time`: the moment an entry expires from. ValueError says why."""
    seconds = parse_duration(value)
    if seconds is not None:
        return now + seconds
    moment = expiry_value(value)
    if moment is None:
        raise ValueError(f"{value!r} is neither a duration (30m, 12h, 7d, 2w) nor a date (2026-12-01) or ISO time")
    return moment


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=0).isoformat()


# ---------------------------------------------------------------------- flags (memtui's table)
@dataclass(frozen=True)
class Flags:
    """An entry's own pin and expiry, as memtui's table holds them."""

    pinned: bool = False
    expires: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"pinned": self.pinned, "expires": self.expires}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Flags:
        if not data:
            return cls()
        expires = data.get("expires")
        return cls(bool(data.get("pinned")), None if expires is None else float(expires))

    @property
    def empty(self) -> bool:
        return not self.pinned and self.expires is None


def read_flags(db_path: Path) -> dict[str, Flags]:
    """entry id -> its own flags; {} when there is no database or no table. Creates nothing."""
    if not db_path.is_file():
        return {}
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=0.5)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone():
            return {}
        return {str(entry_id): Flags(bool(pinned), expires)
                for entry_id, pinned, expires in conn.execute(f"SELECT entry_id, pinned, expires FROM {TABLE}")}
    finally:
        conn.close()


def safe_flags(db_path: Path) -> tuple[dict[str, Flags], str | None]:
    """`read_flags`, or ({}, why) when the table cannot be read (a locked or damaged muse.db)."""
    try:
        return read_flags(db_path), None
    except sqlite3.Error as exc:
        return {}, f"pins and expiries unreadable: {exc}"


def is_pinned(entry: Entry, flags: Mapping[str, Flags]) -> bool:
    own = flags.get(entry.id)
    return entry.pinned or (own is not None and own.pinned)


def expires_of(entry: Entry, flags: Mapping[str, Flags]) -> float | None:
    """The earlier of the file's `expires` and the entry's own."""
    own = flags.get(entry.id)
    found = [v for v in (entry.expires, own.expires if own is not None else None) if v is not None]
    return min(found) if found else None


def expired_ids(expiring: Iterable[tuple[str, float]], flags: Mapping[str, Flags], now: float) -> frozenset[str]:
    """The ids expired at `now`: `expiring` gives (id, expires) of the entries whose file sets
    one; `flags` the entries' own."""
    out = {entry_id for entry_id, at in expiring if at <= now}
    out.update(entry_id for entry_id, f in flags.items() if f.expires is not None and f.expires <= now)
    return frozenset(out)


# ---------------------------------------------------------------------- an entry's vitals
@dataclass(frozen=True)
class Vital:
    """What §18 says of one entry at a moment."""

    pinned: bool
    expires: float | None
    expired: bool
    last_used: float  # the later of its last injection and its update
    strength: float | None  # None: decay is off
    level: str | None

    def as_dict(self) -> dict[str, Any]:
        """The keys `list --json` adds, only those that say something."""
        data: dict[str, Any] = {}
        if self.strength is not None:
            data["strength"] = round(self.strength, 4)
            data["level"] = self.level
        if self.pinned:
            data["pinned"] = True
        if self.expires is not None:
            data["expires"] = iso(self.expires)
            data["expired"] = self.expired
        return data


def vitals(entries: Iterable[Entry], now: float, half_life_days: float | None,
           flags: Mapping[str, Flags], injected: Mapping[str, float]) -> dict[str, Vital]:
    out = {}
    for e in entries:
        pinned = is_pinned(e, flags)
        expires = expires_of(e, flags)
        last = max(e.updated_at, injected.get(e.id, 0.0))
        s = None if half_life_days is None else strength(last, now, half_life_days, pinned)
        out[e.id] = Vital(pinned, expires, expires is not None and expires <= now, last, s,
                          None if s is None else level_of(s))
    return out


# ---------------------------------------------------------------------- private mode
def private_until(value: Any) -> float | None:
    """`memory.privateUntil` as seconds since the epoch; None when unset. ValueError when it
    is not an ISO time."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("must be an ISO time such as \"2026-11-27T10:00:00+00:00\"")
    moment = datetime.fromisoformat(value.strip())
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
