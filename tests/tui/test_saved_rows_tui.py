"""A large conversation layer (here the demo's, as if it were large: `Tuning.rows_in_store`)
stays in the prepared index once the store loads: the pane lists what a store that reads
every row lists, in the same order, filtered the same way, a row Muse adds meanwhile is listed after the reload,
and the inbox is the same."""

from __future__ import annotations

import asyncio
from unittest import mock

import pytest

from memtui.core import actions
from memtui.core.model import Layer
from memtui.core.serve import build_injection
from memtui.core.store import MemoryStore
from memtui.core.store.conversations import Conversations
from memtui.core.store.saved_rows import SavedEntries
from memtui.tui import startup
from memtui.tui.app import MemtuiApp
from memtui.tui.startup import Tuning
from memtui.tui.widgets import EntryPane
from memtui.tui.widgets.entry_pane import pane_rows
from tests.tui.helpers import held_store, wait_until


def listed(app: MemtuiApp) -> list[str]:
    return [e.id for e in app.query_one("#pane-conversation", EntryPane).entries]


def plain_entries(paths) -> tuple:
    own = MemoryStore(paths, index=False)
    own.load()
    try:
        return tuple(startup.pane_order(Layer.CONVERSATION, own.snapshot(Layer.CONVERSATION)))
    finally:
        own.close()


def plain_order(paths) -> list[str]:
    return [e.id for e in plain_entries(paths)]


async def test_a_large_conversation_layer_is_listed_from_the_prepared_index_as_the_store_would_list_it(demo_paths):
    build_injection(demo_paths.workspace, "", home=demo_paths.home)  # the prepared index saved
    app = MemtuiApp(demo_paths, watch=False, tuning=Tuning(rows_in_store=1))
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.inbox is not None, message="store loaded")
        await pilot.pause()
        assert isinstance(app.store.snapshot(Layer.CONVERSATION), SavedEntries)
        want = plain_order(demo_paths)
        assert want and listed(app) == want
        pane = app.query_one("#pane-conversation", EntryPane)
        assert pane.select_id(want[-1]) and pane.highlighted_entry.id == want[-1]

        plain = MemoryStore(demo_paths, index=False)
        plain.load()
        assert [(p.entry, p.provenance) for p in app.inbox] == [(p.entry, p.provenance) for p in actions.inbox(plain)]
        plain.close()

        for text in ("cookie", "sesion cookei", "部署", "zzzz-nothing"):  # the filter: the same rows, groups and order
            saved = pane_rows(Layer.CONVERSATION, app.main.filtered(Layer.CONVERSATION, text)[0])
            with mock.patch.object(app.main, "layer_entries", lambda layer: plain_entries(demo_paths)):
                want_rows = pane_rows(Layer.CONVERSATION, app.main.filtered(Layer.CONVERSATION, text)[0])
            assert [row if isinstance(row, str) else row.id for row in saved] == \
                [row if isinstance(row, str) else row.id for row in want_rows]
        assert any(not isinstance(row, str) for row in pane_rows(Layer.CONVERSATION, app.main.filtered(Layer.CONVERSATION, "cookie")[0]))

        db = Conversations(demo_paths.db_path)  # Muse adds a row (no watcher here: the reload is asked for)
        cid = app.store.snapshot(Layer.CONVERSATION)[0].conversation_id
        new_id = db.add("The staging database pool is capped at 40 connections", conversation_id=cid)
        db.close()
        await asyncio.to_thread(app.store.reload, conversation=True)
        await wait_until(pilot, lambda: new_id in listed(app), message="the new row listed")
        assert listed(app) == plain_order(demo_paths)
        assert app.store.get(new_id).text == "The staging database pool is capped at 40 connections"


@pytest.mark.parametrize("moved", [False, True])
async def test_the_store_takes_the_layer_the_pane_lists_unless_a_row_moved_since_it_was_opened(demo_paths, moved):
    """A large conversation layer: the store takes the prepared index's layer that the pane
    lists, as it is (its file opened once, its pane's order found once), while memtui's
    change counter has not moved since the index was opened; a row Muse adds in between
    has the store take the layer as it is then. Either way it lists what a plain store does."""
    build_injection(demo_paths.workspace, "", home=demo_paths.home)  # the prepared index saved
    app = MemtuiApp(demo_paths, watch=False, tuning=Tuning(rows_in_store=1))
    release = held_store(app)
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            await wait_until(pilot, lambda: app.preview.prepared is not None and listed(app), message="panes listed")
            opened = app.preview.prepared.indexes[Layer.CONVERSATION]
            if moved:
                db = Conversations(demo_paths.db_path)
                cid = next(e.conversation_id for e in plain_entries(demo_paths) if e.conversation_id)
                new_id = db.add("The staging database pool is capped at 40 connections", conversation_id=cid)
                db.close()
            release.set()
            await wait_until(pilot, lambda: app.loaded, message="store loaded")
            await pilot.pause()
            taken = app.store.snapshot(Layer.CONVERSATION)
            assert isinstance(taken, SavedEntries)
            assert (taken.source is opened) is not moved
            assert [e.id for e in taken] == plain_order(demo_paths)
            if moved:
                assert app.store.get(new_id).text == "The staging database pool is capped at 40 connections"
    finally:
        release.set()
