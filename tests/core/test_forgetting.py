"""Forgetting you can see (SPEC §18): strength and level, `expires`, pins, the forecast and the
private mode, on real files, a real muse.db and a fixed clock."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from memtui.core import actions, doctor, history
from memtui.core import forgetting as fg
from memtui.core import forgetting_actions as fa
from memtui.core.model import CandidateStatus
from memtui.core.paths import Paths
from memtui.core.serve import build_injection, inject_from_store
from memtui.core.settings import load_settings
from memtui.core.store.conversations import Conversations
from tests.helpers import enable, write


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


NOW = at("2026-11-27T12:00:00")
NOTES = "---\nupdatedAt: 2026-11-01\n---\n\n- Use vitest, not jest\n- Prefer tabs over spaces\n"
TEMP = "---\nupdatedAt: 2026-11-20\nexpires: 2026-11-30\n---\n\n- the staging server is down this week\n"


@pytest.fixture
def paths_with_memories(paths: Paths) -> Paths:
    write(paths.user_root / "notes.md", NOTES)
    write(paths.project_root / "temp.md", TEMP)
    return paths


# ---------------------------------------------------------------------- the rules
@pytest.mark.parametrize(("strength", "level"), [(1.0, "active"), (0.7, "active"), (0.69, "decaying"), (0.3, "decaying"),
                                                 (0.29, "to_compress"), (0.1, "to_compress"), (0.0999, "to_evict"),
                                                 (0.0, "to_evict")])
def test_levels_follow_the_floors(strength, level):
    assert fg.level_of(strength) == level


def test_strength_halves_every_half_life_and_a_pin_stops_it():
    last = at("2026-11-01T00:00:00")
    assert fg.strength(last, last + 30 * fg.DAY, 30) == pytest.approx(0.5)
    assert fg.strength(last, last + 60 * fg.DAY, 30) == pytest.approx(0.25)
    assert fg.strength(last, last - fg.DAY, 30) == 1.0  # a future update is no negative age
    assert fg.strength(last, last + 600 * fg.DAY, 30, pinned=True) == 1.0


def test_level_changes_fall_at_the_floors():
    last = at("2026-11-01T00:00:00")
    changes = fg.level_changes(last, last, last + 400 * fg.DAY, 30)
    assert [level for _, level in changes] == ["decaying", "to_compress", "to_evict"]
    for moment, level in changes:  # just after each moment the strength is at the new level
        assert fg.level_of(fg.strength(last, moment + 1, 30)) == level
        assert fg.level_of(fg.strength(last, moment - 1, 30)) != level


@pytest.mark.parametrize(("value", "expected"), [
    (date(2026, 11, 30), "2026-12-01T00:00:00+00:00"),  # a date: the end of that day
    ("2026-11-30", "2026-12-01T00:00:00+00:00"),
    (datetime(2026, 11, 30, 9, 30), "2026-11-30T09:30:00+00:00"),  # a time without a zone is UTC
    ("2026-11-30T09:30:00+02:00", "2026-11-30T07:30:00+00:00"),
    ("next week", None), (7, None), (None, None)])
def test_frontmatter_expiry_values(value, expected):
    found = fg.expiry_value(value)
    assert (None if found is None else fg.iso(found)) == expected


def test_durations_and_expiry_arguments():
    assert fg.parse_duration("7d") == 7 * fg.DAY and fg.parse_duration("30m") == 1800
    assert fg.parse_duration("2w") == 14 * fg.DAY and fg.parse_duration("1h") == 3600
    assert fg.parse_duration("soon") is None and fg.parse_duration("0h") is None
    assert fg.parse_expiry("7d", NOW) == NOW + 7 * fg.DAY
    assert fg.iso(fg.parse_expiry("2026-12-24", NOW)) == "2026-12-25T00:00:00+00:00"
    with pytest.raises(ValueError, match="neither a duration"):
        fg.parse_expiry("someday", NOW)


# ---------------------------------------------------------------------- expiry in the injection
def test_a_file_past_its_expires_date_is_left_out_as_expired(paths_with_memories):
    paths = paths_with_memories
    enable(paths)
    before = build_injection(paths.workspace, "staging server", home=paths.home, now=at("2026-11-30T23:59:00"))
    assert "staging server" in before.text
    after = build_injection(paths.workspace, "staging server", home=paths.home, now=at("2026-12-01T00:00:00"))
    assert "staging server" not in after.text
    statuses = {c.source: c.status for c in after.candidates}
    assert statuses["temp.md:6"] == CandidateStatus.EXPIRED
    assert after.status_counts() == {"included": 2, "expired": 1}
    assert json.loads(after.to_json())["candidates"][-1]["status"] == "expired"


def test_an_entry_of_its_own_expires_and_the_change_is_undone(paths_with_memories):
    paths = paths_with_memories
    enable(paths)
    store = actions.open_store(paths)
    try:
        tabs = next(e for e in store.entries() if "tabs" in e.text)
        fa.set_expiry(store, [tabs], at("2026-11-28T00:00:00"))
        later = inject_from_store(store, load_settings(paths), "tabs", now=at("2026-11-29T00:00:00"))
        assert {c.source: c.status for c in later.candidates}["notes.md:6"] == "expired"
        assert "vitest" in later.text and "tabs" not in later.text  # its neighbour in the file is not
        actions.undo(store)
        again = inject_from_store(store, load_settings(paths), "tabs", now=at("2026-11-29T00:00:00"))
        assert "tabs" in again.text
    finally:
        store.close()


def test_a_conversation_row_expires_through_memtuis_table_alone(paths: Paths):
    enable(paths)
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "Deploys", str(paths.workspace))
    db.add("deploy freeze this week", conversation_id="c1", source="manual", memory_id="row-1",
           created_at=1000, updated_at=1000)
    db.close()
    store = actions.open_store(paths)
    try:
        fa.set_expiry(store, [store.get("row-1")], at("2026-11-28T00:00:00"))
    finally:
        store.close()
    result = build_injection(paths.workspace, "deploy freeze", home=paths.home, now=at("2026-11-29T00:00:00"))
    assert result.count == 0 and [c.status for c in result.candidates] == ["expired"]
    import sqlite3

    conn = sqlite3.connect(paths.db_path)  # Muse's table is as it was: no column added
    assert [r[1] for r in conn.execute("PRAGMA table_info(memories)")].count("expires") == 0
    conn.close()


def test_nothing_set_changes_nothing_of_the_injection(paths_with_memories):
    """With no expiry passed, no pin, no decay and no private mode, §5's output is the same
    byte for byte, whether the entry-flags table exists or not."""
    paths = paths_with_memories
    write(paths.project_root / "temp.md", TEMP.replace("expires: 2026-11-30\n", ""))
    enable(paths)
    plain = build_injection(paths.workspace, "vitest staging", home=paths.home).to_json()
    store = actions.open_store(paths)
    try:  # the table made, a row set and removed again
        tabs = next(e for e in store.entries() if "tabs" in e.text)
        fa.pin(store, [tabs])
        fa.pin(store, [tabs], on=False)
    finally:
        store.close()
    again = build_injection(paths.workspace, "vitest staging", home=paths.home).to_json()
    assert _without_timing(again) == _without_timing(plain)
    assert "strength" not in again and "level" not in again


def _without_timing(text: str) -> dict:
    return {k: v for k, v in json.loads(text).items() if k != "retrieval_ms"}


# ---------------------------------------------------------------------- levels and pins
def test_moving_now_forward_changes_levels_and_a_pin_keeps_one_active(paths_with_memories):
    paths = paths_with_memories
    enable(paths, {"memory": {"decay": {"halfLifeDays": 30}}})
    store = actions.open_store(paths)
    try:
        settings = load_settings(paths)
        early = fa.entry_vitals(store, settings, at("2026-11-02T00:00:00"))
        late = fa.entry_vitals(store, settings, at("2027-03-01T00:00:00"))
        vitest = next(e for e in store.entries() if "vitest" in e.text)
        tabs = next(e for e in store.entries() if "tabs" in e.text)
        assert early[vitest.id].level == "active" and late[vitest.id].level == "to_evict"
        change = fa.pin(store, [tabs]).change
        assert change is not None
        pinned = fa.entry_vitals(store, settings, at("2027-03-01T00:00:00"))
        assert pinned[tabs.id].strength == 1.0 and pinned[tabs.id].level == "active" and pinned[tabs.id].pinned
        assert fa.pin(store, [tabs]).notes == ["notes.md:6 is already pinned"]
        finds = doctor.forgetting(store, settings, store.entries(), now=at("2027-03-01T00:00:00"))
        assert {(f.kind, f.source) for f in finds} == {("to_evict", "notes.md:5"), ("expired", "temp.md:6")}
        actions.undo(store)
        assert fa.entry_vitals(store, settings, at("2027-03-01T00:00:00"))[tabs.id].level == "to_evict"
    finally:
        store.close()


def test_preview_json_gives_each_candidate_its_strength_and_a_pin_orders_it_first(paths_with_memories):
    paths = paths_with_memories
    enable(paths, {"memory": {"decay": {"halfLifeDays": 10}}})
    later = at("2026-11-25T00:00:00")
    data = json.loads(build_injection(paths.workspace, "prefer tabs vitest", home=paths.home, now=later).to_json())
    by_source = {c["source"]: c for c in data["candidates"]}
    assert by_source["notes.md:5"]["level"] == "to_compress" and by_source["notes.md:5"]["strength"] == pytest.approx(
        0.5 ** 2.4, abs=1e-4)
    assert by_source["temp.md:6"]["level"] == "active"
    store = actions.open_store(paths)
    try:
        fa.pin(store, [next(e for e in store.entries() if "vitest" in e.text)])
    finally:
        store.close()
    data = json.loads(build_injection(paths.workspace, "prefer tabs vitest", home=paths.home, now=later).to_json())
    assert {c["source"]: c["strength"] for c in data["candidates"]}["notes.md:5"] == 1.0
    users = [c["source"] for c in data["candidates"] if c["layer"] == "user"]
    assert users[0] == "notes.md:5"  # its decayed score no longer falls behind


def test_recent_use_raises_strength(paths_with_memories):
    paths = paths_with_memories
    enable(paths, {"memory": {"decay": {"halfLifeDays": 30}}})
    used = build_injection(paths.workspace, "vitest", home=paths.home)
    history.record(paths.db_path, used, paths.workspace, at_ms=int(at("2026-11-26T00:00:00") * 1000))
    store = actions.open_store(paths)
    try:
        vit = fa.entry_vitals(store, load_settings(paths), NOW)
        vitest = next(e for e in store.entries() if "vitest" in e.text)
        assert vit[vitest.id].strength == pytest.approx(0.5 ** (1.5 / 30), abs=1e-6)  # injected yesterday
    finally:
        store.close()


# ---------------------------------------------------------------------- the forecast
def test_the_forecast_lists_level_changes_expiries_and_the_injections_they_touch(paths_with_memories):
    paths = paths_with_memories
    enable(paths, {"memory": {"decay": {"halfLifeDays": 30}}})
    used = build_injection(paths.workspace, "staging", home=paths.home)
    history.record(paths.db_path, used, paths.workspace, at_ms=int(at("2026-11-26T00:00:00") * 1000))
    store = actions.open_store(paths)
    try:
        settings = load_settings(paths)
        week = fa.forecast(store, settings, 7, NOW)
        assert [(i["source"], i["then"]) for i in week["entries"]] == [("temp.md:6", "expired")]
        assert week["messages"] and week["messages"][0]["left_out"] == 1
        assert {c["source"] for c in week["messages"][0]["changes"]} == {"temp.md:6"}
        month = fa.forecast(store, settings, 30, NOW)  # injected on the 26th: decaying from 15.4 days on
        assert {(i["source"], i["then"]) for i in month["entries"]} == {
            ("temp.md:6", "expired"), ("notes.md:5", "decaying"), ("notes.md:6", "decaying")}
        assert month["entries"][1]["changes"][0]["at"].startswith("2026-12-11")
        later = fa.forecast(store, settings, 7, at("2027-01-12T00:00:00"))  # moving now changes the answer
        assert {(i["source"], i["then"]) for i in later["entries"]} == {
            ("notes.md:5", "to_compress"), ("notes.md:6", "to_compress")}
    finally:
        store.close()


# ---------------------------------------------------------------------- private mode
def test_private_mode_injects_and_records_nothing_and_ends_by_itself(paths_with_memories):
    paths = paths_with_memories
    enable(paths, {"other": {"kept": [1, 2]}})
    until = fa.private_on(paths, 3600)
    settings = load_settings(paths)
    assert settings.private and fa.private_state(settings)["until"] == fg.iso(until)
    raw = json.loads(paths.global_settings.read_text())
    assert raw["other"] == {"kept": [1, 2]} and raw["memory"]["privateUntil"] == fg.iso(until)
    result = build_injection(paths.workspace, "vitest", home=paths.home, record=True)
    assert result.text == "" and result.disabled_reason == "private" and "private" in result.summary()
    assert history.records(paths.db_path) == []
    fa.set_private(paths, at("2020-01-01T00:00:00"))  # a time already past: over by itself
    assert not load_settings(paths).private
    assert build_injection(paths.workspace, "vitest", home=paths.home).count == 3
    assert fa.private_off(paths) and "privateUntil" not in json.loads(paths.global_settings.read_text())["memory"]
    assert not fa.private_off(paths)


def test_a_bad_private_until_is_reported_and_private_mode_stays_off(paths: Paths):
    enable(paths, {"memory": {"privateUntil": "tomorrow"}})
    settings = load_settings(paths)
    assert not settings.private
    assert any("memory.privateUntil" in p.message for p in settings.problems)


def test_memtuis_own_edit_keeps_the_pin_and_an_edit_of_a_neighbour_too(paths_with_memories):
    paths = paths_with_memories
    enable(paths)
    store = actions.open_store(paths)
    try:
        tabs = next(e for e in store.entries() if "tabs" in e.text)
        fa.pin(store, [tabs])
        vitest = next(e for e in store.entries() if "vitest" in e.text)
        actions.edit(store, vitest, "Use vitest, never jest")  # a neighbour: the pin's key is untouched
        assert fg.read_flags(paths.db_path)[tabs.id].pinned
        new = actions.edit(store, tabs, "Prefer tabs over spaces, always")
        assert new is not None and new.id != tabs.id and fg.read_flags(paths.db_path)[new.id].pinned
    finally:
        store.close()
