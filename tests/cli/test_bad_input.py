"""Each class of bad input: `status`, `list`, `preview` and the TUI report it with its path
and reason, the valid memories still work, and no byte of the bad file changes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.paths import Paths
from memtui.tui.app import MemtuiApp
from tests.helpers import enable, write
from tests.tui.conftest import wait_until


def _setup(kind: str, paths: Paths, tmp: Path) -> tuple[Path, str]:
    """Create the bad thing; return its path and a word its report must contain."""
    u = paths.user_root
    if kind == "invalid-yaml":
        return write(u / "bad.md", "---\ntype: [unclosed\n---\n- x\n"), "invalid YAML"
    if kind == "list-frontmatter":
        return write(u / "bad.md", "---\n- a\n- b\n---\n- x\n"), "not a mapping"
    if kind == "non-utf8":
        (u / "bad.md").write_bytes(b"- caf\xe9\n")
        return u / "bad.md", "not UTF-8"
    if kind == "big-file":
        (u / "bad.md").write_bytes(b"- line\n" * (300 * 1024))
        return u / "bad.md", "1 MiB"
    if kind == "binary":
        (u / "bad.md").write_bytes(bytes(range(256)) * 8)
        return u / "bad.md", "not UTF-8"
    if kind == "symlink-outside":
        secret = tmp / "id_rsa"
        secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
        os.symlink(secret, u / "bad.md")
        return u / "bad.md", "outside the memory root"
    if kind == "symlink-loop":
        os.symlink(u / "bad.md", u / "bad.md")
        return u / "bad.md", "loop"
    if kind == "invalid-settings":
        return write(paths.workspace_settings, "{\"memoryEnabled\": true,"), "invalid JSON"
    if kind == "settings-wrong-types":
        data = {"memoryEnabled": True, "memory": {"budget": {"user": "lots"}, "gate": {"conversation": 7}}}
        return write(paths.global_settings, json.dumps(data)), "invalid value"
    if kind == "corrupt-db":
        paths.db_path.write_bytes(b"\x00garbage" * 1000)
        return paths.db_path, "not a database"
    raise AssertionError(kind)


KINDS = ["invalid-yaml", "list-frontmatter", "non-utf8", "big-file", "binary", "symlink-outside", "symlink-loop",
         "invalid-settings", "settings-wrong-types", "corrupt-db"]


def snapshot(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if not path.is_symlink() else os.readlink(path).encode()
    except OSError:
        return None


@pytest.mark.parametrize("kind", KINDS)
async def test_bad_input_is_reported_and_untouched(kind, paths, tmp_path):
    enable(paths)
    write(paths.user_root / "good.md", "- a good memory about sqlite\n")
    (paths.user_root / "dir.md").mkdir()  # a directory named like a memory file is simply walked
    bad, reason = _setup(kind, paths, tmp_path)
    before = snapshot(bad)
    cli = [sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace)]

    status = json.loads(subprocess.run(cli + ["status", "--json"], capture_output=True, text=True, timeout=60).stdout)
    assert any(e["source"] == str(bad) and reason in e["message"] for e in status["errors"]), status["errors"]
    listed = json.loads(subprocess.run(cli + ["list", "--json"], capture_output=True, text=True, timeout=60).stdout)
    assert "a good memory about sqlite" in [e["text"] for e in listed["entries"]]
    preview = json.loads(subprocess.run(cli + ["preview", "sqlite", "--json"], capture_output=True, text=True, timeout=60).stdout)
    assert "- a good memory about sqlite" in preview["text"].split("\n")
    assert any(e["source"] == str(bad) for e in preview["errors"])

    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None)
        shown = {p.source for p in app.store.problems} | {p.source for p in app.settings.problems}
        assert str(bad) in shown
        assert any("a good memory" in e.text for e in app.store.entries("user"))
    assert snapshot(bad) == before, "the bad file was changed"


def test_empty_and_frontmatter_only_files_are_valid_and_untouched(paths):
    enable(paths)
    empty = write(paths.user_root / "empty.md", "")
    only_fm = write(paths.user_root / "fm.md", "---\ntype: knowledge\n---\n")
    write(paths.user_root / "good.md", "- a good memory\n")
    cli = [sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace)]
    status = json.loads(subprocess.run(cli + ["status", "--json"], capture_output=True, text=True, timeout=60).stdout)
    assert status["errors"] == [] and status["counts"]["user"]["active"] == 1
    assert empty.read_bytes() == b"" and only_fm.read_text() == "---\ntype: knowledge\n---\n"


def test_older_schema_is_backed_up_before_it_is_upgraded(paths):
    enable(paths)
    conn = sqlite3.connect(paths.db_path)
    conn.executescript("CREATE TABLE memories (id TEXT PRIMARY KEY, type TEXT NOT NULL, category TEXT NOT NULL, "
                       "content TEXT NOT NULL, tags TEXT, source TEXT NOT NULL, conversation_id TEXT, "
                       "created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
                       "INSERT INTO memories VALUES ('m','conversation','knowledge','old sqlite row','[]','auto',NULL,1,1);")
    conn.commit()
    conn.close()
    cli = [sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace)]
    status = json.loads(subprocess.run(cli + ["status", "--json"], capture_output=True, text=True, timeout=60).stdout)
    backup = sqlite3.connect(status["index"]["backup"])
    # the copy holds the database as it was: the older schema (no file_path) and its rows
    assert "file_path" not in [r[1] for r in backup.execute("PRAGMA table_info(memories)")]
    assert backup.execute("SELECT id, content FROM memories").fetchall() == [("m", "old sqlite row")]
    preview = json.loads(subprocess.run(cli + ["preview", "sqlite", "--json"], capture_output=True, text=True, timeout=60).stdout)
    assert preview["text"].endswith("- old sqlite row")
