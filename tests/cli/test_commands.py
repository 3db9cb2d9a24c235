"""`list --json`, `edit`, `delete` and `undo --list` as SPEC §6 describes them, run as a person
runs them: the real console script in a subprocess (a pseudo-terminal where it must ask)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

import pytest

from memtui.core.paths import Paths
from memtui.core.store.conversations import Conversations
from tests.cli.run import assert_no_traceback, entries, entry_id, memtui, ok, undo_log
from tests.helpers import enable, write

NOTES = ("---\ntype: preference\ntags: [tools, shell]\nupdatedAt: 2026-01-01\nimportance: high\n---\n\n"
         "## Shell\n\n- use ripgrep\n- prefer fd over find\n\n## Editors\n\n- helix for quick edits\n")


@pytest.fixture
def notes(paths: Paths) -> Path:
    return write(paths.user_root / "notes.md", NOTES)


def test_list_json_has_every_field_spec_names(paths, notes):
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "Chat", str(paths.workspace))
    db.add("the api lives on port 8080", memory_id="m1", conversation_id="c1", tags=["api"])
    db.close()
    listed = entries(paths)
    by_text = {e["text"]: e for e in listed}
    fd = by_text["prefer fd over find"]
    for key in ("id", "layer", "source", "section", "text", "tags", "importance", "status", "updated_at",
                "path", "line_start", "line_end"):
        assert key in fd, key
    assert (fd["layer"], fd["source"], fd["section"], fd["tags"], fd["importance"], fd["status"]) == (
        "user", "notes.md:11", "Shell", ["tools", "shell"], "high", "active")
    assert (fd["path"], fd["line_start"], fd["line_end"]) == (str(notes), 11, 11)  # 1-based, inclusive
    assert fd["updated_at"].startswith("2026-01-01")
    helix = by_text["helix for quick edits"]
    assert (helix["section"], helix["source"], helix["line_start"], helix["line_end"]) == ("Editors", "notes.md:15", 15, 15)
    conv = by_text["the api lives on port 8080"]
    assert (conv["id"], conv["layer"], conv["tags"]) == ("m1", "conversation", ["api"])
    assert "path" not in conv
    # ids are stable across processes
    assert [e["id"] for e in entries(paths)] == [e["id"] for e in listed]
    assert [e["text"] for e in entries(paths, "--layer", "conversation")] == ["the api lives on port 8080"]


def test_edit_changes_only_that_entrys_lines(paths, notes):
    target = entry_id(paths, "use ripgrep")
    r = ok(memtui(paths, "edit", target, "use ripgrep, always with --hidden"))
    assert "notes.md:10" in r.stdout and "memtui undo" in r.stdout
    before, after = NOTES.splitlines(), notes.read_text().splitlines()
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(before) == len(after)
    assert [before[i].split(":")[0] for i in changed if before[i].startswith("updatedAt")] == ["updatedAt"]
    assert [after[i] for i in changed if not after[i].startswith("updatedAt")] == ["- use ripgrep, always with --hidden"]
    assert "use ripgrep, always with --hidden" in [e["text"] for e in entries(paths)]


def test_edit_reads_the_text_from_stdin_with_a_dash(paths, notes):
    target = entry_id(paths, "helix for quick edits")
    ok(memtui(paths, "edit", target, "-", input="helix for quick edits\nand for long ones\n"))
    assert notes.read_text().endswith("- helix for quick edits\n  and for long ones\n")
    listed = entries(paths)
    assert listed[-1]["line_start"] == 15 and listed[-1]["line_end"] == 16


def test_a_multi_line_item_reads_back_without_its_content_indent(paths, notes):
    """SPEC §2: an item's other lines lose the item's content indent, and an edited entry
    reads back as exactly the text given."""
    target = entry_id(paths, "helix for quick edits")
    ok(memtui(paths, "edit", target, "-", input="helix for quick edits\nand for long ones\n"))
    assert "helix for quick edits\nand for long ones" in [e["text"] for e in entries(paths)]


def test_edit_of_a_conversation_memory_by_id(paths):
    db = Conversations(paths.db_path)
    db.add("port 8080", memory_id="m1")
    db.close()
    ok(memtui(paths, "edit", "m1", "port 9090"))
    assert [e["text"] for e in entries(paths)] == ["port 9090"]


@pytest.mark.parametrize("args,message", [
    (["edit", "no-such-id", "x"], "no memory has the id or source 'no-such-id'"),
    (["delete", "no-such-id", "--yes"], "no memory has the id or source 'no-such-id'"),
    (["delete", "no-such-id"], "no memory has the id or source 'no-such-id'"),
])
def test_unknown_id_is_exit_1_with_a_clear_message(paths, notes, args, message):
    r = memtui(paths, *args)
    assert r.returncode == 1 and message in r.stderr and "memtui list" in r.stderr, r
    assert_no_traceback(r)
    assert notes.read_text() == NOTES


def test_an_empty_edit_is_refused_and_writes_nothing(paths, notes):
    r = memtui(paths, "edit", entry_id(paths, "use ripgrep"), "-", input="   \n")
    assert r.returncode == 1 and "cannot be empty" in r.stderr, r
    assert_no_traceback(r)
    assert notes.read_text() == NOTES and undo_log(paths) == []


def test_an_edit_that_would_break_its_neighbours_is_refused(paths):
    """SPEC §2: two paragraphs in a file of paragraphs would become two entries."""
    prose = write(paths.user_root / "prose.md", "- an item\n\nFirst paragraph.\n\nSecond paragraph.\n")
    r = memtui(paths, "edit", entry_id(paths, "First paragraph."), "-", input="now two\n\nparagraphs\n")
    assert r.returncode == 1 and "not written" in r.stderr, r
    assert_no_traceback(r)
    assert prose.read_text() == "- an item\n\nFirst paragraph.\n\nSecond paragraph.\n" and undo_log(paths) == []


def test_missing_arguments_are_usage_errors(paths):
    for args in (["edit"], ["edit", "some-id"], ["delete"]):
        r = memtui(paths, *args)
        assert r.returncode == 2 and "Usage" in r.stderr, r


def test_delete_with_yes_deletes_exactly_that_entry(paths, notes):
    r = ok(memtui(paths, "delete", entry_id(paths, "prefer fd over find"), "--yes"))
    assert "notes.md:11" in r.stdout and "Deleted" in r.stdout
    assert "prefer fd" not in notes.read_text()
    assert [e["text"] for e in entries(paths)] == ["use ripgrep", "helix for quick edits"]


def test_delete_without_a_terminal_refuses(paths, notes):
    r = memtui(paths, "delete", entry_id(paths, "use ripgrep"))
    assert r.returncode == 1 and "No terminal to confirm on; nothing deleted" in r.stderr and "--yes" in r.stderr
    assert notes.read_text() == NOTES


def _in_terminal(paths: Paths, *args: str, answer: str, timeout: float = 60) -> tuple[int, str]:
    """Run memtui on a pseudo-terminal (stdin, stdout and stderr, as in a shell), answer its
    question when it asks, and return its exit code and everything it printed."""
    import shutil
    import sys

    exe = shutil.which("memtui", path=str(Path(sys.executable).parent))
    assert exe
    master, slave = os.openpty()
    proc = subprocess.Popen([exe, "--home", str(paths.home), "-w", str(paths.workspace), *args],
                            stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    out = b""
    answered = False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every copy of the terminal's other end is closed (the child exited)
                break
            if not chunk:
                break
            out += chunk
            if not answered and b"[y/N]" in out:
                os.write(master, answer.encode() + b"\r")
                answered = True
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    text = out.decode(errors="replace")
    assert answered, text
    assert "Traceback" not in text, text
    return code, text


@pytest.mark.parametrize("answer,deleted", [("n", False), ("y", True), ("", False)])
def test_delete_asks_on_a_terminal(paths, notes, answer, deleted):
    code, out = _in_terminal(paths, "delete", entry_id(paths, "use ripgrep"), answer=answer)
    assert "notes.md:10" in out and "use ripgrep" in out and "Delete it?" in out  # names what it deletes
    if deleted:
        assert code == 0 and "- use ripgrep\n" not in notes.read_text()
    else:
        assert code == 1 and "Nothing deleted" in out and notes.read_text() == NOTES


def test_forget_asks_on_a_terminal(paths, notes):
    enable(paths)
    code, out = _in_terminal(paths, "forget", "ripgrep", answer="y")
    assert code == 0 and "1 memory matches" in out and "- use ripgrep\n" not in notes.read_text()


def test_edit_and_delete_work_when_memory_is_off(paths, notes):
    ok(memtui(paths, "edit", entry_id(paths, "use ripgrep"), "use ripgrep -uu"))
    ok(memtui(paths, "delete", entry_id(paths, "helix for quick edits"), "--yes"))
    assert [e["text"] for e in entries(paths)] == ["use ripgrep -uu", "prefer fd over find"]


def test_undo_list_text_and_json_newest_first(paths, notes):
    ok(memtui(paths, "edit", entry_id(paths, "use ripgrep"), "use ripgrep -uu"))
    ok(memtui(paths, "delete", entry_id(paths, "helix for quick edits"), "--yes"))
    ok(memtui(paths, "undo"))
    log = undo_log(paths)
    assert [(c["action"], c["state"]) for c in log] == [("delete", "undone"), ("edit", "done")]
    assert log[0]["time"] >= log[1]["time"]
    for c in log:
        assert set(c) >= {"id", "time", "action", "summary", "files", "rows", "state"}
    text = ok(memtui(paths, "undo", "--list")).stdout.splitlines()
    assert len(text) == 2 and text[0].endswith("(undone)") and log[0]["summary"] in text[0]
    assert log[1]["summary"] in text[1] and "(undone)" not in text[1]


def test_list_of_one_layer_reads_that_layer_alone(paths, notes):
    """`list --layer user` shows the user layer, and only its own problems: a broken project
    file is not read (every layer was loaded before: at LARGE 0.8 s instead of 0.25 s)."""
    write(paths.project_root / "broken.md", "---\ntags: [unclosed\n---\n- a project memory\n")
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "Chat", str(paths.workspace))
    db.add("the api lives on port 8080", memory_id="m1", conversation_id="c1")
    db.close()
    whole = memtui(paths, "list")
    assert "broken.md" in whole.stderr and "port 8080" in whole.stdout
    user = ok(memtui(paths, "list", "--layer", "user"))
    assert "use ripgrep" in user.stdout and "port 8080" not in user.stdout
    assert "broken.md" not in user.stderr, user.stderr
    conversation = ok(memtui(paths, "list", "--layer", "conversation", "--json"))
    assert [e["text"] for e in json.loads(conversation.stdout)["entries"]] == ["the api lives on port 8080"]


def test_undo_list_reads_the_log_alone(paths, notes, monkeypatch):
    """Listing the log reads no memory (at LARGE loading them was most of the command's
    0.8 s). Run in this process (click's runner), so the patched load is the command's."""
    from click.testing import CliRunner

    from memtui.cli.main import main
    from memtui.core.store import MemoryStore

    ok(memtui(paths, "edit", entry_id(paths, "use ripgrep"), "use ripgrep -uu"))

    def no_load(self):
        raise AssertionError("undo --list loaded the memories")

    monkeypatch.setattr(MemoryStore, "load", no_load)
    runner = CliRunner()
    listed = runner.invoke(main, ["--home", str(paths.home), "-w", str(paths.workspace), "undo", "--list"])
    assert listed.exit_code == 0, listed.output
    assert "edit" in listed.output and "(done)" in listed.output
    undone = runner.invoke(main, ["--home", str(paths.home), "-w", str(paths.workspace), "undo"])
    assert "loaded the memories" in str(undone.exception)  # (an undo does load them: the patch is the command's)


def test_undo_on_a_fresh_machine_says_so_and_creates_nothing(tmp_path):
    fresh = Paths(tmp_path / "no-muse-yet", tmp_path / "project")
    (tmp_path / "project").mkdir()
    r = memtui(fresh, "undo")
    assert r.returncode == 1 and "Nothing to undo" in r.stderr
    assert ok(memtui(fresh, "undo", "--list")).stdout.strip() == "No changes logged."
    assert undo_log(fresh) == []
    assert not fresh.home.exists()
