"""Conversation rows -> entries, and the rows another writer changed since a prepared index
was saved (read from memtui's change log, `generation`), with the standard library alone:
the hook takes in a new row without loading the store."""

from __future__ import annotations

import sqlite3
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import repeat
from operator import neg
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..injection import LineMaker
from ..model import IMPORTANCE_RANK, Entry, Layer
from ..relevance import entry_terms, entry_terms_many
from .candidate_json import json_pieces_many
from .entry_rows import ENTRY_FIELDS, IMPORTANCE_AT, LAYER_AT, STATUS_AT, SavedMade, entry_row
from .generation import GENERATION_TRIGGERS
from .layer_index import rank_groups
from .line_cache import LineCache
from .pane_order import PANE_OF_ROW, pane_state

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


# The columns of `conversations.ROW_COLUMNS` by position (rows are read as plain tuples), and the
# conversation's own id after them where `changes_since` reads it (NULL: an unknown conversation).
(ID, CATEGORY, CONTENT, TAGS, SOURCE, CONVERSATION_ID, TITLE, WORKSPACE, CREATED_AT, UPDATED_AT,
 CONVERSATION_KNOWN) = range(11)

# An entry row (`entry_rows.entry_row`) of a conversation entry as `conversation_entry` makes it:
# the fields it sets from the row, each a column of `conversation_state`, and Entry's defaults.
_ROW_TEMPLATE = entry_row(Entry(id="", layer=Layer.CONVERSATION, text=""))


def conversation_columns(raw: Sequence[tuple[Any, ...]]) -> dict[str, list[Any]]:
    """The rows `raw` as read (`conversations.ROW_COLUMNS`) as the columns of their entries'
    fields that come from the row (`conversation_entry` of `conversation_row`), converted
    column by column; a value `conversation_row` refuses raises what it raises."""
    from .conversations import conversation_row, parse_tags

    n = len(raw)
    cols: list[tuple[Any, ...]] = list(zip(*raw)) if n else [()] * (UPDATED_AT + 1)  # every column, none read
    shared: dict[str, str] = {}  # a conversation's title, id, the categories and sources: one string each
    share = shared.setdefault

    def text(col: tuple[Any, ...], common: bool = False) -> list[str]:  # `str(value or "")`
        out = [v if type(v) is str else str(v or "") for v in col]
        return list(map(share, out, out)) if common else out

    def number(col: tuple[Any, ...]) -> list[int]:  # `int(value or 0)`
        return [v if type(v) is int else int(v or 0) for v in col]

    try:
        number(cols[CREATED_AT])  # not an entry field, but a row that has none readable is refused
        return {"id": [v if type(v) is str else str(v) for v in cols[ID]], "text": text(cols[CONTENT]),
                "category": text(cols[CATEGORY], True), "tags": list(map(parse_tags, cols[TAGS])),
                "source": text(cols[SOURCE], True),
                "conversation_id": [v if v is None else share(v, v)
                                    for v in (v if v is None or type(v) is str else str(v) for v in cols[CONVERSATION_ID])],
                "conversation_title": text(cols[TITLE], True), "updated_at": [v / 1000.0 for v in number(cols[UPDATED_AT])]}
    except Exception:
        for r in raw:  # the error of the first row that fails, as reading them one by one gives it
            conversation_row(r)
        raise


def conversation_state(column: dict[str, list[Any]], maker: LineMaker,
                       lines: LineCache | None = None) -> tuple[dict[str, Any], list[list[Any]], dict[str, bytes]]:
    """The conversation layer's saved state (`LayerIndex.state`: its core, its per-position
    lists and its postings) of the rows whose `conversation_columns` are `column`, made in
    bulk, without an entry per row: what `LayerIndex.from_entries` of their entries and its
    `state(maker)` give. `lines` holds lines made before (by text), taken instead of making
    them again."""
    n = len(column["id"])
    # the base order (`injection.base_key`): every row's importance is the default, so updated_at
    # descending, then the id
    keys = base_keys(column)
    order = sorted(range(n), key=keys.__getitem__)
    column = {name: list(map(values.__getitem__, order)) for name, values in column.items()}
    rows, shown, made, frags = conversation_lists(column, maker, lines)
    sets = entry_terms_many(column["text"], column["tags"])
    postings: defaultdict[str, list[int]] = defaultdict(list)
    for i, terms in enumerate(sets):
        for term in terms:
            postings[term].append(i)
    core = conversation_core(maker, n)
    core["pane"] = pane_state(core["layer"], list(map(PANE_OF_ROW, rows)))  # the TUI's pane order
    return core, [rows, shown, made, frags], {t: array("i", p).tobytes() for t, p in postings.items()}


def base_keys(column: dict[str, list[Any]]) -> list[tuple[float, str]]:
    """Each row's key of the base order (`injection.base_key` of its entry: every row's
    importance is the default, so updated_at descending, then the id)."""
    return list(zip(map(neg, column["updated_at"]), column["id"]))


def conversation_lists(column: dict[str, list[Any]], maker: LineMaker,
                       lines: LineCache | None = None) -> tuple[list[Any], list[Any], list[SavedMade], list[tuple[str, str]]]:
    """The per-position lists of the saved state (`LayerIndex.state`'s rows, shown, made and
    frags) of the rows whose `conversation_columns` are `column`, in the order they are given."""
    rows, shown = conversation_shown(column)
    made, frags = conversation_made(column["text"], shown, maker, lines)
    return rows, shown, made, frags


def conversation_shown(column: dict[str, list[Any]]) -> tuple[list[Any], list[Any]]:
    """`conversation_lists`' rows and shown: what does not depend on the lines."""
    n = len(column["id"])
    ids, updated = column["id"], column["updated_at"]
    rows = list(zip(*(column[name] if name in column else repeat(default, n)
                      for name, default in zip(ENTRY_FIELDS, _ROW_TEMPLATE))))
    importance = _ROW_TEMPLATE[IMPORTANCE_AT]
    isos = list(map(datetime.isoformat, map(datetime.fromtimestamp, updated, repeat(UTC))))
    refs = [f"conversation:{c or ''}/{i}" for c, i in zip(column["conversation_id"], ids)]
    return rows, list(zip(ids, refs, repeat(importance, n), isos))


def conversation_made(texts: Sequence[str], shown: Sequence[Any], maker: LineMaker,
                      lines: LineCache | None = None) -> tuple[list[SavedMade], list[tuple[str, str]]]:
    """`conversation_lists`' made and frags: each row's line (from its text) and its JSON
    pieces (from its line and what it shows). `lines` holds lines made before (by text)."""
    made = cast(list[SavedMade], list(map(tuple, (lines or LineCache()).make_many(maker, texts))))  # plain, for marshal
    return made, json_pieces_many(_ROW_TEMPLATE[LAYER_AT], shown, made)


def conversation_core(maker: LineMaker, n: int) -> dict[str, Any]:
    """The saved state's core (`LayerIndex.state` but the lists, postings and pane) of `n` rows."""
    importance = _ROW_TEMPLATE[IMPORTANCE_AT]
    rank = [IMPORTANCE_RANK.get(importance, 1)] * n
    assert _ROW_TEMPLATE[STATUS_AT] != "archived"  # every row active: no archived terms
    return {"layer": _ROW_TEMPLATE[LAYER_AT], "n_active": n, "rank": array("b", rank).tobytes(),
            "groups": rank_groups(rank, n), "archived_terms": [], "key": list(maker.key), "size": n,
            "scoped": [],  # a conversation memory has no scope (SPEC §16)
            "expiring": {},  # a row's own expiry is in memtui's table, not in the row (SPEC §18)
            "focus": {"pinned": [], "covers": True}}  # a row is never pinned by a file; its terms are its text's and tags'


@dataclass(frozen=True)
class RowChanges:
    """What changed in one workspace's conversation rows between two counter values."""

    gen: int  # the counter now
    ids: frozenset[str]  # the memories to take again (changed, added, deleted or moved)
    rows: tuple[ConversationRow, ...]  # those of them that are this workspace's conversation rows now


_SQL_CHUNK = 500  # ids per `IN (...)`


LOCK_PROBE_S = 0.1  # how long a prompt's injection waits to learn whether another writer holds muse.db


def locked(db_path: Path, wait: float = LOCK_PROBE_S) -> bool:
    """Whether another writer holds muse.db so that it cannot even be read now (a rollback-journal
    database under `BEGIN EXCLUSIVE`; in WAL mode readers always read): read-only, waiting at
    most `wait` seconds. False when there is no database or it fails for another reason (the
    reader that follows says that one)."""
    if not db_path.is_file():
        return False
    try:
        conn = sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True, timeout=wait)
    except sqlite3.Error:
        return False
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return False
    except sqlite3.OperationalError as exc:
        return "locked" in str(exc).lower() or "busy" in str(exc).lower()
    except sqlite3.Error:
        return False
    finally:
        conn.close()


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
        from .conversations import ROW_COLUMNS, belongs_to, conversation_row, fetch_text_rows

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
            for r in fetch_text_rows(conn, f"SELECT {ROW_COLUMNS}, c.id FROM memories m LEFT JOIN conversations c "
                                     f"ON c.id = m.conversation_id WHERE m.type = 'conversation' AND m.id IN ({marks})",
                                     chunk)[1]:
                if r[CONVERSATION_KNOWN] is not None:  # a known conversation: its workspace decides (as `conversation_rows`)
                    verdict = decided.get(r[WORKSPACE])
                    if verdict is None:
                        verdict = decided[r[WORKSPACE]] = belongs_to(r[WORKSPACE], workspace)
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
