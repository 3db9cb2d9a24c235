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
from tests.tui.helpers import held_store, wait_until

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


def eager_rows(entries) -> list:
    """The conversation pane's rows as the pane listed them before rows were looked up lazily:
    each conversation's header, then its entries (in the order they come)."""
    groups: dict[str, list] = {}
    for e in entries:
        groups.setdefault(e.conversation_title, []).append(e)
    rows: list = []
    for title, group in groups.items():
        rows.append(f"▌{title or '(no conversation)'} ({len(group)})")
        rows += group
    return rows


async def test_the_pane_makes_only_the_entries_it_shows_until_the_store_loads(demo_paths):
    """The conversation pane lists the prepared index's saved order and groups, making an entry
    for the rows on screen alone; the rows, headers and highlight are those of the whole list."""
    from memtui.tui.startup import PaneListing, pane_order

    many_rows(demo_paths)
    build_injection(demo_paths.workspace, "", home=demo_paths.home)
    own = MemoryStore(demo_paths, index=False)
    own.load()
    ordered = pane_order("conversation", own.snapshot("conversation"))
    own.close()
    app = MemtuiApp(demo_paths, watch=False)
    release = held_store(app)  # the store loads once the test lets it
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.ready.is_set() and app.last_result is not None, message="first preview")
        listing = pane(app).entries
        assert isinstance(listing, PaneListing) and len(listing) == len(ordered) and not app.loaded
        index = app.prepared.indexes["conversation"]
        made = [pos for pos, e in enumerate(index._entries) if e is not None]
        assert 0 < len(made) <= pane(app).size.height  # a screenful (the highlighted one among them)
        assert listing._all is None  # and no list of every entry
        rows = pane(app).rows
        want = eager_rows(ordered)
        assert len(rows) == len(want) and len(want) > len(ordered)
        for row in [0, 1, 2, 50, 51, 52, len(want) // 2, len(want) - 2, len(want) - 1]:
            assert rows[row] == want[row], row  # an entry or a header, wherever it is
            assert rows.is_header(row) == isinstance(want[row], str)
        assert pane(app).highlighted_entry == ordered[0]
        pane(app).focus()
        await pilot.press("end")
        assert pane(app).highlighted_entry == ordered[-1] and pane(app).cursor == len(want) - 1
        assert pane(app).select_id(ordered[700].id) and pane(app).highlighted_entry == ordered[700]
        assert rows[pane(app).cursor] == ordered[700]
        release.set()
        await wait_until(pilot, lambda: app.loaded, timeout=30, message="the store loaded")
        await pilot.pause()
        assert list(pane(app).entries) == ordered and pane(app).highlighted_entry == ordered[700]
