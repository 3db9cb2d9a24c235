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
