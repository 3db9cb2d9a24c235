"""Conversation rows -> entries, and the rows another writer changed since a prepared index
was saved (read from memtui's change log, `generation`), with the standard library alone:
the hook takes in a new row without loading the store."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import Entry, Layer
from ..relevance import entry_terms
from .generation import GENERATION_TRIGGERS

if TYPE_CHECKING:  # `conversations` is imported only when rows changed: a warm hook never needs it
    from .conversations import ConversationRow


def conversation_entry(row: ConversationRow, with_terms: bool = True) -> Entry:
    """The row's entry; without `with_terms` its terms are left out (`relevance.terms_of`
    makes them from its text and tags when asked: a loaded store keeps tens of thousands of
    rows, and their terms, a set each, would weigh more than the rows themselves)."""
    return Entry(
        id=row.id, layer=Layer.CONVERSATION, text=row.content, category=row.category, tags=row.tags,
        source=row.source, updated_at=row.updated_at / 1000.0, conversation_id=row.conversation_id,
        conversation_title=row.conversation_title,
        terms=entry_terms(row.content, tags=row.tags) if with_terms else frozenset(),
    )


@dataclass(frozen=True)
class RowChanges:
    """What changed in one workspace's conversation rows between two counter values."""

    gen: int  # the counter now
    ids: frozenset[str]  # the memories to take again (changed, added, deleted or moved)
    rows: tuple[ConversationRow, ...]  # those of them that are this workspace's conversation rows now


_SQL_CHUNK = 500  # ids per `IN (...)`


def generation(db_path: Path) -> int | str:
    """`Conversations.row_generation` read-only (no write, no wait): the counter, or `absent`,
    `empty` or `untracked` (memtui's triggers or tables missing: nothing may be trusted)."""
    if not db_path.is_file():
        return "absent"
    conn = sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True, timeout=1.0)
    try:
        return _generation(conn)
    finally:
        conn.close()


def _generation(conn: sqlite3.Connection) -> int | str:
    names = {r[0]: r[1] for r in conn.execute("SELECT name, sql FROM sqlite_master")}
    if "memories" not in names:
        return "empty"
    if ("memtui_state" not in names or "memtui_row_log" not in names or "conversations" not in names
            or any(names.get(n) != sql for n, sql in GENERATION_TRIGGERS.items())):
        return "untracked"
    row = conn.execute("SELECT value FROM memtui_state WHERE key = 'rows_gen'").fetchone()
    return "untracked" if row is None else int(row[0])


def changes_since(db_path: Path, workspace: Path, since: int, limit: int) -> RowChanges | None:
    """The rows changed since the counter was `since`, all read in one snapshot; None when
    that cannot be told exactly (the log lost some of it: triggers dropped and added back, or
    trimmed) or more than `limit` changes happened (then the layer is rebuilt whole)."""
    if not db_path.is_file():
        return None
    conn = sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True, timeout=1.0, isolation_level=None)
    try:
        conn.execute("BEGIN")  # one read snapshot: the counter, the log and the rows agree
        gen = _generation(conn)
        if not isinstance(gen, int) or gen < since or gen - since > limit:
            return None
        if gen == since:
            return RowChanges(gen, frozenset(), ())
        from .conversations import ROW_COLUMNS, belongs_to, conversation_row

        logged = conn.execute("SELECT count(DISTINCT gen) FROM memtui_row_log WHERE gen > ?", [since]).fetchone()[0]
        if logged != gen - since:  # every move of the counter must be in the log, or something is unknown
            return None
        memories: set[str] = set()
        conversations: set[str] = set()
        for kind, ident in conn.execute("SELECT kind, id FROM memtui_row_log WHERE gen > ?", [since]):
            if ident is not None:
                (memories if kind == "m" else conversations).add(str(ident))
        for chunk in _chunks(conversations):  # a conversation's title or workspace is part of its rows
            marks = ", ".join("?" * len(chunk))
            memories.update(str(r[0]) for r in conn.execute(
                f"SELECT id FROM memories WHERE type = 'conversation' AND conversation_id IN ({marks})", chunk))
        rows: list[ConversationRow] = []
        decided: dict[str | None, bool] = {}
        for chunk in _chunks(memories):
            marks = ", ".join("?" * len(chunk))
            for r in conn.execute(f"SELECT {ROW_COLUMNS}, c.id FROM memories m LEFT JOIN conversations c "
                                  f"ON c.id = m.conversation_id WHERE m.type = 'conversation' AND m.id IN ({marks})",
                                  chunk):
                if r[10] is not None:  # a known conversation: its workspace decides (as `conversation_rows`)
                    verdict = decided.get(r[7])
                    if verdict is None:
                        verdict = decided[r[7]] = belongs_to(r[7], workspace)
                    if not verdict:
                        continue
                rows.append(conversation_row(r))
        conn.execute("COMMIT")
        return RowChanges(gen, frozenset(memories), tuple(rows))
    finally:
        conn.close()


def _chunks(values: Iterable[str]) -> list[list[str]]:
    ordered = sorted(values)
    return [ordered[i:i + _SQL_CHUNK] for i in range(0, len(ordered), _SQL_CHUNK)]
