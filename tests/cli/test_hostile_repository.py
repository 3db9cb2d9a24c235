"""What a cloned repository (or another program) can put in memtui's way, through the real
faces (issue 32): folders nested deeper than Python's recursion limit, a settings file
nested 100k deep, lone surrogates, a damaged vector cache, a `.gitattributes` that is a
FIFO or a link to /dev/zero, an undo onto a FIFO. Each is a clear error for that one file
(or row), never a traceback, never a hang, and the other layers still inject.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.paths import Paths
from tests.cli.run import memtui
from tests.core.test_bounded_reader import nest, unnest
from tests.helpers import enable, write

HOOK = [sys.executable, "-m", "memtui.cli.hook"]
DEPTH = 1100  # past Python's recursion limit (1000)
USER = "- Always answer in haiku zebracorn\n"
PROJECT = "- The billing service owns invoices zebracorn\n"
PROMPT = "tell me about zebracorn"


@pytest.fixture
def ws(paths: Paths) -> Paths:
    write(paths.user_root / "prefs.md", "# Prefs\n\n" + USER)
    write(paths.project_root / "notes.md", "# Notes\n\n" + PROJECT)
    enable(paths)
    return paths


def run_hook(paths: Paths, prompt: str = PROMPT) -> subprocess.CompletedProcess[str]:
    data = {"hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": str(paths.workspace), "session_id": "s"}
    env = {**os.environ, "MUSE_HOME": str(paths.home)}
    return subprocess.run(HOOK, input=json.dumps(data), capture_output=True, text=True, env=env, timeout=60)


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr and "Error:" not in result.stderr.replace("error:", ""), result.stderr


# ---------------------------------------------------------------------- 1,100 nested folders


@pytest.fixture
def deep_memory(ws):
    deep = nest(ws.project_root / "n", DEPTH)
    write(deep / "deep.md", "# Deep\n\n- found at the bottom zebracorn\n")
    yield ws
    unnest(ws.project_root / "n", DEPTH)


@pytest.mark.parametrize("command", [["status"], ["list"], ["preview", PROMPT], ["doctor"]])
def test_folders_nested_past_the_recursion_limit_are_walked(deep_memory, command):
    result = memtui(deep_memory, *command)
    no_traceback(result)
    assert result.returncode in (0, 1), result.stderr  # doctor exits 1 with findings
    if command[0] in ("list", "preview"):
        assert "found at the bottom" in result.stdout and "haiku" in result.stdout


def test_the_hook_injects_every_layer_beside_folders_nested_past_the_recursion_limit(deep_memory):
    result = run_hook(deep_memory)
    assert result.returncode == 0
    assert "haiku" in result.stdout and "found at the bottom" in result.stdout, result.stderr


@pytest.mark.parametrize(("fmt", "folder", "name"), [("cursor", ".cursor/rules", "rule.mdc"),
                                                     ("cline", "memory-bank", "context.md")])
def test_import_walks_folders_nested_past_the_recursion_limit(ws, fmt, folder, name):
    top = ws.workspace / folder
    write(top / name, "Prefer small pull requests\n")
    deep = nest(top / "n", DEPTH)
    write(deep / name, "Deep rule: keep zebracorn tidy\n")
    try:
        result = memtui(ws, "import", fmt, "--dry-run")
        no_traceback(result)
        assert result.returncode == 0, result.stderr
    finally:
        unnest(top / "n", DEPTH)


# ---------------------------------------------------------------------- a settings file nested 100k deep

DEEP_JSON = '{"memoryEnabled": true, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize("command", [["status"], ["preview", PROMPT], ["doctor"], ["enable"]])
def test_a_settings_file_nested_100k_deep_is_a_clear_error(ws, command):
    (ws.workspace / ".muse" / "settings.json").write_text(DEEP_JSON)
    result = memtui(ws, *command)
    no_traceback(result)
    shown = result.stdout + result.stderr
    if command[0] == "preview":  # the problem is counted there, and named by status
        assert "1 problem" in shown and "haiku" in shown, shown
    else:
        assert "nested more than 256 levels deep" in shown, shown
    assert (ws.workspace / ".muse" / "settings.json").read_text() == DEEP_JSON  # never rewritten


def test_the_hook_injects_the_user_layer_beside_a_settings_file_nested_100k_deep(ws):
    (ws.workspace / ".muse" / "settings.json").write_text(DEEP_JSON)
    result = run_hook(ws)
    assert result.returncode == 0
    assert "haiku" in result.stdout, result.stderr


# ---------------------------------------------------------------------- lone surrogates

SURROGATE_JSON = '{"theme": "\\ud800", "memoryEnabled": true}\n'


@pytest.mark.parametrize(("command", "config"), [
    (["enable"], "{ws}/.muse/settings.json"),
    (["hook", "install", "claude-code"], "{home}/.claude/settings.json"),
    (["hook", "install", "claude-code", "--project"], "{ws}/.claude/settings.local.json"),
    (["mcp", "install", "claude-code", "--dry-run"], "{home}/.claude.json"),
    (["mcp", "install", "cursor", "--project", "--dry-run"], "{ws}/.cursor/mcp.json"),
])
def test_a_lone_surrogate_in_a_json_config_is_a_clear_error(ws, command, config):
    path = Path(config.format(ws=ws.workspace, home=os.environ["HOME"]))
    write(path, SURROGATE_JSON)
    result = memtui(ws, *command)
    no_traceback(result)
    assert result.returncode == 1
    assert "lone surrogate (\\ud800)" in result.stderr and str(path) in result.stderr, result.stderr
    assert path.read_text() == SURROGATE_JSON


def test_a_lone_surrogate_in_one_jsonl_record_is_that_records_error_alone(ws):
    source = write(ws.workspace / "in.jsonl", '{"text": "Prefer tabs in makefiles", "layer": "project"}\n'
                                              '{"text": "bad \\ud800 one", "layer": "project"}\n')
    result = memtui(ws, "import", "jsonl", str(source))
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert "in.jsonl:2: not a memory: a string holds a lone surrogate" in result.stderr
    assert "Prefer tabs in makefiles" in memtui(ws, "list").stdout


def memory_files(paths: Paths) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for root in (paths.user_root, paths.project_root) for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_an_mcp_request_with_a_lone_surrogate_is_refused_by_name_and_writes_nothing(ws):
    """A lone surrogate in a tool's argument (valid JSON, which a JavaScript client can send;
    the Python SDK refuses to send one) gets a reply: an error naming the argument, nothing
    remembered or forgotten; the next request is served. (It was the SDK's silence, then a
    silent U+FFFD in the memory.)"""
    import select
    import time

    server = subprocess.Popen([sys.executable, "-m", "memtui.cli.entry", "--home", str(ws.home), "-w", str(ws.workspace),
                               "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def ask(line: str) -> dict:
        server.stdin.write(line.encode() + b"\n")
        server.stdin.flush()
        end = time.monotonic() + 60
        while time.monotonic() < end:
            ready, _, _ = select.select([server.stdout], [], [], 1)
            if ready:
                return json.loads(server.stdout.readline())
        raise AssertionError(f"no reply to {line}")

    def call(n: int, tool: str, arguments: str) -> tuple[bool, str]:
        reply = ask(f'{{"jsonrpc": "2.0", "id": {n}, "method": "tools/call", '
                    f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}')
        assert reply["id"] == n, reply
        return reply["result"].get("isError", False), json.dumps(reply["result"])

    before = memory_files(ws)
    try:
        ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        for n, tool, arguments, name in [
            (2, "search_memories", '{"query": "zebracorn \\ud800"}', "query"),
            (3, "remember", '{"text": "Deploy on Fridays \\udfff never", "layer": "project"}', "text"),
            (4, "remember", '{"text": "Deploy on Fridays", "category": "ops\\ud83d"}', "category"),
            (5, "forget", '{"id": "\\udc00abcdef"}', "id"),
            (6, "preview_injection", '{"message": "zebracorn", "files": ["a.py", "b\\ud800.py"]}', "files"),
        ]:
            error, text = call(n, tool, arguments)
            assert error and f"`{name}` holds a lone surrogate" in text, text
        assert memory_files(ws) == before  # nothing remembered, nothing forgotten
        error, text = call(7, "search_memories", '{"query": "zebracorn"}')
        assert not error and "billing service" in text
        error, text = call(8, "search_memories", '{"query": "zebracorn \\ud83d\\ude00"}')  # a pair is text
        assert not error and "billing service" in text
    finally:
        server.stdin.close()
        server.wait(timeout=60)


# ---------------------------------------------------------------------- a damaged vector cache

HAS_MODEL = __import__("importlib.util").util.find_spec("wordllama") is not None


def _npz_like(path: Path, vectors) -> None:
    """`path` saved again with its own stamp and other `vectors`."""
    import io

    import numpy as np

    with np.load(io.BytesIO(path.read_bytes())) as saved:
        stamp = saved["stamp"]
    buffer = io.BytesIO()
    np.savez(buffer, stamp=stamp, vectors=vectors(saved_shape(path)))
    path.write_bytes(buffer.getvalue())


def saved_shape(path: Path) -> tuple[int, ...]:
    import io

    import numpy as np

    with np.load(io.BytesIO(path.read_bytes())) as saved:
        return tuple(saved["vectors"].shape)


def _fifo_in_place(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _link_to_fifo(path: Path) -> None:
    fifo = path.parent.parent / "elsewhere.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    path.unlink()
    path.symlink_to(fifo)


def _npy_rows(path: Path, change) -> None:
    import numpy as np

    rows = np.load(path)
    change(rows)
    with path.open("wb") as out:
        np.save(out, rows)


DAMAGE = {
    "empty npy": ("vectors-*.npy", lambda p: p.write_bytes(b"")),
    "cut npy": ("vectors-*.npy", lambda p: p.write_bytes(p.read_bytes()[:-100])),
    "NaN npy": ("vectors-*.npy", lambda p: _npy_rows(p, lambda rows: rows["vec"].fill(float("nan")))),
    "other layout npy": ("vectors-*.npy", lambda p: __import__("numpy").save(p, __import__("numpy").zeros((3, 7)))),
    "FIFO npy": ("vectors-*.npy", _fifo_in_place),
    "link to a FIFO npy": ("vectors-*.npy", _link_to_fifo),
    "cut npz": ("layer-vectors-*-user.npz", lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])),
    "empty npz": ("layer-vectors-*-user.npz", lambda p: p.write_bytes(b"")),
    "wrong shape npz": ("layer-vectors-*-user.npz",
                        lambda p: _npz_like(p, lambda s: __import__("numpy").zeros((s[0], s[1] + 1), "float32"))),
    "NaN npz": ("layer-vectors-*-user.npz",
                lambda p: _npz_like(p, lambda s: __import__("numpy").full(s, float("nan"), "float32"))),
    "FIFO npz": ("layer-vectors-*-user.npz", _fifo_in_place),
    "link to a FIFO npz": ("layer-vectors-*-user.npz", _link_to_fifo),
}


@pytest.mark.skipif(not HAS_MODEL, reason="the semantic extra is not installed")
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_vector_cache_is_rebuilt_or_ignored_and_the_hook_still_injects(ws, damage):
    enable(ws, {"memory": {"retrieval": "hybrid"}})
    for _ in range(5):  # the prepared index is saved first, the layers' vectors beside it on a later run
        assert "haiku" in run_hook(ws).stdout
        if list((ws.home / "cache").glob("layer-vectors-*-user.npz")):
            break
    spoil_cache(ws, damage)
    hook = run_hook(ws)
    assert hook.returncode == 0 and "haiku" in hook.stdout, hook.stderr
    assert "Traceback" not in hook.stderr
    spoil_cache(ws, damage)  # again for preview (the hook may have rebuilt it): its note is on stderr
    result = memtui(ws, "preview", "--json", PROMPT)
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"{c} in preview --json"))
    assert "haiku" in data["text"]
    assert "not used" in result.stderr or "rebuilt" in result.stderr, result.stderr


def spoil_cache(ws: Paths, damage: str) -> None:
    pattern, spoil = DAMAGE[damage]
    cache = ws.home / "cache"
    targets = sorted(cache.glob(pattern))
    assert targets, sorted(cache.iterdir())
    for path in targets:
        if path.is_symlink() or not path.is_file():
            continue  # the FIFO or link of the last time, still there (nothing replaced it)
        spoil(path)
    if pattern.startswith("vectors-"):  # read only when a layer's own saved vectors are not there
        for path in cache.glob("layer-vectors-*.npz"):
            path.unlink()


# ---------------------------------------------------------------------- .gitattributes, undo


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link_to_dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize("make", [_fifo, _link_to_dev_zero], ids=["FIFO", "link to /dev/zero"])
@pytest.mark.parametrize("uninstall", [False, True], ids=["install", "uninstall"])
def test_git_install_reads_gitattributes_bounded(ws, make, uninstall):
    subprocess.run(["git", "init", "-q", str(ws.workspace)], check=True, timeout=60)
    make(ws.workspace / ".gitattributes")
    result = memtui(ws, "git", "install", *(["--uninstall"] if uninstall else []))
    no_traceback(result)
    assert result.returncode == 1
    assert f"{ws.workspace / '.gitattributes'}: is a" in result.stderr and "not a regular file" in result.stderr


def test_undo_onto_a_file_that_is_now_a_fifo_is_a_conflict_not_a_hang(ws):
    assert memtui(ws, "remember", "--project", "Deploys go out on Tuesdays").returncode == 0
    target = ws.project_root / "notes.md"
    if "Tuesdays" not in target.read_text():
        target = next(p for p in ws.project_root.glob("*.md") if "Tuesdays" in p.read_text())
    target.unlink()
    os.mkfifo(target)
    result = memtui(ws, "undo")
    no_traceback(result)
    assert result.returncode == 1
    assert f"{target} is a FIFO (named pipe), not a regular file now; not restored" in result.stderr
    assert "(conflicting)" in memtui(ws, "undo", "--list").stdout


# ---------------------------------------------------------------------- names and rows that are not UTF-8


@pytest.mark.parametrize(("fmt", "folder", "suffix"), [("cursor", ".cursor/rules", ".mdc"), ("cline", "memory-bank", ".md")])
def test_an_import_file_whose_name_is_not_utf8_is_said_to_be_so(ws, fmt, folder, suffix):
    top = ws.workspace / folder
    write(top / f"good{suffix}", "Prefer tabs in makefiles\n")
    (top / os.fsdecode(b"bad\xff" + suffix.encode())).write_text("Use spaces\n")
    result = memtui(ws, "import", fmt, "--dry-run")
    no_traceback(result)
    assert f"bad\\xff{suffix}: file name is not UTF-8; skipped (rename it to import it)" in result.stderr, result.stderr
    assert "YAML" not in result.stderr


def test_one_conversation_row_that_is_not_utf8_is_that_rows_error_alone(ws):
    import sqlite3

    from memtui.core.store import MemoryStore

    store = MemoryStore(ws)
    store.load()
    store.conversations.add("Deploys freeze on Fridays zebracorn")
    bad = store.conversations.add("placeholder")
    store.close()
    with sqlite3.connect(ws.db_path) as conn:
        conn.execute("UPDATE memories SET content = CAST(? AS TEXT) WHERE id = ?", (b"secret\xff words zebracorn", bad))
    listed = memtui(ws, "list")
    no_traceback(listed)
    assert "Deploys freeze on Fridays" in listed.stdout
    assert f"conversation memory {bad} holds bytes that are not UTF-8; left out" in listed.stderr
    hook = run_hook(ws)
    assert "Deploys freeze on Fridays" in hook.stdout and "haiku" in hook.stdout, hook.stderr
    exported = memtui(ws, "export", "jsonl", str(ws.home.parent / "backup"))
    no_traceback(exported)
    assert exported.returncode == 0, exported.stderr
    assert "Deploys freeze on Fridays" in (ws.home.parent / "backup" / "memories.jsonl").read_text()
    for result in (listed, hook, exported):
        assert "secret" not in result.stderr  # the row's text is never echoed


def test_the_watcher_starts_beside_folders_nested_past_the_recursion_limit(deep_memory):
    """watchdog walks the folders it watches recursively: the TUI's live reload must still
    start (and see a change at the top) instead of crashing the app."""
    import time

    from memtui.core.store import MemoryStore
    from memtui.core.watch import StoreWatcher

    store = MemoryStore(deep_memory)
    store.load()
    watcher = StoreWatcher(store).start()
    try:
        write(deep_memory.project_root / "added.md", "# Added\n\n- seen by the watcher\n")
        end = time.monotonic() + 30
        while time.monotonic() < end and not any(e.text == "seen by the watcher" for e in store.entries("project")):
            time.sleep(0.05)
        assert any(e.text == "seen by the watcher" for e in store.entries("project"))
    finally:
        watcher.stop()
        store.close()
