"""memtui's own tables in muse.db: the Markdown index (SPEC §3) and the review state (SPEC §12).

The Markdown index is derived from the files and rebuildable: a row per entry in Muse's
`memories` table (with its `file_path`, so Muse's search finds it) and, in `memtui_files`,
each indexed file's size, mtime, hash and parsed entries (the parse cache a full load reads
instead of re-parsing an unchanged file). The review state is the person's: the keys of the
entries they accepted, never stored in a memory file or in Muse's tables; so are the entry
flags (SPEC §18: an entry's own pin and expiry).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from .database import DatabaseError, Row, Tables, now_ms


class FileIndex(Tables):
    """The Markdown rows and the parse cache, each method one statement or transaction."""

    def indexed(self) -> dict[str, str]:
        """Indexed Markdown files: path -> sha256 of the content that was indexed; {} when
        nothing is indexed yet. A read: it creates nothing (the doctor reads with it)."""
        with self.database.lock:
            if not self.database.exists():
                return {}
            conn = self.database.open(create=False)
            if "memtui_files" not in self.database.tables(conn):
                return {}
            found = {r[0]: r[1] for r in conn.execute("SELECT path, sha256 FROM memtui_files")}
            conn.commit()  # never hold a read snapshot
            return found

    def cached(self) -> dict[str, tuple[str, str]]:
        """The parsed-entry cache: path -> (sha256, payload). Read-only; {} when there is none."""
        with self.database.lock:
            if not self.database.exists():
                return {}
            try:
                conn = self.database.open(create=False)  # a read: no sqlite-utils
                if "memtui_files" not in self.database.tables(conn):
                    return {}
                return {r[0]: (r[1], r[2]) for r in conn.execute(
                    "SELECT path, sha256, payload FROM memtui_files WHERE payload IS NOT NULL")}
            except (sqlite3.DatabaseError, DatabaseError):  # no cache: the files get parsed
                return {}

    def put(self, layer: str, path: Path, stat: tuple[int, int, str], rows: list[Row], payload: str) -> None:
        """Replace the index rows derived from one Markdown file (each with the same columns),
        and its cached entries: plain statements on the plain connection, so that the TUI's
        first load after an outside edit does not import sqlite-utils (with numpy: ≈20 MB and
        0.1 s) to write one file's rows."""
        with self.database.lock:
            conn = self.database.schema_ready()
            with conn:
                conn.execute("DELETE FROM memories WHERE file_path = ?", [str(path)])
                if rows:
                    columns = list(rows[0])
                    conn.executemany(f"INSERT OR REPLACE INTO memories ({', '.join(columns)}) "
                                     f"VALUES ({', '.join('?' * len(columns))})",
                                     [[row[c] for c in columns] for row in rows])
                conn.execute(
                    "INSERT OR REPLACE INTO memtui_files(path, layer, size, mtime_ns, sha256, payload) VALUES (?,?,?,?,?,?)",
                    [str(path), layer, *stat, payload],
                )

    def remove(self, paths: Iterable[str]) -> None:
        with self.database.lock:
            conn = self.database.schema_ready()
            with conn:
                for p in paths:
                    conn.execute("DELETE FROM memories WHERE file_path = ?", [p])
                    conn.execute("DELETE FROM memtui_files WHERE path = ?", [p])

    def clear(self) -> None:
        """Forget every derived Markdown row and cached parse (they are rebuilt from the files)."""
        with self.database.lock:
            conn = self.database.schema_ready()
            with conn:
                conn.execute("DELETE FROM memories WHERE file_path IS NOT NULL")
                conn.execute("DELETE FROM memtui_files")


class ReviewState(Tables):
    """The review keys the person accepted (see `core.review.review_key`)."""

    def accepted(self) -> set[str]:
        """The review keys the person accepted (see `core.review.review_key`); an empty set
        when there is no database or no review table yet (nothing is created to read)."""
        with self.database.lock:
            if not self.database.exists():
                return set()
            try:
                conn = self.database.open(create=False)
                if "memtui_reviewed" not in self.database.tables(conn):
                    return set()
                keys = {r[0] for r in conn.execute("SELECT key FROM memtui_reviewed")}
                conn.commit()  # never hold a read snapshot
                return keys
            except sqlite3.DatabaseError as exc:
                self.close()
                raise DatabaseError(f"{self.database.path}: {exc}") from None

    def add(self, items: Iterable[tuple[str, str]]) -> None:
        """Mark (review key, entry id) pairs reviewed now."""
        with self.database.lock:
            conn = self.database.schema_ready()
            stamp = now_ms()
            with conn:
                conn.executemany(
                    "INSERT OR IGNORE INTO memtui_reviewed (key, entry_id, reviewed_at) VALUES (?, ?, ?)",
                    [(key, entry_id, stamp) for key, entry_id in items])

    def remove(self, keys: Iterable[str]) -> None:
        with self.database.lock:
            conn = self.database.schema_ready()
            with conn:
                conn.executemany("DELETE FROM memtui_reviewed WHERE key = ?", [(k,) for k in keys])


class EntryFlags(Tables):
    """Each entry's own pin and expiry (SPEC §18), keyed by its id like the review state: a
    single entry of a multi-entry file, or a conversation row (Muse's table has no room)."""

    def get(self, entry_id: str) -> dict[str, object] | None:
        """The entry's flags as {"pinned", "expires"}, None when it has none."""
        with self.database.lock:
            if not self.database.exists():
                return None
            conn = self.database.open(create=False)
            if "memtui_entry_flags" not in self.database.tables(conn):
                return None
            row = conn.execute("SELECT pinned, expires FROM memtui_entry_flags WHERE entry_id = ?", (entry_id,)).fetchone()
            conn.commit()  # never hold a read snapshot
            return None if row is None else {"pinned": bool(row[0]), "expires": row[1]}

    def put(self, items: Iterable[tuple[str, str, dict[str, object] | None]]) -> None:
        """Set (entry id, layer, flags) for each item; None or no flag set removes the entry's row."""
        with self.database.lock:
            conn = self.database.schema_ready()
            stamp = now_ms()
            with conn:
                for entry_id, layer, flags in items:
                    if not flags or (not flags.get("pinned") and flags.get("expires") is None):
                        conn.execute("DELETE FROM memtui_entry_flags WHERE entry_id = ?", (entry_id,))
                    else:
                        conn.execute("INSERT OR REPLACE INTO memtui_entry_flags (entry_id, layer, pinned, expires, set_at) "
                                     "VALUES (?, ?, ?, ?, ?)",
                                     (entry_id, layer, int(bool(flags.get("pinned"))), flags.get("expires"), stamp))
