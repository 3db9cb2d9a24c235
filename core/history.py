"""Injection history (SPEC §11): one row per real injection in `<home>/muse.db`.

memtui owns the table `memory_injections` and nothing else here: it is created when
missing (with sqlite-utils), pruned on every write, and never holds the query or any
memory text, only counts, timings and the ids and sources of the injected entries.

Writing must never break a prompt: `record()` reports a locked or damaged database in
its return value instead of raising. Reading (`records`, `stats`) raises HistoryError,
whose message names the file and the reason, for the faces to print.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model import CandidateStatus

if TYPE_CHECKING:  # pragma: no cover
    from .injection import InjectionResult

log = logging.getLogger("memtui.history")

TABLE = "memory_injections"
BUSY_TIMEOUT_MS = 5000
KEEP_RECORDS = 10_000
KEEP_DAYS = 90
DAY_MS = 24 * 60 * 60 * 1000

COLUMNS = {
    "id": int,
    "time": int,  # milliseconds since the epoch
    "workspace": str,
    "count": int,
    "chars": int,
    "tokens": int,
    "truncated": int,
    "retrieval_ms": float,
    "disabled_reason": str,
    "entries": str,  # JSON: [{"id": ..., "source": ...}, ...] in injection order
    "target": str,  # the assistant that received it (`claude-code`, `codex`, `gemini`); NULL: Muse
}
NOT_NULL = {"time", "workspace", "count", "chars", "tokens", "truncated", "retrieval_ms", "entries"}


class HistoryError(RuntimeError):
    """The history cannot be read; the message names the file and the reason."""


@dataclass(frozen=True)
class InjectionRecord:
    id: int
    time_ms: int
    workspace: str
    count: int
    chars: int
    tokens: int
    truncated: bool
    retrieval_ms: float
    disabled_reason: str | None
    entries: tuple[tuple[str, str], ...]  # (entry id, source) of each injected entry
    target: str | None = None  # the assistant that received it; None: Muse (or a record from before targets)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "time_ms": self.time_ms,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.time_ms / 1000)),
            "workspace": self.workspace,
            "count": self.count,
            "chars": self.chars,
            "tokens": self.tokens,
            "truncated": self.truncated,
            "retrieval_ms": self.retrieval_ms,
            "disabled_reason": self.disabled_reason,
            "entries": [{"id": i, "source": s} for i, s in self.entries],
            "target": self.target,
        }


@dataclass(frozen=True)
class RecordOutcome:
    """What `record()` did: the new row's id, or why nothing was written (`error`: the
    database could not be written, without the file's path; `skipped`: nothing to record)."""

    record_id: int | None = None
    error: str | None = None
    skipped: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def now_ms() -> int:
    return int(time.time() * 1000)


def _connect(db_path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    conn = sqlite3.connect(db_path, timeout=busy_timeout_ms / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_table(conn: sqlite3.Connection) -> None:
    """WAL (as Muse and the rest of memtui use it) and our table with its index, if missing."""
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone()
    if exists:
        if not _has_target(conn):  # a table made before injections named their assistant
            conn.execute(f"ALTER TABLE {TABLE} ADD COLUMN target TEXT")
        return
    import sqlite_utils  # only when the table is made: a reader never needs it

    db = sqlite_utils.Database(conn)
    table = db.table(TABLE)
    table.create(COLUMNS, pk="id", not_null=NOT_NULL, if_not_exists=True)
    table.create_index(["time"], index_name=f"{TABLE}_time", if_not_exists=True)
    table.create_index(["workspace", "time"], index_name=f"{TABLE}_workspace_time", if_not_exists=True)


def _entries_of(result: InjectionResult) -> list[dict[str, str]]:
    return [{"id": c.id, "source": c.source} for c in result.included if c.status == CandidateStatus.INCLUDED]


def _has_target(conn: sqlite3.Connection) -> bool:
    return any(row[1] == "target" for row in conn.execute(f"PRAGMA table_info({TABLE})"))


def record(db_path: str | Path, result: InjectionResult, workspace: str | Path, *,
           at_ms: int | None = None, busy_timeout_ms: int = BUSY_TIMEOUT_MS, target: str | None = None) -> RecordOutcome:
    """Append one record of `result` (never its query or text) and prune old ones;
    `target` names the assistant that received it (None: Muse itself).

    An injection with memory off is not recorded (memory off means memtui writes nothing).
    Never raises for a locked, read-only or damaged database: the outcome says why.
    """
    db_path = Path(db_path)
    if result.disabled_reason == "switch_off":
        return RecordOutcome(skipped="memory is off")
    if result.disabled_reason == "private":  # SPEC §18: private mode records nothing
        return RecordOutcome(skipped="private mode")
    stamp = now_ms() if at_ms is None else at_ms
    row = (
        stamp,
        str(workspace),
        int(result.count),
        int(result.chars),
        int(result.tokens),
        int(bool(result.truncated)),
        round(float(result.retrieval_ms), 3),
        result.disabled_reason,
        json.dumps(_entries_of(result), ensure_ascii=False, separators=(",", ":")),
        target,
    )
    conn = None
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        conn = _connect(db_path, busy_timeout_ms)
        _ensure_table(conn)
        with conn:  # one transaction: the row and the pruning
            cur = conn.execute(
                f"INSERT INTO {TABLE} (time, workspace, count, chars, tokens, truncated, retrieval_ms, "
                "disabled_reason, entries, target) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            record_id = cur.lastrowid
            _prune(conn, stamp)
        return RecordOutcome(record_id=record_id)
    except (sqlite3.Error, OSError) as exc:
        reason = f"injection not recorded: {exc}"
        log.warning("%s: %s", db_path, reason)
        return RecordOutcome(error=reason)
    finally:
        if conn is not None:
            conn.close()


def _prune(conn: sqlite3.Connection, now: int) -> None:
    """Keep the newest KEEP_RECORDS records and none older than KEEP_DAYS days."""
    conn.execute(f"DELETE FROM {TABLE} WHERE time < ?", (now - KEEP_DAYS * DAY_MS,))
    conn.execute(
        f"DELETE FROM {TABLE} WHERE id IN (SELECT id FROM {TABLE} ORDER BY time DESC, id DESC LIMIT -1 OFFSET ?)",
        (KEEP_RECORDS,))


def _read(db_path: str | Path, sql: str, args: Iterable[object]) -> list[tuple[Any, ...]]:
    """Rows of a query over our table; [] when there is no database or no table yet. In
    `sql`, `{target}` stands for the target column (NULL in a table made before it)."""
    db_path = Path(db_path)
    if not db_path.exists():
        return []
    conn = None
    try:
        conn = _connect(db_path, BUSY_TIMEOUT_MS)
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone()
        if not exists:
            return []
        sql = sql.replace("{target}", "target" if _has_target(conn) else "NULL")
        return conn.execute(sql, tuple(args)).fetchall()
    except sqlite3.Error as exc:
        raise HistoryError(f"{db_path}: cannot read the injection history: {exc}") from None
    finally:
        if conn is not None:
            conn.close()


def _parse_entries(raw: str | None) -> tuple[tuple[str, str], ...]:
    try:
        items = json.loads(raw or "[]")
    except ValueError:
        return ()
    if not isinstance(items, list):
        return ()
    return tuple((str(i.get("id", "")), str(i.get("source", ""))) for i in items if isinstance(i, dict))


def records(db_path: str | Path, limit: int | None = None,
            workspace: str | Path | None = None) -> list[InjectionRecord]:
    """The records, newest first; only `workspace`'s when given; at most `limit`."""
    where, args = "", list[object]()
    if workspace is not None:
        where, args = "WHERE workspace = ?", [str(workspace)]
    sql = (f"SELECT id, time, workspace, count, chars, tokens, truncated, retrieval_ms, disabled_reason, entries, "
           f"{{target}} FROM {TABLE} {where} ORDER BY time DESC, id DESC LIMIT ?")
    args.append(-1 if limit is None else max(0, int(limit)))
    return [
        InjectionRecord(id=r[0], time_ms=r[1], workspace=r[2], count=r[3], chars=r[4], tokens=r[5],
                        truncated=bool(r[6]), retrieval_ms=r[7], disabled_reason=r[8],
                        entries=_parse_entries(r[9]), target=r[10])
        for r in _read(db_path, sql, args)
    ]


def stats(db_path: str | Path, workspace: str | Path | None = None, since_ms: int | None = None,
          by_target: bool = False) -> dict[str, tuple[Any, ...]]:
    """entry id -> (times injected, time of the last injection in ms), over `workspace`'s
    records (all when None) since `since_ms` (all when None). With `by_target`, a third
    item: ((assistant, times), ...) most first, `muse` for injections Muse recorded."""
    clauses, args = ["h.count > 0"], list[object]()
    if workspace is not None:
        clauses.append("h.workspace = ?")
        args.append(str(workspace))
    if since_ms is not None:
        clauses.append("h.time >= ?")
        args.append(int(since_ms))
    target = "{target}" if by_target else "NULL"  # json_each has no column of that name
    sql = (f"SELECT json_extract(e.value, '$.id') AS entry_id, {target} AS tgt, count(DISTINCT h.id), max(h.time) "
           f"FROM {TABLE} AS h, json_each(CASE WHEN json_valid(h.entries) THEN h.entries ELSE '[]' END) AS e "
           f"WHERE {' AND '.join(clauses)} AND e.type = 'object' GROUP BY entry_id, tgt HAVING entry_id IS NOT NULL")
    out: dict[str, tuple[Any, ...]] = {}
    per_target: dict[str, dict[str, int]] = {}
    for entry_id, tgt, n, last in _read(db_path, sql, args):
        key = str(entry_id)
        count, newest = out.get(key, (0, 0))[:2]
        out[key] = (count + n, max(newest, last))
        per_target.setdefault(key, {})[tgt or "muse"] = n
    if by_target:
        out = {key: (*value, tuple(sorted(per_target[key].items(), key=lambda kv: (-kv[1], kv[0]))))
               for key, value in out.items()}
    return out
