"""Writers at once (SPEC §8): several processes appending to one file, and a TUI-like editor
racing the CLI. Every write a writer was told succeeded is in the file at the end; a writer
that lost a race gets a conflict (and may retry), never a silent overwrite."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from memtui.core import actions
from memtui.core import markdown as md
from memtui.core.paths import Paths
from memtui.core.store import MemoryStore
from tests.cli.run import memtui, ok
from tests.helpers import enable, write

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 4
WRITES = 100
TIMEOUT = 300  # seconds for the whole race; a deadlock fails the test


def note(writer: int, i: int) -> str:
    """Texts no two of which are near-duplicates (so `remember` writes every one)."""
    digest = hashlib.sha256(f"{writer}/{i}".encode()).hexdigest()
    return f"w{writer} n{i} {digest[:12]} {digest[40:52]}"


REMEMBER_CHILD = r"""
import sys
from pathlib import Path
from memtui.core import actions
from memtui.core.paths import Paths
from tests.core.test_concurrency import note

home, ws, writer, count, layer = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
attempts = int(sys.argv[6]) if len(sys.argv) > 6 else 200
paths = Paths(Path(home), Path(ws))
store = actions.open_store(paths)
print("ready", flush=True)
assert sys.stdin.readline().strip() == "go"
conflicts = 0
for i in range(count):
    text = note(writer, i)
    for attempt in range(attempts):
        try:
            done = actions.remember(store, text, layer)
        except actions.Conflict:
            conflicts += 1
            store.reload(full=True)
            continue
        assert done.duplicate_of is None, (text, done.duplicate_of.text)
        print("confirmed", text, flush=True)  # told the person: remembered
        break
    else:
        print("gave up", text, flush=True)
print("conflicts", conflicts, flush=True)
"""


def _start(paths: Paths, writer: int, count: int, layer: str = "user", attempts: int = 200) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", REMEMBER_CHILD, str(paths.home), str(paths.workspace),
                             str(writer), str(count), layer, str(attempts)],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _confirmed(out: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("confirmed ")]


def test_parallel_remembers_to_one_file_lose_nothing(paths):
    """With one attempt per text (no retry by the caller) every remember is confirmed: an
    append is made under the writer lock from the file as it is then, so another writer
    appending at the same time can never starve it (it was 82 of 400). (A run with retries
    allowed proves nothing more: with one attempt, "gave up" would already fail it.)"""
    enable(paths)
    notes = write(paths.default_file("user"), "---\ntype: knowledge\n---\n\n- written before the race\n")
    children = [_start(paths, w, WRITES, attempts=1) for w in range(WRITERS)]
    try:
        for child in children:  # every writer is loaded and waiting: then all start at once
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        results = [child.communicate(timeout=TIMEOUT) for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    confirmed: list[str] = []
    for child, (out, err) in zip(children, results):
        assert child.returncode == 0, err
        assert "gave up" not in out
        confirmed += _confirmed(out)
    assert len(confirmed) == WRITERS * WRITES
    text = notes.read_text()
    lines = text.splitlines()
    for c in confirmed:
        assert lines.count(f"- {c}") == 1, c  # there, exactly once
    assert "- written before the race" in lines
    parsed = md.parse_text(text)
    assert len(parsed.entries) == WRITERS * WRITES + 1
    store = MemoryStore(paths)
    store.load()
    assert store.problems == [] and len(store.entries("user")) == WRITERS * WRITES + 1
    store.close()
    assert not [p for p in notes.parent.iterdir() if p.name.endswith(".tmp")]  # no temp file left behind


def test_parallel_remembers_in_both_layers_and_the_conversation_layer(paths):
    enable(paths)
    layers = ["user", "project", "conversation", "user"]
    children = [_start(paths, w, 25, layer) for w, layer in enumerate(layers)]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        results = [child.communicate(timeout=TIMEOUT) for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    store = MemoryStore(paths)
    store.load()
    for child, layer, (out, err) in zip(children, layers, results):
        assert child.returncode == 0, err
        have = {e.text for e in store.entries(layer)}
        assert set(_confirmed(out)) <= have and len(_confirmed(out)) == 25
    store.close()


EDITOR_CHILD = r"""
import sys
from pathlib import Path
from memtui.core import actions
from memtui.core.paths import Paths
from tests.core.test_concurrency import note

home, ws, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = actions.open_store(Paths(Path(home), Path(ws)))
print("ready", flush=True)
assert sys.stdin.readline().strip() == "go"
for i in range(count):
    while True:
        try:
            actions.remember(store, note(9, i), "user")
            print("confirmed", note(9, i), flush=True)
            break
        except actions.Conflict:
            store.reload(full=True)
"""


def test_tui_like_edits_race_cli_remembers(paths):
    """The TUI keeps a loaded store and edits the entry the person selected; meanwhile the CLI
    (another process) appends. A stale edit is a conflict the person sees; nothing is lost."""
    enable(paths)
    notes = write(paths.default_file("user"), "- the entry being edited\n- a neighbour\n")
    tui = MemoryStore(paths)
    tui.load()
    selected = next(e for e in tui.entries("user") if e.text == "the entry being edited")

    # one CLI write between the TUI's read and its save: the save is refused, not applied over it
    ok(memtui(paths, "remember", "appended by the cli meanwhile"))
    try:
        actions.edit(tui, selected, "the TUI's stale save")
        raise AssertionError("a stale save went through")
    except actions.Conflict as exc:
        assert str(notes) in str(exc)
    assert "appended by the cli meanwhile" in notes.read_text() and "stale save" not in notes.read_text()

    # then a whole race: the TUI saves edits (reloading on each conflict) while a CLI-like
    # writer appends
    child = subprocess.Popen([sys.executable, "-c", EDITOR_CHILD, str(paths.home), str(paths.workspace), "60"],
                             cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
        saved: list[str] = []
        conflicts = 0
        version = 0
        while child.poll() is None or not saved:
            tui.reload(changed=[notes], conversation=False)
            current = next(e for e in tui.entries("user") if e.text.startswith("the entry being edited")
                           or e.text.startswith("edited in the tui"))
            version += 1
            try:
                entry = actions.edit(tui, current, f"edited in the tui, version {version}")
                assert entry is not None
                saved.append(entry.text)
            except actions.Conflict:
                conflicts += 1
        out, err = child.communicate(timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    lines = notes.read_text().splitlines()
    for c in _confirmed(out):
        assert lines.count(f"- {c}") == 1, c
    assert len(_confirmed(out)) == 60
    assert f"- {saved[-1]}" in lines  # the TUI's last confirmed save is what the file holds
    assert "- a neighbour" in lines and "- appended by the cli meanwhile" in lines
    assert sum(line.startswith("- edited in the tui") for line in lines) == 1
    tui.close()
