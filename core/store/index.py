"""muse.db (SPEC §3): schema, FTS5 index, conversation memories, the Markdown index.

memtui shares the database with the Muse app: it creates only what is missing, never
drops what it did not create, and works in WAL mode with a busy timeout.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a connection is made: `memtui preview` and the hook never need it
    import sqlite_utils

from .generation import GENERATION_TRIGGERS, STATE_TABLES

BUSY_TIMEOUT_MS = 5000

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
  id TEXT PRIMARY KEY, title TEXT, workspace_path TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
  id TEXT PRIMARY KEY,
  type TEXT NOT NULL,
  category TEXT NOT NULL,
  content TEXT NOT NULL,
  tags TEXT,
  source TEXT NOT NULL,
  conversation_id TEXT REFERENCES conversations(id) ON DELETE SET NULL,
  file_path TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS memories_file_path ON memories(file_path);
CREATE TABLE IF NOT EXISTS memtui_files (
  path TEXT PRIMARY KEY, layer TEXT NOT NULL, size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL, payload TEXT);
CREATE TABLE IF NOT EXISTS memtui_reviewed (
  key TEXT PRIMARY KEY, entry_id TEXT NOT NULL, reviewed_at INTEGER NOT NULL);
"""


def busy_or_readonly(exc: Exception) -> str | None:
    """"locked" or "read-only" when SQLite refused for that reason (not damage), else None."""
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return "locked"
    if "readonly" in text or "read-only" in text or "attempt to write" in text:
        return "read-only"
    return None


class DatabaseError(RuntimeError):
    """muse.db cannot be used; the message names the file and the reason."""


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


def now_ms() -> int:
    return int(time.time() * 1000)


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


# The columns `conversation_row` reads, from `memories m LEFT JOIN conversations c`.
ROW_COLUMNS = ("m.id, m.category, m.content, m.tags, m.source, m.conversation_id, c.title, c.workspace_path, "
               "m.created_at, m.updated_at")


def conversation_row(r: tuple | sqlite3.Row) -> ConversationRow:
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


class MuseDB:
    """One connection to muse.db, used from one thread at a time (guarded by a lock).

    Long, on purpose: it is the one place that speaks SQL to a database memtui shares with
    Muse, so every statement (schema, conversation rows, the derived Markdown rows, logged
    row changes, health) sits behind the same lock, connection and error translation; its
    methods are small and each is one statement or transaction."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._db: sqlite_utils.Database | None = None
        self._schema_ready = False
        self.backup_path: Path | None = None
        self._locked_until = 0.0  # monotonic time until which a connection is not tried again

    # ------------------------------------------------------------------ connection
    def exists(self) -> bool:
        return self.path.is_file()

    def _connect(self, create: bool) -> sqlite_utils.Database:
        if self._db is not None:
            return self._db
        if not create and not self.exists():
            raise FileNotFoundError(str(self.path))
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        if time.monotonic() < self._locked_until:
            # it was locked a moment ago, after a whole busy timeout: one command waits once, not
            # once per step (status under a held lock took 25 s, five timeouts in a row)
            raise DatabaseError(f"{self.path}: database is locked")
        conn = None
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # foreign keys stay as SQLite leaves them (off): Muse keeps memories whose
            # conversation is unknown, and an undo or import must be able to put those back
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if mode != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            if busy_or_readonly(exc) == "locked":
                self._locked_until = time.monotonic() + BUSY_TIMEOUT_MS / 1000
            raise DatabaseError(f"{self.path}: {exc}") from None
        self._conn = conn
        import sqlite_utils

        self._db = sqlite_utils.Database(conn)
        return self._db

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._db = None
            self._schema_ready = False

    def _tables(self, db: sqlite_utils.Database) -> set[str]:
        return set(db.table_names())

    def ensure_schema(self) -> sqlite_utils.Database:
        """Create what is missing (tables, columns, FTS5 + triggers); back the file up first
        when an existing database's schema is about to change."""
        with self._lock:
            db = self._connect(create=True)
            if self._schema_ready:
                return db
            try:
                tables = self._tables(db)
                needs_fts = "memories_fts" not in tables
                needs_column = "memories" in tables and "file_path" not in db["memories"].columns_dict
                if "memtui_files" in tables and "payload" not in db["memtui_files"].columns_dict:
                    db.execute("ALTER TABLE memtui_files ADD COLUMN payload TEXT")  # our own table
                missing = {"conversations", "memories", "memtui_files"} - tables
                if (needs_fts or needs_column or missing) and tables - {"memtui_files"}:
                    self._backup()
                if needs_column:
                    db.execute("ALTER TABLE memories ADD COLUMN file_path TEXT")
                db.executescript(SCHEMA)
                if needs_fts:
                    db.table("memories").enable_fts(
                        ["content", "tags"], fts_version="FTS5", tokenize="trigram", create_triggers=True
                    )
                db.conn.commit()
            except sqlite3.DatabaseError as exc:
                raise DatabaseError(f"{self.path}: {exc}") from None
            self._schema_ready = True
            return db

    def _backup(self) -> None:
        """Copy the database (consistently, via SQLite's backup API) before a schema change."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.path.with_name(f"{self.path.name}.bak-{stamp}")
        assert self._conn is not None
        dest = sqlite3.connect(target)
        try:
            self._conn.backup(dest)
        finally:
            dest.close()
        self.backup_path = target

    def data_version(self) -> int:
        with self._lock:
            db = self._connect(create=False)
            return db.execute("PRAGMA data_version").fetchone()[0]

    # ------------------------------------------------------------------ change generation (prepared index)
    def row_generation(self, create: bool = False) -> int | str:
        """A number that moves whenever a conversation memory or a conversation changes, kept
        by memtui's own triggers in memtui's own table (Muse's tables are never altered):
        `absent` (no database), `empty` (no memories table) or `untracked` (the triggers are
        missing and could not be added: nothing derived from the rows may be trusted).
        With `create`, the triggers are added when missing, waiting at most briefly for a lock."""
        with self._lock:
            if not self.exists():
                return "absent"
            try:
                db = self._connect(create=False)
                tables = self._tables(db)
                if "memories" not in tables:
                    return "empty"
                if "conversations" not in tables:
                    return "untracked"
                if not self._generation_ready(db) and not (create and self._add_generation(db)):
                    return "untracked"
                row = db.execute("SELECT value FROM memtui_state WHERE key = 'rows_gen'").fetchone()
                db.conn.commit()
                return "untracked" if row is None else int(row[0])
            except (sqlite3.DatabaseError, DatabaseError):
                return "untracked"

    @staticmethod
    def _generation_ready(db: sqlite_utils.Database) -> bool:
        found = {r[0]: r[1] for r in db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'memtui_gen_%'")}
        return all(found.get(name) == sql for name, sql in GENERATION_TRIGGERS.items()) and \
            {"memtui_state", "memtui_row_log"} <= set(db.table_names())

    def _add_generation(self, db: sqlite_utils.Database) -> bool:
        conn = db.conn
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
    def conversation_rows(self, workspace: Path) -> list[ConversationRow]:
        """Conversation memories of this workspace. Raises DatabaseError when unreadable;
        returns [] when there is no database yet."""
        with self._lock:
            if not self.exists():
                return []
            try:
                db = self._connect(create=False)
                tables = self._tables(db)
                if "memories" not in tables:
                    return []
                if "conversations" in tables:
                    # Decide once per conversation (there are far fewer conversations than memories).
                    # ... and once per distinct workspace path (resolving a path touches the disk)
                    decided: dict[str | None, bool] = {}
                    mine = []
                    for cid, where in db.execute("SELECT id, workspace_path FROM conversations"):
                        verdict = decided.get(where)
                        if verdict is None:
                            verdict = decided[where] = belongs_to(where, workspace)
                        if verdict:
                            mine.append(cid)
                    db.execute("DROP TABLE IF EXISTS temp.memtui_mine")
                    db.execute("CREATE TEMP TABLE memtui_mine (id TEXT PRIMARY KEY)")
                    db.conn.executemany("INSERT OR IGNORE INTO temp.memtui_mine VALUES (?)", [(c,) for c in mine])
                    sql = (f"SELECT {ROW_COLUMNS} FROM memories m "
                           "LEFT JOIN conversations c ON c.id = m.conversation_id "
                           "WHERE m.type = 'conversation' AND (c.id IS NULL OR c.id IN (SELECT id FROM temp.memtui_mine))")
                else:
                    sql = ("SELECT id, category, content, tags, source, conversation_id, NULL, NULL, created_at, "
                           "updated_at FROM memories WHERE type = 'conversation'")
                rows = db.execute(sql).fetchall()
                db.conn.commit()  # end the implicit transaction: never hold a read snapshot
            except sqlite3.DatabaseError as exc:
                self.close()
                raise DatabaseError(f"{self.path}: {exc}") from None
        return [conversation_row(r) for r in rows]

    def add_conversation_memory(
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
        with self._lock:
            db = self.ensure_schema()
            memory_id = memory_id or str(uuid.uuid4())
            stamp = now_ms()
            with db.conn:
                db.table("memories").insert(
                    {
                        "id": memory_id,
                        "type": "conversation",
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

    def get_memory_row(self, memory_id: str) -> dict | None:
        with self._lock:
            db = self.ensure_schema()
            rows = list(db["memories"].rows_where("id = ?", [memory_id]))
            return rows[0] if rows else None

    def update_conversation_memory(self, memory_id: str, content: str, expected_updated_at: int | None) -> int:
        """Change a conversation memory's text; refuse when another writer changed it since."""
        with self._lock:
            db = self.ensure_schema()
            stamp = now_ms()
            with db.conn:
                cur = db.execute(
                    "UPDATE memories SET content = ?, updated_at = ? WHERE id = ? AND type = 'conversation'"
                    + (" AND updated_at = ?" if expected_updated_at is not None else ""),
                    [content, stamp, memory_id] + ([expected_updated_at] if expected_updated_at is not None else []),
                )
            return cur.rowcount

    def delete_memory(self, memory_id: str) -> int:
        with self._lock:
            db = self.ensure_schema()
            with db.conn:
                cur = db.execute("DELETE FROM memories WHERE id = ? AND type = 'conversation'", [memory_id])
            return cur.rowcount

    def restore_memory_row(self, row: dict) -> None:
        with self._lock:
            db = self.ensure_schema()
            with db.conn:
                db.table("memories").insert(row, replace=True)

    # ------------------------------------------------------------------ logged row changes (undo)
    def _row_is(self, db: sqlite_utils.Database, memory_id: str, expected: dict | None) -> bool:
        rows = list(db["memories"].rows_where("id = ?", [memory_id]))
        if expected is None:
            return not rows
        return bool(rows) and all(rows[0].get(k) == expected.get(k) for k in ("content", "updated_at", "type"))

    def write_rows(self, changes: list) -> list:
        """Apply row changes (`before` -> `after`, None = absent) in one transaction, each only
        while the row is still `before`; a row another writer changed since is a conflict and
        nothing is written."""
        from ..fileio import ConflictError

        with self._lock:
            db = self.ensure_schema()
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

    def check_rows_unchanged(self, changes: list) -> None:
        """Refuse (ConflictError) when a row is no longer as memtui left it."""
        from ..fileio import ConflictError

        with self._lock:
            db = self.ensure_schema()
            for change in changes:
                if not self._row_is(db, change.id, change.after):
                    raise ConflictError(f"conversation memory {change.id} changed since memtui wrote it; "
                                        "not restored")

    def rows_match(self, changes: list, side: str) -> bool:
        """Is every row of `changes` as it was `before` the change (side "before") or as
        memtui left it (side "after")? None on that side means the row is absent."""
        with self._lock:
            db = self.ensure_schema()
            return all(self._row_is(db, change.id, getattr(change, side)) for change in changes)

    def restore_rows(self, changes: list) -> None:
        """Put every row back as it was before the change (None: remove it)."""
        with self._lock:
            db = self.ensure_schema()
            with db.conn:
                db.conn.execute("BEGIN IMMEDIATE")
                for change in changes:
                    if change.before is None:
                        db.execute("DELETE FROM memories WHERE id = ?", [change.id])
                    else:
                        db.table("memories").insert(change.before, replace=True)

    def ensure_conversation(self, conversation_id: str, title: str, workspace_path: str | None) -> None:
        with self._lock:
            db = self.ensure_schema()
            stamp = now_ms()
            with db.conn:
                db.table("conversations").insert(
                    {"id": conversation_id, "title": title, "workspace_path": workspace_path,
                     "created_at": stamp, "updated_at": stamp},
                    ignore=True,
                )

    def backup_rows(self) -> tuple[list[dict], list[dict]]:
        """Every conversation and every conversation memory row, each as a dict of its
        columns exactly as stored (the `jsonl` backup, SPEC §9). ([], []) without a database."""
        with self._lock:
            if not self.exists():
                return [], []
            try:
                db = self._connect(create=False)
                tables = self._tables(db)
                convs = list(db["conversations"].rows_where(order_by="rowid")) if "conversations" in tables else []
                rows = (list(db["memories"].rows_where("type = 'conversation'", order_by="rowid"))
                        if "memories" in tables else [])
                db.conn.commit()
            except sqlite3.DatabaseError as exc:
                raise DatabaseError(f"{self.path}: {exc}") from None
        return convs, rows

    def existing_ids(self, table: str, ids: Iterable[str]) -> set[str]:
        """Which of `ids` are already rows of `table` (`memories` or `conversations`)."""
        if table not in ("memories", "conversations"):
            raise ValueError(table)
        wanted = list(ids)
        with self._lock:
            db = self.ensure_schema()
            found: set[str] = set()
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                marks = ", ".join("?" for _ in chunk)
                found.update(str(r[0]) for r in db.execute(f"SELECT id FROM {table} WHERE id IN ({marks})", chunk))
            return found

    def restore_conversations(self, conversations: list[dict]) -> None:
        """Insert conversations field for field; one whose id exists is left as it is."""
        with self._lock:
            db = self.ensure_schema()
            with db.conn:
                for conv in conversations:
                    db.table("conversations").insert(conv, ignore=True)

    # ------------------------------------------------------------------ Markdown index
    def indexed_files(self) -> dict[str, str]:
        """Indexed Markdown files: path -> sha256 of the content that was indexed."""
        with self._lock:
            db = self.ensure_schema()
            return {r[0]: r[1] for r in db.execute("SELECT path, sha256 FROM memtui_files")}

    def file_cache(self) -> dict[str, tuple[str, str]]:
        """The parsed-entry cache: path -> (sha256, payload). Read-only; {} when there is none."""
        with self._lock:
            if not self.exists():
                return {}
            try:
                db = self._connect(create=False)
                if "memtui_files" not in self._tables(db):
                    return {}
                return {r[0]: (r[1], r[2]) for r in db.execute(
                    "SELECT path, sha256, payload FROM memtui_files WHERE payload IS NOT NULL")}
            except (sqlite3.DatabaseError, DatabaseError):  # no cache: the files get parsed
                return {}

    def index_file(self, layer: str, path: Path, stat: tuple[int, int, str], rows: list[dict], payload: str) -> None:
        """Replace the index rows derived from one Markdown file, and its cached entries."""
        with self._lock:
            db = self.ensure_schema()
            with db.conn:
                db.execute("DELETE FROM memories WHERE file_path = ?", [str(path)])
                if rows:
                    db.table("memories").insert_all(rows, replace=True)
                db.execute(
                    "INSERT OR REPLACE INTO memtui_files(path, layer, size, mtime_ns, sha256, payload) VALUES (?,?,?,?,?,?)",
                    [str(path), layer, *stat, payload],
                )

    def unindex_files(self, paths: Iterable[str]) -> None:
        with self._lock:
            db = self.ensure_schema()
            with db.conn:
                for p in paths:
                    db.execute("DELETE FROM memories WHERE file_path = ?", [p])
                    db.execute("DELETE FROM memtui_files WHERE path = ?", [p])

    def clear_file_index(self) -> None:
        """Forget every derived Markdown row and cached parse (they are rebuilt from the files)."""
        with self._lock:
            db = self.ensure_schema()
            with db.conn:
                db.execute("DELETE FROM memories WHERE file_path IS NOT NULL")
                db.execute("DELETE FROM memtui_files")

    # ------------------------------------------------------------------ review state (SPEC §12)
    def reviewed_keys(self) -> set[str]:
        """The review keys the person accepted (see `core.review.review_key`); an empty set
        when there is no database or no review table yet (nothing is created to read)."""
        with self._lock:
            if not self.exists():
                return set()
            try:
                db = self._connect(create=False)
                if "memtui_reviewed" not in self._tables(db):
                    return set()
                keys = {r[0] for r in db.execute("SELECT key FROM memtui_reviewed")}
                db.conn.commit()  # never hold a read snapshot
                return keys
            except sqlite3.DatabaseError as exc:
                self.close()
                raise DatabaseError(f"{self.path}: {exc}") from None

    def set_reviewed(self, items: Iterable[tuple[str, str]]) -> int:
        """Mark (review key, entry id) pairs reviewed now; returns how many were new."""
        with self._lock:
            db = self.ensure_schema()
            stamp = now_ms()
            with db.conn:
                cur = db.conn.executemany(
                    "INSERT OR IGNORE INTO memtui_reviewed (key, entry_id, reviewed_at) VALUES (?, ?, ?)",
                    [(key, entry_id, stamp) for key, entry_id in items])
            return max(cur.rowcount, 0)

    def unset_reviewed(self, keys: Iterable[str]) -> None:
        with self._lock:
            db = self.ensure_schema()
            with db.conn:
                db.conn.executemany("DELETE FROM memtui_reviewed WHERE key = ?", [(k,) for k in keys])

    # ------------------------------------------------------------------ search and health
    def search(self, keyword: str, limit: int = 200) -> list[str]:
        """Ids of memories whose content or tags contain `keyword` (FTS5 trigram index;
        shorter keywords, such as 2-character Chinese words, use the index's LIKE)."""
        keyword = keyword.strip()
        if not keyword:
            return []
        with self._lock:
            db = self.ensure_schema()
            if len(keyword) >= 3:
                quoted = '"' + keyword.replace('"', '""') + '"'
                sql = ("SELECT m.id FROM memories_fts f JOIN memories m ON m.rowid = f.rowid "
                       "WHERE memories_fts MATCH ? LIMIT ?")
                args = [quoted, limit]
            else:
                pattern = "%" + keyword.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                sql = ("SELECT m.id FROM memories_fts f JOIN memories m ON m.rowid = f.rowid "
                       "WHERE f.content LIKE ? ESCAPE '\\' OR f.tags LIKE ? ESCAPE '\\' LIMIT ?")
                args = [pattern, pattern, limit]
            return [r[0] for r in db.execute(sql, args)]

    def health(self) -> dict:
        """What `status` reports about the index. Never raises."""
        info: dict = {"path": str(self.path), "exists": self.exists()}
        if not info["exists"]:
            info["ok"] = True
            info["note"] = "no database yet; it is created on the first write or index"
            return info
        try:
            with self._lock:
                db = self._connect(create=False)
                tables = self._tables(db)
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

    def export_conversations(self) -> list[dict]:
        """Every conversation memory (all workspaces) with its conversation, for JSON Lines."""
        with self._lock:
            db = self._connect(create=False)
            tables = self._tables(db)
            if "memories" not in tables:
                return []
            cols = [c for c in ("id", "type", "category", "content", "tags", "source", "conversation_id",
                                "created_at", "updated_at") if c in db["memories"].columns_dict]
            rows = db.execute(f"SELECT {', '.join(cols)} FROM memories WHERE type = 'conversation' ORDER BY id").fetchall()
            convs = {}
            if "conversations" in tables:
                convs = {r[0]: {"id": r[0], "title": r[1], "workspace_path": r[2], "created_at": r[3], "updated_at": r[4]}
                         for r in db.execute("SELECT id, title, workspace_path, created_at, updated_at FROM conversations")}
        out = []
        for r in rows:
            memory = dict(zip(cols, r))
            out.append({"memory": memory, "conversation": convs.get(memory.get("conversation_id"))})
        return out

    def import_conversations(self, records: list[dict]) -> tuple[int, int]:
        """Add exported conversation memories; ones already present (same id) are left alone.
        Returns (added, already present)."""
        added = present = 0
        with self._lock:
            db = self.ensure_schema()
            with db.conn:
                for rec in records:
                    conv = rec.get("conversation")
                    if conv:
                        db.execute("INSERT OR IGNORE INTO conversations (id, title, workspace_path, created_at, updated_at) "
                                   "VALUES (?,?,?,?,?)", [conv["id"], conv.get("title"), conv.get("workspace_path"),
                                                          conv.get("created_at") or now_ms(), conv.get("updated_at") or now_ms()])
                    m = rec["memory"]
                    cur = db.execute(
                        "INSERT OR IGNORE INTO memories (id, type, category, content, tags, source, conversation_id, "
                        "file_path, created_at, updated_at) VALUES (?, 'conversation', ?, ?, ?, ?, ?, NULL, ?, ?)",
                        [m["id"], m.get("category") or "knowledge", m["content"], m.get("tags"), m.get("source") or "manual",
                         m.get("conversation_id"), m.get("created_at") or now_ms(), m.get("updated_at") or now_ms()])
                    if cur.rowcount:
                        added += 1
                    else:
                        present += 1
        return added, present

    def rebuild_fts(self) -> None:
        with self._lock:
            db = self.ensure_schema()
            with db.conn:
                db.execute("INSERT INTO memories_fts(memories_fts) VALUES('rebuild')")
