"""Injection history (SPEC §11): real SQLite files in tmp_path, real injections."""

from __future__ import annotations

import sqlite3

import pytest

from memtui.core import history
from memtui.core.serve import build_injection
from tests.helpers import enable, write

PREFS = "---\ntype: preference\nimportance: high\n---\n\n## Testing\n\n- Use vitest, not jest\n- Prefer describe/it style\n"
CONTEXT = "- Pool size zebracorn is too small under load\n- Use PostgreSQL + pgbouncer\n"
QUERY = "how should I configure quokkaprompt vitest"
DAY = history.DAY_MS


@pytest.fixture
def worked(paths):
    write(paths.user_root / "preferences.md", PREFS)
    write(paths.project_root / "context.md", CONTEXT)
    enable(paths)
    return paths


def db_bytes(paths) -> bytes:
    """The database as it is on disk, WAL and shared-memory files included."""
    return b"".join(p.read_bytes() for p in paths.home.glob("muse.db*"))


def test_a_recorded_injection_holds_counts_ids_and_sources_only(worked):
    result = build_injection(worked.workspace, QUERY, home=worked.home, record=True)
    assert result.count == 4 and not result.errors
    [rec] = history.records(worked.db_path)
    assert (rec.workspace, rec.count, rec.chars, rec.tokens, rec.truncated, rec.disabled_reason) == (
        str(worked.workspace), result.count, result.chars, result.tokens, result.truncated, None)
    assert rec.retrieval_ms == pytest.approx(result.retrieval_ms, abs=0.001)
    assert list(rec.entries) == [(c.entry.id, c.entry.source_ref) for c in result.included]
    assert [s for _, s in rec.entries] == ["preferences.md:8", "preferences.md:9", "context.md:1", "context.md:2"]
    raw = db_bytes(worked)
    for secret in ("quokkaprompt", "zebracorn", "vitest, not jest", "pgbouncer", "describe/it"):
        assert secret.encode() not in raw


def test_preview_does_not_record_and_memory_off_writes_nothing(worked, paths):
    build_injection(worked.workspace, QUERY, home=worked.home)
    assert not worked.db_path.exists()
    worked.global_settings.write_text('{"memoryEnabled": false}', encoding="utf-8")
    result = build_injection(worked.workspace, QUERY, home=worked.home, record=True)
    assert result.disabled_reason == "switch_off"
    assert not worked.db_path.exists()
    assert history.records(worked.db_path) == []


def test_nothing_injected_is_still_recorded_with_its_reason(worked):
    worked.global_settings.write_text('{"memoryEnabled": true, "memory": {"budget": {"total": 5}}}', encoding="utf-8")
    build_injection(worked.workspace, QUERY, home=worked.home, record=True)
    [rec] = history.records(worked.db_path)
    assert (rec.count, rec.entries, rec.disabled_reason) == (0, (), "over_budget")


def test_records_newest_first_with_limit_and_workspace(worked, tmp_path):
    result = build_injection(worked.workspace, QUERY, home=worked.home)
    base = history.now_ms()
    for i in range(4):
        assert history.record(worked.db_path, result, worked.workspace, at_ms=base + i).ok
    other = tmp_path / "other-ws"
    assert history.record(worked.db_path, result, other, at_ms=base + 10).ok
    assert [r.time_ms for r in history.records(worked.db_path)] == [base + 10, base + 3, base + 2, base + 1, base]
    assert [r.time_ms for r in history.records(worked.db_path, limit=2)] == [base + 10, base + 3]
    assert [r.time_ms for r in history.records(worked.db_path, workspace=worked.workspace, limit=1)] == [base + 3]
    assert history.records(worked.db_path, workspace=tmp_path / "nowhere") == []
    d = history.records(worked.db_path, limit=1)[0].as_dict()
    assert d["workspace"] == str(other) and d["entries"][0] == {"id": result.included[0].entry.id,
                                                                 "source": "preferences.md:8"}


def test_stats_count_and_last_time_per_entry(worked, tmp_path):
    full = build_injection(worked.workspace, QUERY, home=worked.home)
    worked.global_settings.write_text('{"memoryEnabled": true, "memory": {"budget": {"user": 0}}}', encoding="utf-8")
    project_only = build_injection(worked.workspace, QUERY, home=worked.home)
    assert 0 < project_only.count < full.count
    base = history.now_ms()
    history.record(worked.db_path, full, worked.workspace, at_ms=base + 1_000)
    history.record(worked.db_path, project_only, worked.workspace, at_ms=base + 2_000)
    history.record(worked.db_path, full, tmp_path / "elsewhere", at_ms=base + 3_000)
    got = history.stats(worked.db_path, worked.workspace)
    user_ids = {c.entry.id for c in full.included if c.entry.layer == "user"}
    project_ids = {c.entry.id for c in project_only.included}
    assert set(got) == user_ids | project_ids
    assert all(got[i][0] == 1 for i in user_ids) and all(got[i][0] == 2 for i in project_ids)
    assert all(got[i][1] > got[j][1] for i in project_ids for j in user_ids)
    assert all(n == 2 for n, _ in (history.stats(worked.db_path)[i] for i in user_ids))
    assert history.stats(worked.db_path, worked.workspace, since_ms=base + 1_500) == {
        i: (1, base + 2_000) for i in project_ids}


def test_old_records_are_pruned_on_record(worked, monkeypatch):
    result = build_injection(worked.workspace, QUERY, home=worked.home)
    now = history.now_ms()
    history.record(worked.db_path, result, worked.workspace, at_ms=now - 91 * DAY)
    history.record(worked.db_path, result, worked.workspace, at_ms=now - 89 * DAY)
    assert len(history.records(worked.db_path)) == 2  # pruning is relative to the new record's time
    history.record(worked.db_path, result, worked.workspace, at_ms=now)
    assert [r.time_ms for r in history.records(worked.db_path)] == [now, now - 89 * DAY]
    monkeypatch.setattr(history, "KEEP_RECORDS", 3)
    for i in range(1, 6):
        history.record(worked.db_path, result, worked.workspace, at_ms=now + i)
    assert [r.time_ms for r in history.records(worked.db_path)] == [now + 5, now + 4, now + 3]


def test_muse_tables_are_left_alone(worked):
    worked.home.mkdir(exist_ok=True)
    conn = sqlite3.connect(worked.db_path)
    conn.executescript("CREATE TABLE conversations (id TEXT PRIMARY KEY, title TEXT);"
                       "INSERT INTO conversations VALUES ('c1', 'first');")
    conn.commit()
    before = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    conn.close()
    build_injection(worked.workspace, QUERY, home=worked.home, record=True)
    conn = sqlite3.connect(worked.db_path)
    after = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    assert [row for row in after if not row[1].startswith("memory_injections")] == before
    assert conn.execute("SELECT * FROM conversations").fetchall() == [("c1", "first")]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_a_locked_database_is_reported_not_raised(worked):
    result = build_injection(worked.workspace, QUERY, home=worked.home, record=True)
    holder = sqlite3.connect(worked.db_path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        outcome = history.record(worked.db_path, result, worked.workspace, busy_timeout_ms=50)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not outcome.ok and outcome.record_id is None and "locked" in outcome.error
    assert len(history.records(worked.db_path)) == 1


def test_a_corrupt_database_is_reported_not_raised(worked):
    worked.db_path.write_bytes(b"this is not a database, just some bytes" * 100)
    before = worked.db_path.read_bytes()
    result = build_injection(worked.workspace, QUERY, home=worked.home, record=True)
    assert result.count == 4  # the Markdown layers still inject
    assert any(p.source == str(worked.db_path) and "not recorded" in p.message for p in result.errors)
    assert worked.db_path.read_bytes() == before
    with pytest.raises(history.HistoryError, match=str(worked.db_path)):
        history.records(worked.db_path)
    with pytest.raises(history.HistoryError, match="cannot read"):
        history.stats(worked.db_path, worked.workspace)


def test_stats_skip_a_row_whose_entries_are_not_json(worked):
    build_injection(worked.workspace, QUERY, home=worked.home, record=True)
    conn = sqlite3.connect(worked.db_path)
    conn.execute("INSERT INTO memory_injections (time, workspace, count, chars, tokens, truncated, retrieval_ms, "
                 "entries) VALUES (1, ?, 1, 1, 1, 0, 0.5, '{broken')", (str(worked.workspace),))
    conn.commit()
    conn.close()
    got = history.stats(worked.db_path, worked.workspace)
    assert len(got) == 4 and all(n == 1 for n, _ in got.values())
    assert history.records(worked.db_path)[-1].entries == ()
