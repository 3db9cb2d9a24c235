"""MemoryStore over real files and a real muse.db: load, edit, delete, trash + undo, problems."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from memtui.core.actions import near_duplicate
from memtui.core.fileio import ConflictError
from memtui.core.store import MemoryStore
from memtui.core.store.conversations import Conversations
from tests.helpers import enable, write

MUSE_SCHEMA = """
CREATE TABLE conversations (id TEXT PRIMARY KEY, title TEXT, workspace_path TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE memories (id TEXT PRIMARY KEY, type TEXT NOT NULL, category TEXT NOT NULL,
  content TEXT NOT NULL, tags TEXT, source TEXT NOT NULL,
  conversation_id TEXT REFERENCES conversations(id) ON DELETE SET NULL,
  file_path TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
"""


def test_loads_three_layers_and_ids_are_stable(paths):
    write(paths.user_root / "prefs.md", "- a\n- b\n- a\n")
    write(paths.project_root / "sub" / "ctx.md", "---\ntags: x, y\n---\n- 项目\n")
    db = Conversations(paths.db_path)
    db.add("conv one", memory_id="c1")
    db.close()
    store = MemoryStore(paths)
    store.load()
    user = store.entries("user")
    assert [e.text for e in user] == ["a", "b", "a"]
    assert len({e.id for e in user}) == 3
    assert [(e.rel_path, e.tags) for e in store.entries("project")] == [("sub/ctx.md", ("x", "y"))]
    assert [e.id for e in store.entries("conversation")] == ["c1"]
    again = MemoryStore(paths)
    again.load()
    assert [e.id for e in again.entries()] == [e.id for e in store.entries()]


def test_edit_changes_only_that_entry_and_updated_at(paths):
    original = "---\ntype: pref  # kept\nupdatedAt: 2020-01-01\nzzz: unknown\n---\n\n## S\n\n- one\n- two\n- three\n"
    f = write(paths.user_root / "p.md", original)
    store = MemoryStore(paths)
    store.load()
    two = store.entries("user")[1]
    new = store.edit_entry(two, "TWO edited")
    assert new is not None and new.text == "TWO edited"
    text = f.read_text()
    import datetime

    today = datetime.date.today().isoformat()
    assert text == original.replace("- two", "- TWO edited").replace("2020-01-01", today)


def test_delete_then_undo_restores_bytes_even_after_restart(paths):
    original = b"- keep me\n- delete me\n- keep too\n"
    f = paths.user_root / "notes.md"
    f.write_bytes(original)
    store = MemoryStore(paths)
    store.load()
    target = [e for e in store.entries("user") if e.text == "delete me"]
    store.delete_entries(target)
    assert f.read_bytes() == b"- keep me\n- keep too\n"
    assert [e.text for e in store.entries("user")] == ["keep me", "keep too"]
    assert any((paths.home / "trash").iterdir()) and not (paths.user_root / ".trash").exists()
    restarted = MemoryStore(paths)
    restarted.load()
    assert restarted.undo_last() is not None
    assert f.read_bytes() == original
    assert [e.text for e in restarted.entries("user")] == ["keep me", "delete me", "keep too"]
    assert restarted.undo_last() is None  # nothing more to undo


def test_a_delete_is_worked_out_once_for_its_warning_and_its_write(paths, monkeypatch):
    """The confirmation's warning and the write come from one working-out of the delete; undo
    restores the bytes."""
    from memtui.core import actions
    from memtui.core import markdown_writes as md  # where delete_entries finds delete_entry

    original = b"Intro paragraph.\n\n- the only item\n"
    f = paths.user_root / "notes.md"
    f.write_bytes(original)
    store = MemoryStore(paths)
    store.load()
    worked: list[int] = []
    real = md.delete_entry
    monkeypatch.setattr(md, "delete_entry", lambda *args: worked.append(1) or real(*args))
    plan = actions.plan_delete(store, [e for e in store.entries("user") if e.text == "the only item"])
    assert actions.delete_warning(plan) == ("it is the last list item of notes.md: the rest of the file then "
                                            "reads as one memory")
    assert actions.delete(store, plan) is not None
    assert worked == [1]
    assert f.read_bytes() == plan.writes[f][1] and b"the only item" not in f.read_bytes()
    assert [e.text for e in store.entries("user")] == ["Intro paragraph."]
    store.undo_last()
    assert f.read_bytes() == original


def test_a_planned_delete_follows_a_change_made_while_it_was_confirmed(paths):
    """A file changed between the confirmation and the write: the delete is worked out again
    and applied while the warning still holds, refused when it no longer does."""
    from memtui.core import actions

    f = write(paths.user_root / "notes.md", "Intro.\n\n- one\n- two\n")
    store = MemoryStore(paths)
    store.load()
    one = [e for e in store.entries("user") if e.text == "one"]
    plan = actions.plan_delete(store, one)
    assert actions.delete_warning(plan) is None
    write(f, "Intro.\n\n- one\n- two\n- three\n")  # another writer adds an item: the warning holds
    store.reload(changed=[f])
    actions.delete(store, plan)
    assert f.read_text() == "Intro.\n\n- two\n- three\n"
    store.undo_last()
    one = [e for e in store.entries("user") if e.text == "one"]
    plan = actions.plan_delete(store, one)
    write(f, "Intro.\n\n- one\n")  # now deleting `one` would make the rest one memory, unannounced
    store.reload(changed=[f])
    with pytest.raises(actions.ActionError, match="ask again"):
        actions.delete(store, plan)
    assert f.read_text() == "Intro.\n\n- one\n"


def test_delete_and_undo_conversation_memory(paths):
    db = Conversations(paths.db_path)
    db.add("remember the milk", memory_id="m1", tags=["shop"])
    db.close()
    store = MemoryStore(paths)
    store.load()
    store.delete_entries(store.entries("conversation"))
    assert store.entries("conversation") == []
    store.undo_last()
    assert [(e.id, e.text, e.tags) for e in store.entries("conversation")] == [("m1", "remember the milk", ("shop",))]


def test_stale_edit_is_refused(paths):
    f = write(paths.user_root / "p.md", "- one\n- two\n")
    store = MemoryStore(paths)
    store.load()
    entry = store.entries("user")[0]
    f.write_text("- one\n- two\n- added by someone else\n")
    with pytest.raises(ConflictError):
        store.edit_entry(entry, "changed")
    assert f.read_text() == "- one\n- two\n- added by someone else\n"


def test_stale_conversation_edit_is_refused(paths):
    db = Conversations(paths.db_path)
    db.add("v1", memory_id="m1", updated_at=1)
    store = MemoryStore(paths)
    store.load()
    entry = store.entries("conversation")[0]
    other = sqlite3.connect(paths.db_path)
    other.execute("UPDATE memories SET content='v2 from muse', updated_at=2 WHERE id='m1'")
    other.commit()
    other.close()
    with pytest.raises(ConflictError):
        store.edit_entry(entry, "mine")
    assert db.row("m1")["content"] == "v2 from muse"
    db.close()


def test_create_in_each_layer(paths):
    store = MemoryStore(paths)
    store.load()
    u = store.create_entry("user", "likes tabs", category="preference", tags=["style"])
    p = store.create_entry("project", "uses pnpm")
    c = store.create_entry("conversation", "discussed caching")
    assert (u.rel_path, u.category, u.tags) == ("notes.md", "preference", ("style",))
    assert p.rel_path == "context.md"
    assert c.conversation_id == store.workspace_conversation_id()
    assert paths.default_file("user").read_text().endswith("\n\n- likes tabs\n")
    store.create_entry("user", "second")
    assert paths.default_file("user").read_text().endswith("- likes tabs\n- second\n")


@pytest.mark.parametrize("name,data,reason", [
    ("invalid-yaml.md", b"---\ntype: [oops\n---\n- a\n", "invalid YAML"),
    ("list-frontmatter.md", b"---\n- a\n---\n- b\n", "not a mapping"),
    ("latin1.md", b"- caf\xe9\n", "not UTF-8"),
    ("big.md", b"- x\n" * (300 * 1024), "over the 1 MiB limit"),
    ("binary.md", bytes(range(256)) * 4, "not UTF-8"),
    ("nul.md", b"- a\x00b\n", "binary"),
])
def test_bad_files_are_reported_and_never_rewritten(paths, name, data, reason):
    bad = paths.user_root / name
    bad.write_bytes(data)
    write(paths.user_root / "good.md", "- fine\n")
    store = MemoryStore(paths)
    store.load()
    assert [e.text for e in store.entries("user")] == ["fine"]
    problems = [p for p in store.problems if p.source == str(bad)]
    assert problems and reason in problems[0].message
    store.create_entry("user", "another")
    assert bad.read_bytes() == data


def test_symlinks_outside_the_root_and_loops_are_not_followed(paths, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("- id_rsa contents\n")
    os.symlink(secret, paths.user_root / "evil.md")
    os.symlink(tmp_path, paths.user_root / "evil-dir")
    os.symlink(paths.user_root / "loop", paths.user_root / "loop")
    (paths.user_root / "inner").mkdir()
    write(paths.user_root / "inner" / "real.md", "- inside\n")
    os.symlink(paths.user_root / "inner" / "real.md", paths.user_root / "alias.md")
    (paths.user_root / "x.md").mkdir()  # a directory named like a memory file
    (paths.user_root / ".trash").mkdir()
    write(paths.user_root / ".trash" / "old.md", "- trashed\n")
    store = MemoryStore(paths)
    store.load()
    assert [e.text for e in store.entries("user")] == ["inside"]
    messages = {p.source: p.message for p in store.problems}
    assert "outside the memory root" in messages[str(paths.user_root / "evil.md")]
    assert "outside the memory root" in messages[str(paths.user_root / "evil-dir")]


def test_unreadable_file_is_reported(paths):
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    bad = write(paths.user_root / "locked.md", "- x\n")
    bad.chmod(0)
    store = MemoryStore(paths)
    store.load()
    assert any("cannot read" in p.message for p in store.problems)


def _muse_search(paths, keyword: str) -> list[str]:
    """Ids of the memories whose content or tags contain `keyword`, found as Muse finds them in
    the FTS5 trigram index memtui keeps (a keyword under 3 characters through the index's LIKE)."""
    conn = sqlite3.connect(paths.db_path)
    try:
        if len(keyword) >= 3:
            sql, args = "memories_fts MATCH ?", ['"' + keyword.replace('"', '""') + '"']
        else:
            sql, args = "f.content LIKE ? OR f.tags LIKE ?", [f"%{keyword}%"] * 2
        return [r[0] for r in conn.execute(
            f"SELECT m.id FROM memories_fts f JOIN memories m ON m.rowid = f.rowid WHERE {sql}", args)]
    finally:
        conn.close()


def test_works_on_a_database_muse_created(paths):
    conn = sqlite3.connect(paths.db_path)
    conn.executescript(MUSE_SCHEMA)
    conn.execute("INSERT INTO conversations VALUES ('c1', 'Chat', ?, 1, 1)", [str(paths.workspace)])
    conn.execute("INSERT INTO memories VALUES ('m1','conversation','knowledge','数据库 uses WAL','[\"db\"]','auto','c1',NULL,1,2)")
    conn.commit()
    conn.close()
    write(paths.user_root / "a.md", "- 数据库连接池配置过小\n")
    store = MemoryStore(paths)
    store.load()
    assert [(e.text, e.conversation_title) for e in store.entries("conversation")] == [("数据库 uses WAL", "Chat")]
    # the Markdown entries are indexed as rows with file_path, searchable in Chinese
    ids = set(_muse_search(paths, "数据"))
    assert {store.entries("user")[0].id, "m1"} <= ids
    assert set(_muse_search(paths, "连接池")) == {store.entries("user")[0].id}
    rows = sqlite3.connect(paths.db_path).execute("SELECT count(*) FROM memories WHERE file_path IS NOT NULL").fetchone()
    assert rows == (1,)
    assert store.conversations.health()["ok"]


def test_older_schema_is_upgraded_after_a_backup(paths):
    conn = sqlite3.connect(paths.db_path)
    conn.executescript(MUSE_SCHEMA.replace("file_path TEXT, ", ""))
    conn.execute("INSERT INTO memories VALUES ('m1','conversation','knowledge','kept','[]','auto',NULL,1,2)")
    conn.commit()
    conn.close()
    store = MemoryStore(paths)
    store.load()
    write(paths.user_root / "a.md", "- indexed\n")
    store.reload()
    assert store.database.backup_path is not None and store.database.backup_path.exists()
    backup = sqlite3.connect(store.database.backup_path)
    assert backup.execute("SELECT content FROM memories").fetchall() == [("kept",)]
    assert [e.text for e in store.entries("conversation")] == ["kept"]


def test_reindex_when_files_change(paths):
    f = write(paths.user_root / "a.md", "- first\n")
    store = MemoryStore(paths)
    store.load()
    f.write_text("- second\n- third\n")
    store.reload(changed=[f])
    rows = sqlite3.connect(paths.db_path).execute(
        "SELECT content FROM memories WHERE file_path = ? ORDER BY content", [str(f)]).fetchall()
    assert rows == [("second",), ("third",)]
    f.unlink()
    store.reload()
    assert sqlite3.connect(paths.db_path).execute("SELECT count(*) FROM memories WHERE file_path IS NOT NULL").fetchone() == (0,)


def test_change_events_only_when_something_changed(paths):
    f = write(paths.user_root / "a.md", "- a\n")
    store = MemoryStore(paths)
    store.load()
    events = []
    store.subscribe(events.append)
    store.reload()
    assert events == []
    f.write_text("- a\n- b\n")
    store.reload(changed=[f])
    assert len(events) == 1 and events[0].layers == {"user"}


def test_near_duplicates(paths):
    write(paths.user_root / "notes.md", "- Prefer pnpm over npm\n")
    store = MemoryStore(paths)
    store.load()
    assert near_duplicate(store.entries("user"), "prefer pnpm over npm.") is not None
    assert near_duplicate(store.entries("user"), "use yarn") is None
    assert near_duplicate(store.entries("project"), "Prefer pnpm over npm") is None


def test_concurrent_reads_while_reloading(paths):
    for i in range(20):
        write(paths.user_root / f"f{i}.md", "".join(f"- item {j}\n" for j in range(20)))
    store = MemoryStore(paths)
    store.load()
    errors = []

    def reader():
        for _ in range(200):
            try:
                assert len(store.entries("user")) == 400
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for _ in range(5):
        store.reload(full=True)
    for t in threads:
        t.join()
    assert errors == []


def test_temp_files_of_killed_writes_are_removed_unless_a_writer_is_active(paths):
    leftover = paths.user_root / ".notes.md.k3j2h1ab.tmp"
    other = paths.user_root / ".my-own-hidden-file"
    for f in (leftover, other):
        f.write_text("- half written\n")
    store = MemoryStore(paths)
    with store.log.locked():  # another memtui process is in the middle of a write
        store.load()
        assert leftover.exists()
    store.load()
    assert not leftover.exists() and other.exists()


def test_conversation_layer_is_made_again_only_when_a_row_changes(paths):
    """Another write to muse.db (the hook's history) re-reads the rows; the entries are made
    again only when one of them changed, and they are the rows' entries. Their terms are not
    kept on them: `terms_of` makes the same ones when asked."""
    from memtui.core.relevance import terms_of
    from memtui.core.store.scan import conversation_entry

    db = Conversations(paths.db_path)
    db.ensure_conversation("k1", "Deploys", str(paths.workspace))
    db.add("staging deploys on merge 部署", memory_id="m1", conversation_id="k1", tags=["ci"])
    db.add("the deploy key lives in the vault", memory_id="m2", conversation_id="k1")
    store = MemoryStore(paths)
    store.load()
    first = store.snapshot("conversation")
    rows = db.rows(paths.workspace)
    assert [(e, terms_of(e)) for e in first] == [(conversation_entry(r), conversation_entry(r).terms) for r in rows]
    assert all(not e.terms for e in first)
    db.ensure_conversation("other", "Elsewhere", "/srv/elsewhere")  # muse.db moved, no row of ours did
    store.reload()
    assert store.snapshot("conversation") is first
    with sqlite3.connect(paths.db_path) as conn:
        conn.execute("UPDATE memories SET content = 'staging deploys on every merge' WHERE id = 'm1'")
    db.close()
    store.reload()
    assert [e.text for e in store.snapshot("conversation")] == ["staging deploys on every merge",
                                                                "the deploy key lives in the vault"]
    store.close()


def _rows_db(paths) -> Conversations:
    """Two conversation rows of the workspace, with memtui's change counter over the rows in place."""
    db = Conversations(paths.db_path)
    db.ensure_conversation("k1", "Deploys", str(paths.workspace))
    db.ensure_conversation("far", "Elsewhere", "/srv/elsewhere")
    db.add("staging deploys on merge", memory_id="m1", conversation_id="k1")
    db.add("the deploy key lives in the vault", memory_id="m2", conversation_id="k1")
    assert isinstance(db.row_generation(create=True), int)
    return db


def _fields(entries) -> list[tuple]:
    return sorted((e.id, e.text, e.tags, e.updated_at, e.conversation_id, e.conversation_title) for e in entries)


def test_rows_another_writer_changed_are_taken_in_alone(paths, monkeypatch):
    """With memtui's change counter in place, a reload reads only the rows changed since (an
    added, an edited and a deleted row; one of another workspace stays out), never every row,
    and a write elsewhere in muse.db (the hook's history) makes nothing again."""
    db = _rows_db(paths)
    store = MemoryStore(paths)
    store.load()
    full_reads = []
    rows = store.conversations.rows
    monkeypatch.setattr(store.conversations, "rows", lambda workspace: full_reads.append(1) or rows(workspace))
    with sqlite3.connect(paths.db_path) as conn:  # another writer (Muse)
        conn.execute("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, created_at, "
                     "updated_at) VALUES ('m3', 'conversation', 'knowledge', 'rollbacks need a ticket', '[\"ops\"]', "
                     "'auto', 'k1', 5, 5)")
        conn.execute("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, created_at, "
                     "updated_at) VALUES ('x1', 'conversation', 'knowledge', 'not ours', '[]', 'auto', 'far', 5, 5)")
        conn.execute("UPDATE memories SET content = 'staging deploys on every merge', updated_at = 9 WHERE id = 'm1'")
        conn.execute("DELETE FROM memories WHERE id = 'm2'")
    change = store.reload()
    assert "conversation" in change.layers and not full_reads
    fresh = MemoryStore(paths)
    fresh.load()
    assert _fields(store.snapshot("conversation")) == _fields(fresh.snapshot("conversation"))
    assert {e.id for e in store.snapshot("conversation")} == {"m1", "m3"}
    assert store.get("m3") is not None and store.get("m2") is None
    fresh.close()
    before = store.snapshot("conversation")
    with sqlite3.connect(paths.db_path) as conn:  # muse.db moves, no row does
        conn.execute("CREATE TABLE IF NOT EXISTS elsewhere (x)")
        conn.execute("INSERT INTO elsewhere VALUES (1)")
    assert not store.reload().layers and store.snapshot("conversation") is before and not full_reads
    store.close()
    db.close()


def test_offered_conversation_entries_are_taken_while_no_row_moved(paths, monkeypatch):
    """A store told the layer's entries as of the change counter (the TUI, from the prepared
    index) takes them as they are; once a row moved since, it reads the rows instead."""
    db = _rows_db(paths)
    gen = db.row_generation()
    made = MemoryStore(paths)
    made.load()
    offered = made.snapshot("conversation")
    made.close()

    store = MemoryStore(paths)
    monkeypatch.setattr(store.conversations, "rows", lambda workspace: pytest.fail("every row read again"))
    store.offer_conversation(offered, gen)
    store.load()
    assert all(a is b for a, b in zip(store.snapshot("conversation"), offered, strict=True))
    store.close()

    db.add("a row added after the entries were made", memory_id="m9", conversation_id="k1")
    late = MemoryStore(paths)
    late.offer_conversation(offered, gen)
    late.load()
    assert {e.id for e in late.snapshot("conversation")} == {"m1", "m2", "m9"}
    late.close()
    db.close()


def test_an_index_built_again_makes_only_the_changed_rows_terms(paths, monkeypatch):
    """A loaded store's conversation entries keep no terms; the store's injection (the MCP
    server's) makes them once per row and text: after one row changed, the layer's index is
    built again with only that row's terms made, and answers as a fresh store's does."""
    from memtui.core.serve import inject_from_store
    from memtui.core.settings import load_settings
    from memtui.core.store import line_cache

    enable(paths)
    db = _rows_db(paths)
    made = []
    terms_of = line_cache.terms_of
    monkeypatch.setattr(line_cache, "terms_of", lambda e: made.append(e.id) or terms_of(e))
    store = MemoryStore(paths)
    store.load()
    settings = load_settings(paths)
    assert inject_from_store(store, settings, "deploys").count == 1
    assert sorted(made) == ["m1", "m2"]
    made.clear()
    with sqlite3.connect(paths.db_path) as conn:
        conn.execute("UPDATE memories SET content = 'the rollback key lives in the vault', updated_at = 9 WHERE id = 'm2'")
    conn.close()
    store.reload()
    result = inject_from_store(store, settings, "rollback key")
    assert made == ["m2"]
    fresh = MemoryStore(paths)
    fresh.load()
    again = inject_from_store(fresh, settings, "rollback key")
    assert [{k: v for k, v in json.loads(r.to_json()).items() if k != "retrieval_ms"} for r in (result, again)] == \
        [{k: v for k, v in json.loads(again.to_json()).items() if k != "retrieval_ms"}] * 2
    assert any(c.id == "m2" for c in result.included)
    fresh.close()
    store.close()
    db.close()


_FILES = [
    "- Use vitest\n- Use vitest\n- 数据库连接池配置过小，高并发时超时\n",
    "---\ntype: preference\nimportance: high\ntags: [redis, 数据库, The pool]\nname: Pool\ndescription: the db pool\n"
    "updatedAt: 2026-03-04\nsource: manual\n---\n\n## Testing\n\n- Prefer describe/it\n\nA paragraph\nover two lines.\n",
    "---\nstatus: superseded\ntags: one, two\nupdatedAt: 1760000000.5\n---\n# Title\n\n1. first\n2. second\n\n```\ncode\n```\n",
    "---\ntype: [not, text]\ntags: 5\nimportance: urgent\n---\n- ｖｉｔｅｓｔ ½ İ\n",
]


@pytest.mark.parametrize("seed", range(4))
def test_a_scanned_file_makes_the_entries_its_cached_payload_makes(tmp_path, seed):
    """The store's scan makes a file's entries straight from its parse: field for field
    (terms too) what the payload it caches gives back when the file is next read."""
    import random

    from memtui.core import markdown as md
    from memtui.core.store.scan import Scan, entries_from_payload, make_payload
    from tests.benchmarks.corpus import markdown_file

    texts = [*_FILES, markdown_file(random.Random(seed), 12)]
    for i, text in enumerate(texts):
        path = tmp_path / f"f{i}.md"
        parsed = md.parse_text(text)
        path.write_text(text, encoding="utf-8")
        scan = Scan({"project": tmp_path})
        (record,) = scan.read_files("project", [path])
        assert record.payload == make_payload("project", path, parsed)
        cached = entries_from_payload("project", path, path.name, record.payload, path.stat().st_mtime)
        assert cached is not None and record.entries == cached and cached
        assert [e.terms for e in record.entries] == [e.terms for e in cached]


def test_a_load_that_finds_the_schema_complete_does_not_import_sqlite_utils(paths):
    """sqlite-utils imports numpy when it is installed (≈0.1 s, ≈20 MB): the TUI's store load
    and the doctor read memtui's tables with the plain connection, and a load after an
    outside edit writes the edited file's index rows with it too; only the schema's making
    (the full-text table) imports the wrapper. The first load makes the schema, the second
    indexes the edited file, the third only reads."""
    prefs = paths.user_root / "preferences.md"
    write(prefs, "- Use vitest, not jest\n")
    enable(paths)
    script = (
        "import sys\n"
        "from memtui.core.actions import open_store\n"
        "from pathlib import Path\n"
        "from memtui.core.paths import Paths\n"
        f"store = open_store(Paths(Path({str(paths.home)!r}), Path({str(paths.workspace)!r})))\n"
        "print([e.text for e in store.entries('user')])\n"
        "store.close()\n"
        "print('sqlite_utils' in sys.modules)\n")
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)]
    write(prefs, "- Use vitest, not jest\n- Pin the database pool size\n")  # an outside edit
    runs += [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0, 0], [r.stderr for r in runs]
    edited = "['Use vitest, not jest', 'Pin the database pool size']"
    assert [r.stdout.strip().splitlines() for r in runs] == [
        ["['Use vitest, not jest']", "True"], [edited, "False"], [edited, "False"]]
    conn = sqlite3.connect(paths.db_path)  # the edited file's rows, as the index keeps them
    indexed = sorted(r[0] for r in conn.execute("SELECT content FROM memories WHERE file_path = ?", [str(prefs)]))
    found = sorted(r[0] for r in conn.execute(
        "SELECT m.content FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
        "WHERE memories_fts MATCH '\"database pool\"'"))
    conn.close()
    assert indexed == ["Pin the database pool size", "Use vitest, not jest"]
    assert found == ["Pin the database pool size"]


def test_a_schema_another_writer_made_meanwhile_is_taken_as_made(paths):
    """Two writers on a fresh muse.db (the TUI's store and the hook, say) both find the
    full-text table missing; the second one's creation meets it made: that is no error."""
    from memtui.core.store.database import Database

    first, second = Database(paths.db_path), Database(paths.db_path)
    second.open(create=True)  # connected before the first made anything
    first.ensure_schema()
    tables = Database.tables
    seen = []

    def as_before(db):  # the second writer's look at the tables, taken before the first made them
        found = tables(db)
        if not seen:
            seen.append(found)
            return found - {"memories_fts"}
        return found

    second.tables = as_before  # type: ignore[method-assign]
    try:
        second.ensure_schema()
        assert seen and "memories_fts" in tables(second.open(create=False))
    finally:
        first.close()
        second.close()


def test_the_doctor_creates_none_of_memtuis_tables(paths):
    """The doctor only reads: on a muse.db that has Muse's tables alone it finds the index
    empty, and creates nothing."""
    from memtui.core import doctor

    write(paths.user_root / "notes.md", "- Use vitest, not jest\n")
    enable(paths)
    conn = sqlite3.connect(paths.db_path)
    conn.executescript("CREATE TABLE conversations (id TEXT PRIMARY KEY, title TEXT, workspace_path TEXT,"
                       " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
                       "CREATE TABLE memories (id TEXT PRIMARY KEY, type TEXT NOT NULL, category TEXT NOT NULL,"
                       " content TEXT NOT NULL, tags TEXT, source TEXT NOT NULL, conversation_id TEXT,"
                       " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);")
    conn.close()
    found = doctor.findings(paths)
    assert ("index", str(paths.user_root / "notes.md")) in [(f.kind, f.source) for f in found]
    conn = sqlite3.connect(paths.db_path)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert names == {"conversations", "memories"}, names


def test_the_named_row_columns_are_the_columns_a_row_is_read_from():
    """`rows` names the columns of `ROW_COLUMNS` by position (a row is read as a plain tuple):
    each name picks the value `conversation_row` takes for that field."""
    from memtui.core.store import rows
    from memtui.core.store.conversations import conversation_row

    raw = ("m-1", "knowledge", "the pool size", '["db"]', "auto", "c-1", "Pool tuning", "/ws", 11, 22)
    row = conversation_row(raw)
    named = {"id": rows.ID, "category": rows.CATEGORY, "content": rows.CONTENT, "source": rows.SOURCE,
             "conversation_id": rows.CONVERSATION_ID, "conversation_title": rows.TITLE,
             "workspace_path": rows.WORKSPACE, "created_at": rows.CREATED_AT, "updated_at": rows.UPDATED_AT}
    assert {field: getattr(row, field) for field in named} == {field: raw[at] for field, at in named.items()}
    assert row.tags == ("db",) and raw[rows.TAGS] == '["db"]'
    assert len(raw) == rows.CONVERSATION_KNOWN  # `changes_since` reads the conversation's id after them
