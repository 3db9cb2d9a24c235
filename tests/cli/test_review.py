"""`memtui review` (SPEC §12) through the installed console script, on memories written the way
Muse writes them: `source: auto` files and rows inserted with plain SQL into Muse's tables."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from memtui.core.paths import Paths

from ..helpers import enable, write
from .run import entries, memtui, ok

MUSE_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
  id TEXT PRIMARY KEY, title TEXT, workspace_path TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
  id TEXT PRIMARY KEY, type TEXT NOT NULL, category TEXT NOT NULL, content TEXT NOT NULL, tags TEXT,
  source TEXT NOT NULL, conversation_id TEXT REFERENCES conversations(id) ON DELETE SET NULL,
  file_path TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
"""

LEARNED = """---
type: preference
updatedAt: 2026-04-01
source: auto
---

## Learned

- Run the linter before committing
- Prefer small pull requests
"""
MANUAL = "---\nsource: manual\n---\n\n- Written by the person\n"


def muse_writes_rows(paths: Paths, workspace: str, rows: list[tuple[str, str, int]]) -> None:
    """As Muse's extractor does: its own connection, its own SQL."""
    conn = sqlite3.connect(paths.db_path)
    with conn:
        conn.executescript(MUSE_SCHEMA)
        conn.execute("INSERT OR IGNORE INTO conversations VALUES ('c1', 'Fixing the build', ?, 1, 1)", (workspace,))
        for memory_id, content, stamp in rows:
            conn.execute("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, "
                         "created_at, updated_at) VALUES (?, 'conversation', 'knowledge', ?, '[]', 'auto', 'c1', NULL, ?, ?)",
                         (memory_id, content, stamp, stamp))
    conn.close()


def muse_updates_row(paths: Paths, memory_id: str, content: str) -> None:
    conn = sqlite3.connect(paths.db_path)
    with conn:
        conn.execute("UPDATE memories SET content = ?, updated_at = updated_at + 1 WHERE id = ?", (content, memory_id))
    conn.close()


def inbox(paths: Paths) -> list[dict]:
    return json.loads(ok(memtui(paths, "review", "--json")).stdout)["entries"]


@pytest.fixture
def learned(paths: Paths) -> Paths:
    enable(paths)
    write(paths.user_root / "learned.md", LEARNED)
    write(paths.user_root / "mine.md", MANUAL)
    muse_writes_rows(paths, str(paths.workspace), [
        ("row-old", "The CI cache key must include the lockfile hash", 1_770_000_000_000),
        ("row-new", "The build fails on Node 18; use Node 22", 1_790_000_000_000),
    ])
    return paths


def test_auto_rows_and_files_await_review_newest_first_with_their_provenance(learned):
    found = inbox(learned)
    assert [e["text"] for e in found] == [
        "The build fails on Node 18; use Node 22",  # 2026-09
        "Run the linter before committing", "Prefer small pull requests",  # 2026-04-01
        "The CI cache key must include the lockfile hash",  # 2026-02
    ]
    newest = found[0]["provenance"]
    assert newest["kind"] == "conversation" and newest["conversation_title"] == "Fixing the build"
    assert newest["time"].startswith("2026-09-21")
    assert found[1]["provenance"] == {"kind": "file", "label": "learned.md:9 · 2026-04-01 00:00",
                                      "time": "2026-04-01T00:00:00+00:00", "path": str(learned.user_root / "learned.md"),
                                      "line": 9}
    text = ok(memtui(learned, "review")).stdout
    assert "4 memories await review" in text and "“Fixing the build”" in text and "Written by the person" not in text


def test_accept_leaves_the_inbox_for_good_until_the_text_changes_from_outside(learned):
    ok(memtui(learned, "review", "accept", "learned.md:9", "row-new"))
    assert [e["text"] for e in inbox(learned)] == ["Prefer small pull requests",
                                                   "The CI cache key must include the lockfile hash"]
    # a new process (a restart) reads the same state from muse.db
    assert len(inbox(learned)) == 2
    # the extractor merges an update into an accepted row: it awaits review again
    muse_updates_row(learned, "row-new", "The build fails on Node 18 and 20; use Node 22")
    # and an outside edit of an accepted file entry
    path = learned.user_root / "learned.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Run the linter", "Run the linter and tests"),
                    encoding="utf-8")
    texts = {e["text"] for e in inbox(learned)}
    assert {"The build fails on Node 18 and 20; use Node 22", "Run the linter and tests before committing"} <= texts


def test_a_change_elsewhere_in_the_file_keeps_an_accepted_entry_accepted(learned):
    ok(memtui(learned, "review", "accept", "--all"))
    assert inbox(learned) == []
    path = learned.user_root / "learned.md"
    path.write_text(path.read_text(encoding="utf-8").replace("2026-04-01", "2026-04-02"), encoding="utf-8")
    assert inbox(learned) == []
    assert "Nothing to review" in ok(memtui(learned, "review")).stdout


def test_accept_is_a_change_in_the_undo_log_and_undo_puts_it_back_in_the_inbox(learned):
    path = learned.user_root / "mine.md"
    ok(memtui(learned, "edit", "mine.md:5", "Written by the person, edited"))  # an earlier, unrelated change
    edited = path.read_bytes()
    assert "Undo with `memtui undo`" in ok(memtui(learned, "review", "accept", "learned.md:9")).stdout
    assert "accept learned.md:9" in ok(memtui(learned, "undo", "--list")).stdout
    undone = ok(memtui(learned, "undo")).stdout
    assert "accept learned.md:9" in undone, undone  # the newest change is the accept, not the edit
    assert path.read_bytes() == edited
    assert len(inbox(learned)) == 4  # it awaits review again
    ok(memtui(learned, "review", "accept", "--all"))
    assert inbox(learned) == []
    ok(memtui(learned, "undo"))
    assert len(inbox(learned)) == 4


def test_an_edit_in_memtui_is_a_review(learned):
    entry_id = next(e["id"] for e in inbox(learned) if e["text"] == "Prefer small pull requests")
    ok(memtui(learned, "edit", entry_id, "Prefer pull requests under 400 lines"))
    assert "Prefer pull requests under 400 lines" not in {e["text"] for e in inbox(learned)}
    assert len(inbox(learned)) == 3


def test_reject_deletes_and_undo_restores_the_exact_bytes_and_row(learned):
    path = learned.user_root / "learned.md"
    before = path.read_bytes()
    row_before = sqlite3.connect(learned.db_path).execute("SELECT * FROM memories WHERE id = 'row-old'").fetchone()
    result = ok(memtui(learned, "review", "reject", "learned.md:10", "row-old"))
    assert "Undo with `memtui undo`" in result.stdout
    assert b"Prefer small pull requests" not in path.read_bytes()
    assert "The CI cache key must include the lockfile hash" not in {e["text"] for e in entries(learned)}
    ok(memtui(learned, "undo"))
    assert path.read_bytes() == before
    conn = sqlite3.connect(learned.db_path)
    assert conn.execute("SELECT * FROM memories WHERE id = 'row-old'").fetchone() == row_before
    conn.close()
    assert len(inbox(learned)) == 4  # back, and still awaiting review


def test_reject_refuses_what_is_not_awaiting_review(learned):
    result = memtui(learned, "review", "reject", "mine.md:5")
    assert result.returncode == 1 and "not awaiting review" in result.stderr
    assert "Written by the person" in (learned.user_root / "mine.md").read_text(encoding="utf-8")
    missing = memtui(learned, "review", "accept", "nope.md:1")
    assert missing.returncode == 1 and "no memory has the id or label" in missing.stderr
    usage = memtui(learned, "review", "accept")
    assert usage.returncode == 2


def test_imported_memories_await_review_and_name_their_origin(paths, tmp_path):
    enable(paths)
    source = write(tmp_path / "elsewhere" / "AGENTS.md", "- Use uv to manage Python environments\n")
    ok(memtui(paths, "import", "agents-md", str(source), "--user"))
    found = inbox(paths)
    assert [e["text"] for e in found] == ["Use uv to manage Python environments"]
    assert found[0]["provenance"]["kind"] == "import"
    assert found[0]["provenance"]["origin"] == str(source)
    text = ok(memtui(paths, "review")).stdout
    assert f"    imported from {source} · " in text and "from imported" not in text, text


def _preview(paths: Paths, query: str = "build linter lockfile") -> dict:
    return json.loads(ok(memtui(paths, "preview", query, "--json")).stdout)


def test_require_review_leaves_unreviewed_entries_out_with_their_reason(learned):
    enable(learned, {"memory": {"requireReview": True}})
    ok(memtui(learned, "review", "accept", "row-new"))
    data = _preview(learned)
    status = {c["id"]: c["status"] for c in data["candidates"]}
    assert status["row-new"] == "included"
    assert status["row-old"] == "unreviewed"
    assert "lockfile" not in data["text"] and "linter" not in data["text"]
    assert "Written by the person" in data["text"]
    held = [c for c in data["candidates"] if c["status"] == "unreviewed"]
    assert len(held) == 3
    # the hook's warm path (the prepared index) holds them back the same way
    assert _preview(learned)["text"] == data["text"]
    doctor = json.loads(memtui(learned, "doctor", "--json").stdout)
    assert doctor["counts"]["unreviewed"] == 3


def test_with_require_review_off_the_injection_does_not_depend_on_the_review_state(learned):
    before = _preview(learned)
    ok(memtui(learned, "review", "accept", "row-new", "learned.md:9"))
    after = _preview(learned)
    for data in (before, after):
        data.pop("retrieval_ms")
    assert after == before
    assert all(c["status"] != "unreviewed" for c in after["candidates"])
    doctor = json.loads(memtui(learned, "doctor", "--json").stdout)
    assert doctor["counts"]["unreviewed"] == 0


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_no_mcp_tool_accepts_or_rejects(learned, anyio_backend):
    """A model does not approve its own memories: no MCP tool reviews, accepts, approves or rejects."""
    from .test_mcp import session_for

    async with session_for(learned) as session:
        tools = (await session.list_tools()).tools
    assert {t.name for t in tools} >= {"search_memories", "remember", "forget"}
    judging = re.compile(r"\b(review|accept|approv|reject|inbox|unreviewed)", re.IGNORECASE)
    for tool in tools:
        said = json.dumps(tool.model_dump(mode="json"), ensure_ascii=False).replace("_", " ")
        assert not judging.search(said), (tool.name, judging.search(said))
    assert len(inbox(learned)) == 4  # listing the tools changed nothing


def test_status_counts_what_awaits_review(learned):
    assert "4 memories await review: memtui review" in ok(memtui(learned, "status")).stdout
    assert json.loads(ok(memtui(learned, "status", "--json")).stdout)["unreviewed"] == 4
    ok(memtui(learned, "review", "accept", "--all"))
    assert "await review" not in ok(memtui(learned, "status")).stdout
