"""Muse's tables in muse.db (SPEC §3): the conversation memories and their conversations,
the FTS5 index over them, and memtui's change counter over those rows.

These tables belong to the Muse app: memtui reads them, and writes a row only as a person's
action (add, edit, delete, undo, import), each checked against the row as it was read.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..display import path_text
from ..model import Layer
from .database import BUSY_TIMEOUT_MS, Database, DatabaseError, Row, Tables, busy_or_readonly, now_ms
from .generation import GENERATION_TRIGGERS, STATE_TABLES

if TYPE_CHECKING:
    import sqlite_utils

    from .changes import RowChange


@dataclass(frozen=True)
class ConversationRow:
    id: str
    category: str
    content: str
    tags: tuple[str, ...]
    source: str
    conversation_id: str | None
    conversation_title: str
    workspace_path: str | None
    created_at: int
    updated_at: int


@lru_cache(maxsize=4096)  # rows repeat their tags: each distinct value is parsed once
def parse_tags(raw: str | bytes | None) -> tuple[str, ...]:
    if raw is None or raw == "" or raw == "[]":
        return ()
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        value = str(raw).split(",")
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        value = [value]
    return tuple(str(v).strip() for v in value if v is not None and str(v).strip())


log = logging.getLogger("memtui.conversations")


def fetch_text_rows(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = (),
                    what: str = "conversation memory") -> tuple[list[str], list[tuple[Any, ...]]]:
    """The column names and rows of `sql`. SQLite refuses the whole query when one text value
    is not UTF-8 (and names that text in its error); then the rows are read again as bytes and
    a row that does not decode is left out alone, said on stderr by its id (first column),
    never by its text (SPEC §8: a non-UTF-8 byte in one row is that row's error alone)."""
    try:
        cursor = conn.execute(sql, params)
        return [d[0] for d in cursor.description or ()], cursor.fetchall()
    except sqlite3.OperationalError as exc:
        if "decode" not in str(exc):
            raise
    factory = conn.text_factory
    conn.text_factory = bytes
    try:
        cursor = conn.execute(sql, params)
        names, raw = [d[0] for d in cursor.description or ()], cursor.fetchall()
    finally:
        conn.text_factory = factory
    rows = []
    for row in raw:
        try:
            rows.append(tuple(v.decode("utf-8") if isinstance(v, bytes) else v for v in row))
        except UnicodeDecodeError:
            ident = row[0].decode("utf-8", "backslashreplace") if isinstance(row[0], bytes) else str(row[0])
            log.warning("muse.db: %s %s holds bytes that are not UTF-8; left out", what, path_text(ident))
    return names, rows


# The columns `conversation_row` reads, from `memories m LEFT JOIN conversations c`.
ROW_COLUMNS = ("m.id, m.category, m.content, m.tags, m.source, m.conversation_id, c.title, c.workspace_path, "
               "m.created_at, m.updated_at")


def conversation_row(r: tuple[Any, ...] | sqlite3.Row) -> ConversationRow:
    """A row of `ROW_COLUMNS` as memtui reads it."""
    return ConversationRow(
        id=str(r[0]),
        category=str(r[1] or ""),
        content=str(r[2] or ""),
        tags=parse_tags(r[3]),
        source=str(r[4] or ""),
        conversation_id=None if r[5] is None else str(r[5]),
        conversation_title=str(r[6] or ""),
        workspace_path=r[7],
        created_at=int(r[8] or 0),
        updated_at=int(r[9] or 0),
    )


def belongs_to(workspace_path: str | None, workspace: Path) -> bool:
    """A conversation memory belongs to its conversation's workspace; with no known
    workspace it belongs to every workspace."""
    if not workspace_path:
        return True
    if workspace_path == str(workspace):
        return True
    try:
        return Path(workspace_path).resolve() == workspace
    except (OSError, RuntimeError):
        return False


class Conversations(Tables):
    """The conversation rows and conversations of muse.db, each method one statement or
    transaction under the shared database's lock."""

    def data_version(self) -> int:
        """Moves when another connection (Muse, another memtui) committed a change."""
        with self.database.lock:
            conn = self.database.open(create=False)
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    # ------------------------------------------------------------------ change generation (prepared index)
    def row_generation(self, create: bool = False) -> int | str:
        """A number that moves whenever a conversation memory or a conversation changes, kept
        by memtui's own triggers in memtui's own table (Muse's tables are never altered):
        `absent` (no database), `empty` (no memories table) or `untracked` (the triggers are
        missing and could not be added: nothing derived from the rows may be trusted).
        With `create`, the triggers are added when missing, waiting at most briefly for a lock."""
        with self.database.lock:
            if not self.database.exists():
                return "absent"
            try:
                conn = self.database.open(create=False)
                tables = self.database.tables(conn)
                if "memories" not in tables:
                    return "empty"
                if "conversations" not in tables:
                    return "untracked"
                if not self._generation_ready(conn, tables) and not (create and self._add_generation(conn)):
                    return "untracked"
                row = conn.execute("SELECT value FROM memtui_state WHERE key = 'rows_gen'").fetchone()
                conn.commit()
                return "untracked" if row is None else int(row[0])
            except (sqlite3.DatabaseError, DatabaseError):
                return "untracked"

    @staticmethod
    def _generation_ready(conn: sqlite3.Connection, tables: set[str]) -> bool:
        found = {r[0]: r[1] for r in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'memtui_gen_%'")}
        return all(found.get(name) == sql for name, sql in GENERATION_TRIGGERS.items()) and \
            {"memtui_state", "memtui_row_log"} <= tables

    def _add_generation(self, conn: sqlite3.Connection) -> bool:
        try:
            conn.execute("PRAGMA busy_timeout = 100")  # a lock held by Muse: skip, never wait long
            with conn:
                for sql in STATE_TABLES:
                    conn.execute(sql)
                conn.execute("INSERT OR IGNORE INTO memtui_state VALUES ('rows_gen', 0)")
                for name, sql in GENERATION_TRIGGERS.items():
                    conn.execute(f"DROP TRIGGER IF EXISTS {name}")
                    conn.execute(sql)
            return True
        except sqlite3.DatabaseError:
            return False
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    # ------------------------------------------------------------------ conversation layer
    def rows(self, workspace: Path) -> list[ConversationRow]:
        """Conversation memories of this workspace. Raises DatabaseError when unreadable;
        returns [] when there is no database yet."""
        return [conversation_row(r) for r in self.raw_rows(workspace)]

    def raw_rows(self, workspace: Path) -> list[tuple[Any, ...]]:
        """`rows` as SQLite gives them (`ROW_COLUMNS`, before `conversation_row`): the prepared
        index's build makes its state of them in bulk (`rows.conversation_state`)."""
        with self.database.lock:
            if not self.database.exists():
                return []
            try:
                conn = self.database.open(create=False)  # a read: no sqlite-utils
                sql = self._rows_sql(conn, workspace)
                if sql is None:
                    return []
                _, rows = fetch_text_rows(conn, sql)  # a row that is not UTF-8: left out alone
                conn.commit()  # end the implicit transaction: never hold a read snapshot
            except sqlite3.DatabaseError as exc:
                self.close()
                raise DatabaseError(f"{self.database.path}: {exc}") from None
        return rows

    def raw_rows_ordered(self, workspace: Path, batch: int) -> Iterator[list[tuple[Any, ...]]]:
        """`raw_rows` in batches of at most `batch` rows, newest first (`updated_at`
        descending, then the id: the conversation layer's base order for ordinary values), read
        through one cursor in one read snapshot, never all at once. A text that is not UTF-8
        raises sqlite3.OperationalError ("Could not decode"): `raw_rows` leaves such a row out."""
        with self.database.lock:
            if not self.database.exists():
                return
            try:
                conn = self.database.open(create=False)
                sql = self._rows_sql(conn, workspace)
                if sql is None:
                    return
                cursor = conn.execute(sql + " ORDER BY m.updated_at DESC, m.id")
                try:
                    while rows := cursor.fetchmany(batch):
                        yield rows
                finally:
                    cursor.close()
                    conn.commit()  # end the implicit transaction: never hold a read snapshot
            except sqlite3.OperationalError as exc:
                if "decode" in str(exc):
                    raise
                self.close()
                raise DatabaseError(f"{self.database.path}: {exc}") from None
            except sqlite3.DatabaseError as exc:
                self.close()
                raise DatabaseError(f"{self.database.path}: {exc}") from None

    @staticmethod
    def _rows_sql(conn: sqlite3.Connection, workspace: Path) -> str | None:
        """The query of this workspace's conversation rows (`ROW_COLUMNS`, from `memories m`),
        with what it needs made on `conn`; None when there is no table of memories."""
        tables = Database.tables(conn)
        if "memories" not in tables:
            return None
        if "conversations" not in tables:
            return ("SELECT id, category, content, tags, source, conversation_id, NULL, NULL, created_at, "
                    "updated_at FROM memories m WHERE type = 'conversation'")
        # Decide once per conversation (there are far fewer conversations than memories).
        # ... and once per distinct workspace path (resolving a path touches the disk)
        decided: dict[str | None, bool] = {}
        mine = []
        for cid, where in conn.execute("SELECT id, workspace_path FROM conversations"):
            verdict = decided.get(where)
            if verdict is None:
                verdict = decided[where] = belongs_to(where, workspace)
            if verdict:
                mine.append(cid)
        conn.execute("DROP TABLE IF EXISTS temp.memtui_mine")
        conn.execute("CREATE TEMP TABLE memtui_mine (id TEXT PRIMARY KEY)")
        conn.executemany("INSERT OR IGNORE INTO temp.memtui_mine VALUES (?)", [(c,) for c in mine])
        return (f"SELECT {ROW_COLUMNS} FROM memories m "
                "LEFT JOIN conversations c ON c.id = m.conversation_id "
                "WHERE m.type = 'conversation' AND (c.id IS NULL OR c.id IN (SELECT id FROM temp.memtui_mine))")

    def add(
        self,
        content: str,
        category: str = "knowledge",
        tags: Iterable[str] = (),
        conversation_id: str | None = None,
        source: str = "manual",
        memory_id: str | None = None,
        created_at: int | None = None,
        updated_at: int | None = None,
    ) -> str:
        with self.database.lock:
            db = self.database.ensure_schema()
            memory_id = memory_id or str(uuid.uuid4())
            stamp = now_ms()
            with db.conn:
                db.table("memories").insert(
                    {
                        "id": memory_id,
                        "type": Layer.CONVERSATION,
                        "category": category or "knowledge",
                        "content": content,
                        "tags": json.dumps(list(tags), ensure_ascii=False),
                        "source": source or "manual",
                        "conversation_id": conversation_id,
                        "file_path": None,
                        "created_at": created_at if created_at is not None else stamp,
                        "updated_at": updated_at if updated_at is not None else stamp,
                    }
                )
            return memory_id

    def row(self, memory_id: str) -> Row | None:
        with self.database.lock:
            db = self.database.ensure_schema()
            rows = list(db["memories"].rows_where("id = ?", [memory_id]))
            return rows[0] if rows else None

    # ------------------------------------------------------------------ logged row changes (undo)
    def _row_is(self, db: sqlite_utils.Database, memory_id: str, expected: Row | None) -> bool:
        rows = list(db["memories"].rows_where("id = ?", [memory_id]))
        if expected is None:
            return not rows
        return bool(rows) and all(rows[0].get(k) == expected.get(k) for k in ("content", "updated_at", "type"))

    def write_rows(self, changes: list[RowChange]) -> list[RowChange]:
        """Apply row changes (`before` -> `after`, None = absent) in one transaction, each only
        while the row is still `before`; a row another writer changed since is a conflict and
        nothing is written."""
        from ..fileio import ConflictError

        with self.database.lock:
            db = self.database.ensure_schema()
            with db.conn:
                # the write lock first (waiting out a busy writer): a read that became a write
                # inside a deferred transaction fails at once when another connection wrote
                db.conn.execute("BEGIN IMMEDIATE")
                for change in changes:
                    if not self._row_is(db, change.id, change.before):
                        raise ConflictError(f"conversation memory {change.id} was changed by another writer; "
                                            "not overwritten")
                    if change.after is None:
                        db.execute("DELETE FROM memories WHERE id = ?", [change.id])
                    else:
                        db.table("memories").insert(change.after, replace=True)
            return changes

    def check_rows_unchanged(self, changes: list[RowChange]) -> None:
        """Refuse (ConflictError) when a row is no longer as memtui left it."""
        from ..fileio import ConflictError

        with self.database.lock:
            db = self.database.ensure_schema()
            for change in changes:
                if not self._row_is(db, change.id, change.after):
                    raise ConflictError(f"conversation memory {change.id} changed since memtui wrote it; "
                                        "not restored")

    def rows_match(self, changes: list[RowChange], side: str) -> bool:
        """Is every row of `changes` as it was `before` the change (side "before") or as
        memtui left it (side "after")? None on that side means the row is absent."""
        with self.database.lock:
            db = self.database.ensure_schema()
            return all(self._row_is(db, change.id, getattr(change, side)) for change in changes)

    def restore_rows(self, changes: list[RowChange]) -> None:
        """Put every row back as it was before the change (None: remove it)."""
        with self.database.lock:
            db = self.database.ensure_schema()
            with db.conn:
                db.conn.execute("BEGIN IMMEDIATE")
                for change in changes:
                    if change.before is None:
                        db.execute("DELETE FROM memories WHERE id = ?", [change.id])
                    else:
                        db.table("memories").insert(change.before, replace=True)

    def ensure_conversation(self, conversation_id: str, title: str, workspace_path: str | None) -> None:
        with self.database.lock:
            db = self.database.ensure_schema()
            stamp = now_ms()
            with db.conn:
                db.table("conversations").insert(
                    {"id": conversation_id, "title": title, "workspace_path": workspace_path,
                     "created_at": stamp, "updated_at": stamp},
                    ignore=True,
                )

    def backup_rows(self) -> tuple[list[Row], list[Row]]:
        """Every conversation and every conversation memory row, each as a dict of its
        columns exactly as stored (the `jsonl` backup, SPEC §9). ([], []) without a database."""
        with self.database.lock:
            if not self.database.exists():
                return [], []
            try:
                db = self.database.connect(create=False)
                tables = self.database.tables(db)
                convs = (_dicts(*fetch_text_rows(db.conn, "SELECT * FROM conversations ORDER BY rowid", (), "conversation"))
                         if "conversations" in tables else [])
                rows = (_dicts(*fetch_text_rows(db.conn, "SELECT * FROM memories WHERE type = 'conversation' ORDER BY rowid"))
                        if "memories" in tables else [])
                db.conn.commit()
            except sqlite3.DatabaseError as exc:
                raise DatabaseError(f"{self.database.path}: {exc}") from None
        return convs, rows

    def existing_ids(self, table: str, ids: Iterable[str]) -> set[str]:
        """Which of `ids` are already rows of `table` (`memories` or `conversations`)."""
        if table not in ("memories", "conversations"):
            raise ValueError(table)
        wanted = list(ids)
        with self.database.lock:
            db = self.database.ensure_schema()
            found: set[str] = set()
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                marks = ", ".join("?" for _ in chunk)
                found.update(str(r[0]) for r in db.execute(f"SELECT id FROM {table} WHERE id IN ({marks})", chunk))
            return found

    def restore_conversations(self, conversations: list[Row]) -> None:
        """Insert conversations field for field; one whose id exists is left as it is."""
        with self.database.lock:
            db = self.database.ensure_schema()
            with db.conn:
                for conv in conversations:
                    db.table("conversations").insert(conv, ignore=True)

    # ------------------------------------------------------------------ health and the FTS index
    def health(self) -> dict[str, Any]:
        """What `status` reports about the index. Never raises."""
        info: dict[str, Any] = {"path": str(self.database.path), "exists": self.database.exists()}
        if not info["exists"]:
            info["ok"] = True
            info["note"] = "no database yet; it is created on the first write or index"
            return info
        try:
            with self.database.lock:
                db = self.database.connect(create=False)
                tables = self.database.tables(db)
                info["tables"] = sorted(t for t in tables if not t.startswith("memories_fts_"))
                info["fts"] = "memories_fts" in tables
                if "memories" in tables:
                    info["conversation_rows"] = db.execute(
                        "SELECT count(*) FROM memories WHERE type='conversation'").fetchone()[0]
                    if "file_path" in db["memories"].columns_dict:
                        info["indexed_rows"] = db.execute(
                            "SELECT count(*) FROM memories WHERE file_path IS NOT NULL").fetchone()[0]
                integrity = db.execute("PRAGMA quick_check").fetchone()[0]
                info["integrity"] = integrity
                if info["fts"]:
                    try:
                        db.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES('integrity-check', 1)")
                        info["fts_integrity"] = "ok"
                    except sqlite3.OperationalError as exc:
                        if busy_or_readonly(exc) is None:
                            raise
                        info["fts_integrity"] = "not checked: " + str(exc)
                    except sqlite3.DatabaseError as exc:
                        info["fts_integrity"] = str(exc)
                fts_ok = info.get("fts_integrity", "ok") == "ok" or info["fts_integrity"].startswith("not checked")
                info["ok"] = integrity == "ok" and fts_ok
                info["state"] = "ok" if info["ok"] else "damaged"
        except sqlite3.OperationalError as exc:
            self.close()
            state = busy_or_readonly(exc)
            info["ok"] = False
            info["state"] = state or "damaged"
            info["error"] = str(exc)
        except (sqlite3.DatabaseError, DatabaseError) as exc:
            self.close()
            info["ok"] = False
            info["state"] = busy_or_readonly(exc) or "damaged"
            info["error"] = str(exc)
        return info

    def rebuild_fts(self) -> None:
        with self.database.lock:
            db = self.database.ensure_schema()
            with db.conn:
                db.execute("INSERT INTO memories_fts(memories_fts) VALUES('rebuild')")


def _dicts(names: list[str], rows: list[tuple[Any, ...]]) -> list[Row]:
    return [dict(zip(names, row)) for row in rows]
