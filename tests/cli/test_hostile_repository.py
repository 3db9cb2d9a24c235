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


def test_an_mcp_request_with_a_lone_surrogate_gets_a_reply(ws):
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

    try:
        ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        reply = ask('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_memories", '
                    '"arguments": {"query": "zebracorn \\ud800"}}}')
        assert reply["id"] == 2 and "billing service" in json.dumps(reply["result"])
        after = ask('{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search_memories", '
                    '"arguments": {"query": "zebracorn"}}}')
        assert after["id"] == 3
    finally:
        server.stdin.close()
        server.wait(timeout=60)
