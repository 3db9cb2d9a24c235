"""muse.db (SPEC §3), the file: one connection shared by the two owners of its tables.

memtui shares the database with the Muse app: it creates only what is missing, never
drops what it did not create, and works in WAL mode with a busy timeout. Muse's tables are
read and written by `conversations`, memtui's own by `index`; both go through one
`Database` (one connection, one lock, one schema step with one backup), so a write of one
owner is never seen by the other as a change from outside (`PRAGMA data_version` counts
other connections' commits only).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a connection is made: `memtui preview` and the hook never need it
    import sqlite_utils

BUSY_TIMEOUT_MS = 5000
Row = dict[str, Any]  # a row of a table, column by column as stored

# Muse's tables (read and written through `conversations`; the Markdown rows are memtui's, in
# Muse's `memories` with a file_path) and memtui's own tables (`index`).
MUSE_TABLES = """
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
"""
MEMTUI_TABLES = """
CREATE TABLE IF NOT EXISTS memtui_files (
  path TEXT PRIMARY KEY, layer TEXT NOT NULL, size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL, payload TEXT);
CREATE TABLE IF NOT EXISTS memtui_reviewed (
  key TEXT PRIMARY KEY, entry_id TEXT NOT NULL, reviewed_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS memtui_entry_flags (
  entry_id TEXT PRIMARY KEY, layer TEXT NOT NULL, pinned INTEGER NOT NULL DEFAULT 0,
  expires REAL, set_at INTEGER NOT NULL);
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


def now_ms() -> int:
    return int(time.time() * 1000)


class Database:
    """One connection to muse.db, used from one thread at a time (guarded by `lock`, which
    every statement of either owner holds)."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._db: sqlite_utils.Database | None = None
        self._schema_ready = False
        self.backup_path: Path | None = None
        self._locked_until = 0.0  # monotonic time until which a connection is not tried again

    def exists(self) -> bool:
        return self.path.is_file()

    def connect(self, create: bool) -> sqlite_utils.Database:
        """The connection, wrapped by sqlite-utils (what a write needs: its tables and inserts)."""
        if self._db is not None:
            return self._db
        conn = self.open(create)
        import sqlite_utils  # (it imports numpy when present: ~0.1 s that a read does not need)

        self._db = sqlite_utils.Database(conn)
        return self._db

    def open(self, create: bool) -> sqlite3.Connection:
        """The plain connection (made when there is none yet): what a read needs."""
        if self._conn is not None:
            return self._conn
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
        return conn

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._db = None
            self._schema_ready = False

    @staticmethod
    def tables(db: sqlite_utils.Database | sqlite3.Connection) -> set[str]:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def ensure_schema(self) -> sqlite_utils.Database:
        """Create what is missing (tables, columns, FTS5 + triggers); back the file up first
        when an existing database's schema is about to change. The connection, wrapped by
        sqlite-utils (what a write needs)."""
        with self.lock:
            self.schema_ready()
            return self.connect(create=True)

    def schema_ready(self) -> sqlite3.Connection:
        """`ensure_schema` on the plain connection, which it returns: a caller that needs no
        sqlite-utils (a read, or plain statements) never imports it (with numpy: ≈0.1 s of the
        TUI's store load) once the schema is complete."""
        with self.lock:
            conn = self.open(create=True)
            if self._schema_ready:
                return conn
            try:
                tables = self.tables(conn)

                def has_column(table: str, column: str) -> bool:
                    return any(r[1] == column for r in conn.execute(f"PRAGMA table_info({table})"))

                needs_fts = "memories_fts" not in tables
                needs_column = "memories" in tables and not has_column("memories", "file_path")
                if "memtui_files" in tables and not has_column("memtui_files", "payload"):
                    conn.execute("ALTER TABLE memtui_files ADD COLUMN payload TEXT")  # our own table
                missing = {"conversations", "memories", "memtui_files"} - tables
                if (needs_fts or needs_column or missing) and tables - {"memtui_files"}:
                    self._backup()
                if needs_column:
                    conn.execute("ALTER TABLE memories ADD COLUMN file_path TEXT")
                conn.executescript(MUSE_TABLES + MEMTUI_TABLES)
                if needs_fts:
                    try:
                        self.connect(create=True).table("memories").enable_fts(
                            ["content", "tags"], fts_version="FTS5", tokenize="trigram", create_triggers=True
                        )
                    except sqlite3.OperationalError:
                        conn.rollback()
                        if "memories_fts" not in self.tables(conn):
                            raise
                        # another writer (Muse, the hook, a second memtui) made it meanwhile
                conn.commit()
            except sqlite3.DatabaseError as exc:
                raise DatabaseError(f"{self.path}: {exc}") from None
            self._schema_ready = True
            return conn

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


class Tables:
    """Some of muse.db's tables, over a `Database` shared with the other owner (or one of its
    own, made from a path)."""

    def __init__(self, database: Database | Path):
        self.database = database if isinstance(database, Database) else Database(database)

    def close(self) -> None:
        self.database.close()
