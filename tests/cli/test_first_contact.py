"""A newcomer's first hour with the CLI (SPEC §6): REF is an id or a source label, commands
that change an entry print its new id, plain `list` shows ids, every flag is honoured or
refused, imports that read nothing fail, text may start with `-`, `doctor --fix` says what it
did. Each run in a process of its own (tests/cli/run.py)."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.core.paths import Paths
from tests.cli.run import entries, entry_id, memtui, ok
from tests.helpers import enable, write

NOTES = "---\ntype: knowledge\n---\n\n- use ripgrep\n- prefer fd over find\n"


@pytest.fixture
def notes(paths: Paths) -> Path:
    enable(paths)
    return write(paths.user_root / "notes.md", NOTES)


def _new_id(stdout: str) -> str:
    found = re.search(r"id ([0-9a-f]{16})", stdout)
    assert found, stdout
    return found.group(1)


def test_edit_twice_with_the_id_each_command_prints(paths, notes):
    first = ok(memtui(paths, "edit", entry_id(paths, "use ripgrep"), "use ripgrep -S"))
    new = _new_id(first.stdout)
    assert new == entry_id(paths, "use ripgrep -S")
    second = ok(memtui(paths, "edit", new, "use ripgrep -uu"))
    assert _new_id(second.stdout) == entry_id(paths, "use ripgrep -uu")
    assert "- use ripgrep -uu\n" in notes.read_text()


def test_edit_and_delete_take_the_source_label(paths, notes):
    r = ok(memtui(paths, "edit", "notes.md:5", "use ripgrep, always"))
    assert "notes.md:5" in r.stdout and _new_id(r.stdout) == entry_id(paths, "use ripgrep, always")
    ok(memtui(paths, "delete", "notes.md:6", "--yes"))
    assert [e["text"] for e in entries(paths)] == ["use ripgrep, always"]
    missing = memtui(paths, "delete", "notes.md:60", "--yes")
    assert missing.returncode == 1 and "notes.md:60" in missing.stderr and "memtui list" in missing.stderr


def test_a_label_in_two_layers_needs_the_layer(paths, notes):
    write(paths.project_root / "notes.md", NOTES.replace("ripgrep", "the project's grep"))
    r = memtui(paths, "delete", "notes.md:5", "--yes")
    assert r.returncode == 2 and "--layer" in r.stderr
    ok(memtui(paths, "delete", "notes.md:5", "--layer", "project", "--yes"))
    assert "the project's grep" not in (paths.project_root / "notes.md").read_text()
    assert notes.read_text() == NOTES


def test_plain_list_shows_each_id(paths, notes):
    shown = ok(memtui(paths, "list")).stdout
    for e in entries(paths):
        line = next(line for line in shown.splitlines() if e["text"] in line)
        assert e["id"] in line and e["source"] in line


def test_remember_prints_the_new_id_and_writes_block_frontmatter(paths):
    enable(paths)
    r = ok(memtui(paths, "remember", "queues retry three times"))
    assert _new_id(r.stdout) == entry_id(paths, "queues retry three times")
    text = paths.default_file("user").read_text()
    assert text.startswith("---\ntype: knowledge\nupdatedAt: ")  # block style, one key a line
    # a later change keeps the date current (it was stuck when the header was a flow mapping)
    paths.default_file("user").write_text(re.sub(r"updatedAt: \S+", "updatedAt: 2020-01-01", text))
    ok(memtui(paths, "remember", "workers scale on queue depth"))
    assert "updatedAt: 2020-01-01" not in paths.default_file("user").read_text()


def test_remember_flags_that_the_file_does_not_have_are_refused(paths, notes):
    for flags in (["--tag", "webhooks", "--tag", "stripe"], ["--category", "bogus"]):
        r = memtui(paths, "remember", "stripe webhooks are idempotent", *flags)
        assert r.returncode == 2, (flags, r)
        assert str(notes) in r.stderr and "nothing was written" in r.stderr
        assert notes.read_text() == NOTES
    ok(memtui(paths, "remember", "stripe webhooks are idempotent", "--category", "knowledge"))  # what it has


def test_remember_flags_on_a_new_file_are_honoured(paths):
    enable(paths)
    ok(memtui(paths, "remember", "webhooks are signed", "--tag", "webhooks", "--category", "decision"))
    listed = entries(paths)
    assert [(e["category"], e["tags"]) for e in listed] == [("decision", ["webhooks"])]


@pytest.mark.parametrize("args,words", [
    (["remember", "--no-verify is never used"], ["remember --", "--no-verify is never used"]),
    (["edit", "notes.md:5", "- a dash first"], ["edit REF --", "- a dash first"]),
])
def test_text_that_starts_with_a_dash_says_to_use_double_dash(paths, notes, args, words):
    r = memtui(paths, *args)
    assert r.returncode == 2 and "after '--'" in r.stderr, r.stderr
    for word in words:
        assert word in r.stderr
    assert notes.read_text() == NOTES


def test_text_that_starts_with_a_dash_is_accepted_after_double_dash(paths, notes):
    ok(memtui(paths, "remember", "--", "--no-verify is never used"))
    ok(memtui(paths, "edit", "notes.md:5", "--", "-S is smart case"))
    assert {e["text"] for e in entries(paths)} >= {"--no-verify is never used", "-S is smart case"}


def test_imports_that_read_nothing_exit_1(paths, tmp_path):
    enable(paths)
    missing = memtui(paths, "import", "claude-code", str(tmp_path / "nonexistent"))
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    garbage = write(tmp_path / "notes.jsonl", "this is not json\nnor is this\n")
    bad = memtui(paths, "import", "jsonl", str(garbage))
    assert bad.returncode == 1 and "every record" in bad.stderr and str(garbage) in bad.stderr
    assert memtui(paths, "import", "jsonl", str(garbage), "--json").returncode == 1
    empty = tmp_path / "no-rules"
    empty.mkdir()
    none = memtui(paths, "import", "cursor", str(empty))
    assert none.returncode == 1 and "found no cursor memories" in none.stderr
    assert entries(paths) == []


def test_import_project_and_user_together_is_a_usage_error(paths, tmp_path):
    enable(paths)
    backup = write(tmp_path / "b.jsonl", json.dumps({"memory": {"id": "a", "content": "x"}}) + "\n")
    r = memtui(paths, "import", "jsonl", str(backup), "--project", "--user")
    assert r.returncode == 2 and "--project and --user" in r.stderr
    assert entries(paths) == []


def test_doctor_fix_says_what_it_fixed(paths, notes):
    ok(memtui(paths, "status"))  # builds the index
    write(paths.user_root / "more.md", "- written behind memtui's back\n")
    r = memtui(paths, "doctor", "--fix")
    assert r.stdout.startswith("Fixed 1 of 1 index finding: Index rebuilt"), r.stdout
    again = memtui(paths, "doctor", "--fix")
    assert again.stdout.startswith("Nothing to fix"), again.stdout


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
def test_demo_removes_its_temporary_folder_when_the_terminal_closes(tmp_path, sig):
    """`memtui --demo` on a pseudo-terminal, then the hang-up a closed terminal (or `tmux
    kill-session`) sends, or a plain `kill`: the process ends and its sample set is gone."""
    exe = shutil.which("memtui", path=str(Path(sys.executable).parent))
    assert exe
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = dict(os.environ, TMPDIR=str(temp), TERM="xterm-256color", COLUMNS="100", LINES="30")
    master, slave = os.openpty()
    proc = subprocess.Popen([exe, "--demo"], stdin=slave, stdout=slave, stderr=slave, close_fds=True, env=env,
                            start_new_session=True)
    os.close(slave)
    out = b""
    try:
        deadline = time.monotonic() + 60
        while b"demo" not in out and time.monotonic() < deadline:  # the app is up: its header says demo
            if select.select([master], [], [], 0.1)[0]:
                try:
                    out += os.read(master, 65536)
                except OSError:
                    break
            assert proc.poll() is None, out.decode(errors="replace")
        assert b"demo" in out and list(temp.glob("memtui-demo-*")), out.decode(errors="replace")
        proc.send_signal(sig)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    os.read(master, 65536)  # keep the terminal drained so the app never blocks on it
                except OSError:
                    pass
        assert proc.poll() == -sig, proc.poll()  # ended by the signal, as it would have been
        assert list(temp.glob("memtui-demo-*")) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
