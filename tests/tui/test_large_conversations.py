"""A conversation layer large enough that the pane pages through it: the TUI starts from the
prepared index and its store takes the pane's entries instead of reading every row again; a
row another writer adds shows in the pane and the preview (taken in alone, never every row
again); the filter lists exactly the matching rows of the whole layer."""

from __future__ import annotations

import json
import sqlite3

from rapidfuzz import fuzz, utils

from memtui.core.serve import build_injection
from memtui.core.store import MemoryStore
from memtui.core.store.conversations import Conversations
from memtui.tui.app import MemtuiApp
from memtui.tui.main_screen import FILTER_CUTOFF
from memtui.tui.widgets import EntryPane
from tests.tui.conftest import wait_until

ROWS = 1500
TOPICS = ["deploy", "cache", "billing", "search", "auth"]


def many_rows(paths) -> list[str]:
    """ROWS conversation memories of the workspace (in 30 conversations), as Muse writes them."""
    db = Conversations(paths.db_path)
    for c in range(30):
        db.ensure_conversation(f"big-{c}", f"Session {c:02d}", str(paths.workspace))
    db.close()
    texts = [f"{TOPICS[i % len(TOPICS)]} note {i:04d}: the {TOPICS[(i * 7) % len(TOPICS)]} step runs after review"
             for i in range(ROWS)]
    with sqlite3.connect(paths.db_path) as conn:
        conn.executemany(
            "INSERT INTO memories (id, type, category, content, tags, source, conversation_id, created_at, updated_at) "
            "VALUES (?, 'conversation', 'knowledge', ?, ?, 'auto', ?, ?, ?)",
            [(f"big-row-{i:04d}", text, json.dumps(["bulk"]), f"big-{i % 30}", 1_700_000_000_000 + i,
              1_700_000_000_000 + i) for i, text in enumerate(texts)])
    conn.close()
    return texts


def pane(app: MemtuiApp) -> EntryPane:
    return app.query_one("#pane-conversation", EntryPane)


async def test_a_row_another_writer_adds_shows_in_the_pane_and_the_preview(demo_paths, monkeypatch):
    many_rows(demo_paths)
    build_injection(demo_paths.workspace, "", home=demo_paths.home)  # `memtui preview` saved the index
    own = MemoryStore(demo_paths, index=False)
    own.load()
    total = len(own.snapshot("conversation"))
    own.close()
    app = MemtuiApp(demo_paths, watch=True)
    full_reads: list[int] = []
    rows = app.store.conversations.rows
    monkeypatch.setattr(app.store.conversations, "rows", lambda ws: full_reads.append(1) or rows(ws))
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None, timeout=30, message="loaded")
        assert len(pane(app).entries) == total and not full_reads  # the panes' entries, taken by the store
        with sqlite3.connect(demo_paths.db_path) as conn:  # Muse writes a row while the app runs
            conn.execute("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, "
                         "created_at, updated_at) VALUES ('late-row', 'conversation', 'knowledge', "
                         "'zanzibar tariffs are recomputed nightly', '[]', 'auto', 'big-3', 1800000000000, "
                         "1800000000000)")
        conn.close()
        await wait_until(pilot, lambda: any(e.id == "late-row" for e in pane(app).entries), timeout=20,
                         message="the new row listed")
        assert len(pane(app).entries) == total + 1 and not full_reads
        assert pane(app).border_title.endswith(f"({total + 1})")
        query = app.main.query_one("#query")
        query.value = "zanzibar tariffs"
        await wait_until(pilot, lambda: app.last_result is not None and app.last_result.query == "zanzibar tariffs",
                         message="the preview of the new row")
        assert any(c.id == "late-row" for c in app.last_result.included)
        assert app.last_result.text == build_injection(demo_paths.workspace, "zanzibar tariffs",
                                                       home=demo_paths.home).text


async def test_the_filter_lists_exactly_the_matching_rows_of_a_large_layer(demo_paths):
    texts = many_rows(demo_paths)
    build_injection(demo_paths.workspace, "", home=demo_paths.home)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None, timeout=30, message="loaded")
        total = len(pane(app).entries)
        assert total >= ROWS
        app.main.query_one("#filter").value = "note 0777"  # fuzzy: the closest first, then its near neighbours
        await wait_until(pilot, lambda: bool(pane(app).entries) and pane(app).entries[0].text == texts[777],
                         message="the filtered rows")
        shown = pane(app).entries
        own = MemoryStore(demo_paths, index=False)
        own.load()
        close = {e.id for e in own.snapshot("conversation")  # the whole layer, not a page of it
                 if fuzz.partial_ratio("note 0777", utils.default_process(
                     f"{e.text} {e.section} {' '.join(e.tags)} {e.conversation_title}")) >= FILTER_CUTOFF}
        own.close()
        assert 1 < len(shown) < total and {e.id for e in shown} == close
        assert pane(app).border_title.endswith(f"({len(shown)} of {total})")
        app.main.query_one("#filter").value = "qqqq zzzz"
        await wait_until(pilot, lambda: not pane(app).entries, message="nothing matches")
        assert pane(app).border_title.endswith(f"(0 of {total})")
        app.main.query_one("#filter").value = ""
        await wait_until(pilot, lambda: len(pane(app).entries) == total, message="every row again")
        pane(app).focus()
        await pilot.press("end")  # the last row, pages below
        last = pane(app).highlighted_entry
        assert last is not None and last.id == pane(app).entries[-1].id
        assert pane(app).scroll_offset.y > 0
