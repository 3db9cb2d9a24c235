"""Each class of bad input: `status`, `list`, `preview` and the TUI report it with its path
and reason, the valid memories still work, and no byte of the bad file changes."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import pytest

from memtui.core.display import path_text
from memtui.core.paths import Paths
from memtui.core.store.database import BUSY_TIMEOUT_MS
from memtui.tui.app import MemtuiApp
from tests.cli.run import memtui
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
    status = json.loads(memtui(paths, "status", "--json").stdout)
    assert any(e["source"] == str(bad) and reason in e["message"] for e in status["errors"]), status["errors"]
    listed = json.loads(memtui(paths, "list", "--json").stdout)
    assert "a good memory about sqlite" in [e["text"] for e in listed["entries"]]
    preview = json.loads(memtui(paths, "preview", "sqlite", "--json").stdout)
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
    status = json.loads(memtui(paths, "status", "--json").stdout)
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
    status = json.loads(memtui(paths, "status", "--json").stdout)
    backup = sqlite3.connect(status["index"]["backup"])
    # the copy holds the database as it was: the older schema (no file_path) and its rows
    assert "file_path" not in [r[1] for r in backup.execute("PRAGMA table_info(memories)")]
    assert backup.execute("SELECT id, content FROM memories").fetchall() == [("m", "old sqlite row")]
    preview = json.loads(memtui(paths, "preview", "sqlite", "--json").stdout)
    assert preview["text"].endswith("- old sqlite row")


# ---------------------------------------------------------------------------------------
# Every command against every kind of bad input, through the real CLI (SPEC §1, §6, §8):
# each exits normally (0, 1 or 2; never a traceback), reports the bad thing with its path
# and reason where it reads it, and still serves and changes every other memory.

GOOD = "- a good memory about sqlite\n- another good one about vacuum\n"
ALIAS_BOMB = ("---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
              "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
              "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
              "g: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n---\n- bomb body\n")
SKIPPED = "invalid YAML"


def _frontmatter(line: str) -> str:
    return f"---\ntype: knowledge\n{line}\n---\n- the body of a broken file\n"


def _file(name: str, data: bytes | str, reason: str | None):
    def make(paths: Paths, tmp: Path) -> tuple[Path, str | None]:
        target = paths.user_root / name
        target.write_bytes(data if isinstance(data, bytes) else data.encode())
        return target, reason
    return make


def _fifo(paths: Paths, tmp: Path) -> tuple[Path, str | None]:
    os.mkfifo(paths.user_root / "x.md")
    return paths.user_root / "x.md", "not a regular file"


def _directory(paths: Paths, tmp: Path) -> tuple[Path, str | None]:
    (paths.user_root / "y.md").mkdir()
    write(paths.user_root / "y.md" / "inside.md", "- a memory in a folder named y.md\n")
    return paths.user_root / "y.md", None  # walked like any folder: no problem, nothing lost


def _bad_name(paths: Paths, tmp: Path) -> tuple[Path, str | None]:
    raw = os.fsencode(paths.user_root) + b"/x\xff.md"
    with open(raw, "wb") as handle:
        handle.write(b"- behind a bad name\n")
    return Path(os.fsdecode(raw)), "not UTF-8"


def _symlink_out(paths: Paths, tmp: Path) -> tuple[Path, str | None]:
    secret = write(tmp / "outside" / "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    os.symlink(secret, paths.user_root / "key.md")
    return paths.user_root / "key.md", "outside the memory root"


def _garbage_db(paths: Paths, tmp: Path) -> tuple[Path, str | None]:
    paths.db_path.write_bytes(b"\x00garbage, not SQLite" * 200)
    return paths.db_path, "not a database"


CASES: dict[str, Callable[[Paths, Path], tuple[Path, str | None]]] = {
    # name: make the bad thing; returns its path and the reason its report must match (None: no report)
    "updatedAt-13-45": _file("bad.md", _frontmatter("updatedAt: 2026-13-45"), SKIPPED),
    "updatedAt-02-30": _file("bad.md", _frontmatter("updatedAt: 2026-02-30"), SKIPPED),
    "updatedAt-hour-25": _file("bad.md", _frontmatter("updatedAt: 2026-01-01T25:00:00"), SKIPPED),
    "int-tag": _file("bad.md", _frontmatter('x: !!int "abc"'), SKIPPED),
    "float-tag": _file("bad.md", _frontmatter('x: !!float "abc"'), SKIPPED),
    "timestamp-tag": _file("bad.md", _frontmatter('x: !!timestamp "nope"'), SKIPPED),
    "alias-bomb": _file("bad.md", ALIAS_BOMB, "alias"),
    "fifo": _fifo,
    "directory-named-md": _directory,
    "non-utf8-name": _bad_name,
    "non-utf8-content": _file("bad.md", b"- caf\xe9 au lait\n", "not UTF-8"),
    "nul-bytes": _file("bad.md", b"- before\x00after\n", None),
    "over-1-mib": _file("bad.md", b"- line\n" * (200 * 1024), "1 MiB"),
    "bom-frontmatter": _file("bom.md", "\ufeff---\ntype: decision\n---\n- chose sqlite for the cache\n", None),
    "symlink-outside": _symlink_out,
    "garbage-db": _garbage_db,
}
COMMANDS = ["list", "list --json", "preview", "status", "remember", "edit", "undo", "delete", "undo", "forget", "undo"]


def _snapshot(path: Path) -> tuple | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return (st.st_mode, st.st_ino)
    return (path.read_bytes(), st.st_ino)


def _run_all(paths: Paths) -> dict[str, subprocess.CompletedProcess[str]]:
    """Run every command once, in an order where each has something to do."""
    from tests.cli.run import memtui

    out: dict[str, subprocess.CompletedProcess[str]] = {}

    def good_id() -> str | None:
        listed = json.loads(memtui(paths, "list", "--json").stdout or "{}").get("entries", [])
        return next((e["id"] for e in listed if e["text"] == "a good memory about sqlite"), None)

    for i, command in enumerate(COMMANDS):
        if command == "preview":
            args = ["preview", "sqlite", "--json"]
        elif command == "status":
            args = ["status", "--json"]
        elif command == "remember":
            args = ["remember", "a fresh memory about indexes"]
        elif command == "edit":
            args = ["edit", good_id() or "missing", "-"]
        elif command == "delete":
            args = ["delete", good_id() or "missing", "--yes"]
        elif command == "forget":
            args = ["forget", "vacuum", "--yes"]
        else:
            args = command.split()
        result = memtui(paths, *args, input="a good memory about sqlite, edited\n" if command == "edit" else None)
        out[f"{i:02d} {command}"] = result
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_every_command_survives_bad_input(case, paths, tmp_path):
    from tests.cli.run import assert_no_traceback

    enable(paths)
    good = write(paths.user_root / "good.md", GOOD)
    make = CASES[case]
    bad, reason = make(paths, tmp_path)
    before = _snapshot(bad)
    results = _run_all(paths)
    for label, r in results.items():
        assert r.returncode in (0, 1, 2), (label, r.returncode, r.stderr)
        assert_no_traceback(r)
    codes = {label: r.returncode for label, r in results.items()}
    assert all(code == 0 for code in codes.values()), {k: (v.returncode, v.stderr) for k, v in results.items()
                                                      if v.returncode}
    listed = json.loads(results["01 list --json"].stdout)
    texts = [e["text"] for e in listed["entries"]]
    assert "a good memory about sqlite" in texts and "another good one about vacuum" in texts
    status = json.loads(results["03 status"].stdout)
    preview = json.loads(results["02 preview"].stdout)
    assert "- a good memory about sqlite" in preview["text"].split("\n")
    if reason is not None:
        for report in (listed["errors"], status["errors"], preview["errors"]):
            assert any(e["source"] == path_text(str(bad)) and re.search(reason, e["message"]) for e in report), \
                (reason, report)
        assert re.search(reason, results["00 list"].stderr), results["00 list"].stderr
    assert "Remembered" in results["04 remember"].stdout
    assert "Undoing: edit" in results["06 undo"].stdout
    assert "Undoing: delete" in results["08 undo"].stdout
    assert "Deleted 1" in results["09 forget"].stdout and "Undoing: delete" in results["10 undo"].stdout
    # every change was undone except the remember: the good file is back, byte for byte
    assert good.read_text() == GOOD
    assert "a fresh memory about indexes" in paths.default_file("user").read_text()
    assert _snapshot(bad) == before, "the bad input was changed"
    if case == "bom-frontmatter":
        entry = next(e for e in listed["entries"] if e["text"] == "chose sqlite for the cache")
        assert entry["category"] == "decision" and listed["errors"] == []


@pytest.mark.parametrize("data,reason", [
    (_frontmatter("updatedAt: 2026-13-45"), "invalid YAML"),
    (_frontmatter("updatedAt: 2026-02-30"), "invalid YAML"),
    (_frontmatter("updatedAt: 2026-01-01T25:00:00"), "invalid YAML"),
    (_frontmatter('x: !!int "abc"'), "invalid YAML"),
    (_frontmatter('x: !!float "abc"'), "invalid YAML"),
    (_frontmatter('x: !!timestamp "nope"'), "invalid YAML"),
    (ALIAS_BOMB, "alias"),
], ids=["month-13", "feb-30", "hour-25", "int-tag", "float-tag", "timestamp-tag", "alias-bomb"])
def test_frontmatter_reasons(paths, data, reason):
    """SPEC §1: a value YAML cannot construct, and any anchor or alias, is invalid frontmatter,
    reported as such (not as an internal error)."""
    from tests.cli.run import memtui

    bad = write(paths.user_root / "bad.md", data)
    errors = json.loads(memtui(paths, "list", "--json").stdout)["errors"]
    assert any(e["source"] == str(bad) and reason in e["message"] for e in errors), errors


def test_bom_before_frontmatter_is_frontmatter(paths):
    from tests.cli.run import entries

    write(paths.user_root / "bom.md", "\ufeff---\ntype: decision\n---\n- chose sqlite for the cache\n")
    listed = entries(paths)
    assert [(e["text"], e["category"]) for e in listed] == [("chose sqlite for the cache", "decision")]


# ---- the bad inputs that only some commands meet


def test_read_only_memory_folder_for_remember_and_forget(paths):
    from tests.cli.run import assert_no_traceback, memtui
    from tests.core.test_safety import read_only

    enable(paths)
    good = write(paths.user_root / "good.md", GOOD)
    with read_only(paths.user_root):
        remembered = memtui(paths, "remember", "cannot be written here")
        forgot = memtui(paths, "forget", "vacuum", "--yes")
        listed = memtui(paths, "list", "--json")
        undone = memtui(paths, "undo")
    for r in (remembered, forgot, listed, undone):
        assert r.returncode in (0, 1), r
        assert_no_traceback(r)
    assert remembered.returncode == 1 and "permission denied" in remembered.stderr
    assert str(paths.user_root) in remembered.stderr
    assert forgot.returncode == 1 and "permission denied" in forgot.stderr and str(good) in forgot.stderr
    assert undone.returncode == 1 and "Nothing to undo" in undone.stderr  # nothing was logged as done
    assert good.read_text() == GOOD and not paths.default_file("user").exists()
    assert len(json.loads(listed.stdout)["entries"]) == 2


def test_dot_muse_that_is_a_file_for_enable_and_the_rest(paths):
    from tests.cli.run import assert_no_traceback, memtui

    shutil.rmtree(paths.workspace / ".muse")
    (paths.workspace / ".muse").write_text("not a folder\n")
    write(paths.user_root / "good.md", GOOD)
    r = memtui(paths, "enable")
    assert r.returncode == 1 and "is a file" in r.stderr
    assert_no_traceback(r)
    enable(paths)
    results = {}
    for args in (["list", "--json"], ["status", "--json"], ["preview", "sqlite", "--json"],
                 ["remember", "--project", "project note"], ["remember", "user note"]):
        r = results[" ".join(args)] = memtui(paths, *args)
        assert r.returncode in (0, 1), (args, r)
        assert_no_traceback(r)
    project = results["remember --project project note"]
    assert project.returncode == 1 and ".muse is not a directory" in project.stderr
    assert "- user note" in paths.default_file("user").read_text().splitlines()
    assert len(json.loads(results["list --json"].stdout)["entries"]) == 2
    assert "Undoing: add “user note”" in memtui(paths, "undo").stdout
    assert not paths.default_file("user").exists()
    assert (paths.workspace / ".muse").read_text() == "not a folder\n"


@contextmanager
def _exclusive(db: Path):
    """Another process's connection holding the database: `BEGIN EXCLUSIVE`."""
    conn = sqlite3.connect(db, timeout=1, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def _db_files(paths: Paths) -> dict[str, tuple[int, bytes]]:
    return {p.name: (p.stat().st_ino, p.read_bytes()) for p in paths.home.iterdir() if p.name.startswith("muse.db")}


def _at_once(paths: Paths, *commands: list[str]) -> list[tuple[subprocess.CompletedProcess[str], float]]:
    """Run the real console script once per command, all at the same time; each result with
    the seconds that process took."""
    from tests.cli.run import TIMEOUT, console_script

    started = time.monotonic()
    procs = [subprocess.Popen([console_script(), "--home", str(paths.home), "-w", str(paths.workspace), *args],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONIOENCODING": "utf-8"})
             for args in commands]
    out = []
    for proc, args in zip(procs, commands):
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
        # the moment this one ended is not observable once another is waited on; an upper bound
        # is enough for "one busy timeout per command"
        out.append((subprocess.CompletedProcess(args, proc.returncode, stdout, stderr), time.monotonic() - started))
    return out


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_locked_database_for_status_repair_and_preview(paths, journal):
    """In WAL mode a `BEGIN EXCLUSIVE` still lets readers read (only writing waits); in
    rollback-journal mode (a database Muse made) it shuts readers out too."""
    from tests.cli.run import assert_no_traceback, memtui

    enable(paths)
    write(paths.user_root / "good.md", GOOD)
    assert memtui(paths, "list").returncode == 0  # the index exists
    conn = sqlite3.connect(paths.db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute(f"PRAGMA journal_mode={journal}")
    conn.close()
    before = _db_files(paths)
    with _exclusive(paths.db_path):
        # four real processes at once against the held lock: each waits out its own busy
        # timeout, so the test takes one timeout rather than four in a row
        runs = _at_once(paths, ["status", "--json"], ["repair"], ["preview", "sqlite", "--json"], ["list", "--json"])
    (status, waited), (repaired, _), (preview, _), (listed, _) = runs
    for r in (status, repaired, preview, listed):
        assert r.returncode in (0, 1), r
        assert_no_traceback(r)
    data = json.loads(status.stdout)
    if journal == "wal":  # readable, so not "locked"; but never called damaged
        assert data["index"]["state"] == "ok" and "locked" in data["index"]["fts_integrity"], data["index"]
    else:
        assert data["index"]["state"] == "locked", data["index"]
        # one busy timeout (5 s) per command, not one per step: it took 25 s when each of
        # status's five steps waited in turn
        assert waited < 4 * BUSY_TIMEOUT_MS / 1000, waited
    assert repaired.returncode == 1 and "locked" in repaired.stderr and "nothing changed" in repaired.stderr
    assert "damaged" not in repaired.stderr
    result = json.loads(preview.stdout)
    assert "- a good memory about sqlite" in result["text"].split("\n")
    if journal == "delete":  # the conversation layer could not be read: said, with the file
        assert any(str(paths.db_path) in e["source"] + e["message"] for e in result["errors"]), result["errors"]
    assert "a good memory about sqlite" in [e["text"] for e in json.loads(listed.stdout)["entries"]]
    assert _db_files(paths)["muse.db"] == before["muse.db"]  # same inode, same bytes


def test_repair_of_a_read_only_database_changes_nothing(paths):
    from tests.cli.run import assert_no_traceback, memtui
    from tests.core.test_safety import read_only

    enable(paths)
    write(paths.user_root / "good.md", GOOD)
    assert memtui(paths, "list").returncode == 0
    conn = sqlite3.connect(paths.db_path)
    conn.execute("PRAGMA journal_mode=DELETE")  # no -wal/-shm needed: a read-only folder can be read
    conn.close()
    before = _db_files(paths)
    with read_only(paths.home):
        if os.geteuid() == 0:
            subprocess.run(["chattr", "+i", str(paths.db_path)], check=True)
        else:
            paths.db_path.chmod(0o444)
        try:
            repaired = memtui(paths, "repair")
            status = memtui(paths, "status", "--json")
        finally:
            if os.geteuid() == 0:
                subprocess.run(["chattr", "-i", str(paths.db_path)], check=True)
            else:
                paths.db_path.chmod(0o644)
    for r in (repaired, status):
        assert_no_traceback(r)
    assert repaired.returncode == 1 and "read-only" in repaired.stderr and "damaged" not in repaired.stderr, repaired
    assert _db_files(paths) == before


def test_repair_of_a_garbage_database_never_replaces_it(paths):
    from tests.cli.run import assert_no_traceback, memtui

    write(paths.user_root / "good.md", GOOD)
    paths.db_path.write_bytes(b"\x00garbage" * 1000)
    before = _db_files(paths)
    r = memtui(paths, "repair")
    assert r.returncode == 1 and "damaged" in r.stderr
    assert_no_traceback(r)
    assert _db_files(paths) == before


def test_deleting_a_conversation_memory_while_muse_db_is_locked_is_a_clear_error(paths):
    """`delete` of a conversation memory and `forget --layer conversation` under another
    program's lock: a message that says so, no sqlite3 traceback, nothing changed."""
    from memtui.core.store.conversations import Conversations
    from tests.cli.run import assert_no_traceback, memtui

    enable(paths)
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "chat", str(paths.workspace))
    db.add("the kiwi service runs on port 8080", memory_id="m1", conversation_id="c1")
    db.close()
    assert memtui(paths, "list").returncode == 0
    with _exclusive(paths.db_path):
        deleted = memtui(paths, "delete", "m1", "--yes")
        forgot = memtui(paths, "forget", "kiwi", "--layer", "conversation", "--yes")
    for r in (deleted, forgot):
        assert r.returncode == 1, r
        assert_no_traceback(r)
        assert "locked" in r.stderr and "muse.db" in r.stderr, r.stderr
    conn = sqlite3.connect(paths.db_path)
    assert conn.execute("SELECT count(*) FROM memories WHERE id = 'm1'").fetchone() == (1,)
    conn.close()


def test_undo_with_the_database_locked_says_so_and_finishes_later(paths):
    """Undoing the delete of a conversation memory while Muse holds muse.db: a clear refusal (no
    traceback), and once the lock is gone the same undo brings the row back."""
    from memtui.core.store.database import Database
    from tests.cli.run import assert_no_traceback, memtui

    enable(paths)
    Database(paths.db_path).ensure_schema()
    with sqlite3.connect(paths.db_path) as conn:
        conn.execute("INSERT INTO conversations VALUES ('c1', 'billing', ?, 1, 1)", (str(paths.workspace),))
        conn.execute("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, "
                     "created_at, updated_at) VALUES ('row-1', 'conversation', 'knowledge', 'pool size is 50', '[]', "
                     "'auto', 'c1', NULL, 1, 1)")
    conn.close()
    assert memtui(paths, "delete", "row-1", "--yes").returncode == 0
    with _exclusive(paths.db_path):
        refused = memtui(paths, "undo", real=True)
    assert_no_traceback(refused)
    assert refused.returncode == 1 and "locked" in refused.stderr and "did not finish" in refused.stderr, refused
    done = memtui(paths, "undo")
    assert done.returncode == 0, done
    rows = sqlite3.connect(paths.db_path).execute("SELECT content FROM memories WHERE id = 'row-1'").fetchall()
    assert rows == [("pool size is 50",)]
