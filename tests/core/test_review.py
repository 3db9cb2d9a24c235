"""The review state (SPEC §12) and `memory.requireReview` in the injection, on real files and a
real muse.db."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter

import pytest

from memtui.core import actions, review
from memtui.core.paths import Paths
from memtui.core.serve import build_injection, inject_from_store
from memtui.core.settings import load_settings
from memtui.core.store import MemoryStore
from memtui.core.store.conversations import Conversations
from memtui.core.store.database import Database
from memtui.core.store.index import ReviewState
from tests.helpers import enable, write

AUTO = "---\nsource: auto\n---\n\n- deploy with blue green switches\n- deploy on fridays never\n- deploy notes kept in the wiki\n"
MANUAL = "- deploy checklist lives in docs\n"


@pytest.fixture
def store(paths: Paths):
    write(paths.user_root / "auto.md", AUTO)
    write(paths.project_root / "manual.md", MANUAL)
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "Deploys", str(paths.workspace))
    for i in range(14):  # more than the conversation layer's max items (10)
        db.add(f"deploy fact number {i}", conversation_id="c1", source="auto" if i % 2 else "manual",
               memory_id=f"row-{i:02d}", created_at=1000 + i, updated_at=1000 + i)
    db.close()
    enable(paths, {"memory": {"requireReview": True}})
    s = actions.open_store(paths)
    yield s
    s.close()


def test_the_key_follows_the_text_and_the_id(store):
    row = store.get("row-01")
    assert review.review_key(row) != review.review_key(type(row)(**{**_fields(row), "text": row.text + "!"}))
    assert review.review_key(row) != review.review_key(type(row)(**{**_fields(row), "id": "row-03"}))
    assert review.needs_review(row) and not review.needs_review(store.get("row-00"))


def _fields(entry) -> dict:
    return {f: getattr(entry, f) for f in entry.__dataclass_fields__}


def test_counted_statuses_agree_with_the_candidates_when_entries_are_held_back(store):
    settings = load_settings(store.paths)
    for query in ("deploy", "deploy fact number 3", "", "nothing shared"):
        result = inject_from_store(store, settings, query)
        assert result.status_counts() == dict(Counter(c.status for c in result.candidates)), query
        held = {c.entry.id for c in result.candidates if c.status == "unreviewed"}
        assert held == {e.id for e in actions.unreviewed(store)}
        assert all("blue green" not in c.line for c in result.included)


def test_the_prepared_index_holds_back_the_same_entries_as_the_store(store):
    settings = load_settings(store.paths)
    for query in ("deploy", "deploy fact number 3"):
        warm = build_injection(store.paths.workspace, query, home=store.paths.home)
        again = build_injection(store.paths.workspace, query, home=store.paths.home)  # from the saved index
        fresh = inject_from_store(store, settings, query)
        assert warm.text == again.text == fresh.text
        assert [(c.entry.id, c.status) for c in again.candidates] == [(c.entry.id, c.status) for c in fresh.candidates]


def test_accepting_lets_an_entry_in_and_an_outside_change_holds_it_back_again(store):
    settings = load_settings(store.paths)
    row = store.get("row-13")
    assert "deploy fact number 13" not in inject_from_store(store, settings, "deploy fact number 13").text
    actions.accept(store, [row])
    assert "- deploy fact number 13" in inject_from_store(store, settings, "deploy fact number 13").text
    with sqlite3.connect(store.paths.db_path) as conn:  # Muse's extractor rewrites the row
        conn.execute("UPDATE memories SET content = ?, updated_at = updated_at + 1 WHERE id = 'row-13'",
                     ["deploy fact number 13, revised"])
    conn.close()
    store.reload(conversation=True)
    result = inject_from_store(store, settings, "deploy fact number 13")
    assert "revised" not in result.text
    assert {c.entry.id: c.status for c in result.candidates}["row-13"] == "unreviewed"


def test_everything_held_back_is_an_empty_result(paths):
    write(paths.user_root / "auto.md", AUTO)
    enable(paths, {"memory": {"requireReview": True}})
    result = build_injection(paths.workspace, "deploy", home=paths.home)
    assert result.text == "" and result.disabled_reason == "empty_result"
    assert Counter(c.status for c in result.candidates) == {"unreviewed": 3}


def test_an_unreadable_review_state_holds_back_every_auto_entry(store, tmp_path):
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database at all" * 100)
    expected = {e.id for e in store.entries() if review.needs_review(e)}
    assert review.held_back(ReviewState(broken), store.entries()) == expected
    assert review.held_back(broken, store.entries()) == expected  # the hook's reader


def test_require_review_must_be_a_boolean(paths):
    paths.global_settings.write_text(json.dumps({"memory": {"requireReview": "yes"}}))
    settings = load_settings(paths)
    assert settings.require_review is False
    assert any("requireReview" in p.message for p in settings.problems)


def test_the_review_table_is_memtuis_own(store):
    actions.accept(store, actions.unreviewed(store)[:1])
    tables = {r[0] for r in Database(store.paths.db_path).ensure_schema().execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "memtui_reviewed" in tables
    fresh = MemoryStore(store.paths)
    fresh.load()
    assert len(actions.unreviewed(fresh)) == len(actions.unreviewed(store))
    fresh.close()


def test_newest_first_orders_as_its_keys_read_together():
    """Newest first, then layer, file, line and id (sorted key by key, the order is the one of
    the keys compared together, ties kept in their given order)."""
    import random

    from memtui.core.model import LAYERS, Entry
    from memtui.core.review import newest_first

    rnd = random.Random(5)
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    for _ in range(200):
        entries = [Entry(id=f"i{rnd.randint(0, 30)}", layer=rnd.choice(["user", "project", "conversation", "other"]),
                         text="t", updated_at=rnd.choice([0.0, 1.5, 2.0, 1e9]),
                         rel_path=rnd.choice(["", "a.md", "b/c.md"]), line_start=rnd.randint(0, 3))
                   for _ in range(rnd.randint(0, 40))]
        want = sorted(entries, key=lambda e: (-e.updated_at, rank.get(e.layer, 9), e.rel_path, e.line_start, e.id))
        assert [id(e) for e in newest_first(entries)] == [id(e) for e in want]
