"""Scoped memories (SPEC §16) through the faces, as real processes: `preview --file`, and the
hooks finding the files in context in the prompt and in Claude Code's transcript."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.test_scope import SCOPED, UNSCOPED, write_transcript
from tests.helpers import enable, write

MEMTUI = str(Path(sys.executable).parent / "memtui")
SCOPED_LINE = "- API handlers return typed errors, never bare strings"


@pytest.fixture
def ws(paths):
    enable(paths)
    write(paths.project_root / "api.md", SCOPED)
    write(paths.project_root / "context.md", UNSCOPED)
    for rel in ("src/api/users.py", "src/web/app.ts", "db/schema.sql"):
        write(paths.workspace / rel, "x\n")
    return paths


def preview(paths, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([MEMTUI, "--home", str(paths.home), "-w", str(paths.workspace), "preview", "errors", *args],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, cwd=cwd)


def hook(paths, target: str, prompt: str, transcript: Path | None = None) -> subprocess.CompletedProcess:
    event = "BeforeAgent" if target == "gemini" else "UserPromptSubmit"
    data = {"session_id": "8c35adc1-0b9e-4c43-9a57-1f0d3b6e2a11", "cwd": str(paths.workspace),
            "hook_event_name": event, "prompt": prompt, "permission_mode": "default"}
    if transcript is not None:
        data["transcript_path"] = str(transcript)
    env = {**os.environ, "MUSE_HOME": str(paths.home)}
    return subprocess.run([MEMTUI, "hook", target], input=json.dumps(data), capture_output=True, text=True,
                          env=env, timeout=60)


def test_preview_leaves_a_scoped_memory_out_without_its_file_and_injects_it_with_it(ws):
    without = preview(ws)
    assert without.returncode == 0 and SCOPED_LINE not in without.stdout and "ruff" in without.stdout
    within = preview(ws, "--file", "src/api/users.py")
    assert SCOPED_LINE in within.stdout
    assert SCOPED_LINE in preview(ws, "--file", "src/web/app.ts", "--file", "db/schema.sql").stdout
    from_below = preview(ws, "--file", "users.py", cwd=ws.workspace / "src" / "api")  # relative to where you are
    assert SCOPED_LINE in from_below.stdout
    data = json.loads(preview(ws, "--json", "--file", str(ws.workspace / "src" / "web" / "app.ts")).stdout)
    assert data["files"] == ["src/web/app.ts"]
    (api,) = [c for c in data["candidates"] if c["source"] == "api.md:8"]
    assert api["status"] == "out_of_scope" and api["reason"].endswith("src/api/**, **/*.sql")
    outside = preview(ws, "--file", "/etc/passwd")
    assert outside.returncode == 2 and "is not a file of the workspace" in outside.stderr


@pytest.mark.parametrize("target", ["claude-code", "codex", "gemini"])
def test_the_hook_takes_the_files_the_prompt_names(ws, target):
    assert SCOPED_LINE not in hook(ws, target, "why do these errors happen?").stdout
    assert SCOPED_LINE in hook(ws, target, "why does @src/api/users.py return errors?").stdout
    assert SCOPED_LINE in hook(ws, target, "errors in schema.sql").stdout  # a name one file has


def test_the_claude_code_hook_takes_the_files_its_transcript_shows(ws, tmp_path):
    transcript = tmp_path / "8c35adc1-0b9e-4c43-9a57-1f0d3b6e2a11.jsonl"
    write_transcript(transcript, ws.workspace, [["src/web/app.ts"]])
    assert SCOPED_LINE not in hook(ws, "claude-code", "fix the errors", transcript).stdout
    write_transcript(transcript, ws.workspace, [["src/web/app.ts"], ["src/api/users.py"]])
    assert SCOPED_LINE in hook(ws, "claude-code", "fix the errors", transcript).stdout
    write_transcript(transcript, ws.workspace, [["src/api/users.py"], [], [], []])  # turns ago
    assert SCOPED_LINE not in hook(ws, "claude-code", "fix the errors", transcript).stdout


def test_a_transcript_that_is_a_fifo_or_a_folder_costs_nothing_but_its_files(ws, tmp_path):
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)  # never opened for reading: the hook must not block on it
    for transcript in (fifo, tmp_path):
        r = hook(ws, "claude-code", "fix the errors in @src/api/users.py", transcript)
        assert r.returncode == 0 and SCOPED_LINE in r.stdout and "ruff" in r.stdout


async def test_the_mcp_preview_takes_the_files_in_context(ws):
    from tests.cli.test_mcp import payload, session_for

    async with session_for(ws) as session:
        without = payload(await session.call_tool("preview_injection", {"message": "errors"}))
        within = payload(await session.call_tool("preview_injection", {"message": "errors",
                                                                        "files": ["src/api/users.py"]}))
    assert SCOPED_LINE not in without["text"] and SCOPED_LINE in within["text"]


def test_focused_mode_leaves_a_scoped_memory_out_without_its_file_and_its_why_names_the_scope(ws):
    """SPEC §15 with §16: focused injection holds back an out-of-scope memory as §5 does, and
    the `why` of a scoped memory in play names its globs."""
    enable(ws, {"memory": {"injection": "focused"}})

    def candidates(*args: str) -> dict[str, dict]:
        r = preview(ws, "--json", *args)
        assert r.returncode == 0, r.stderr
        return {c["source"]: c for c in json.loads(r.stdout)["candidates"]}

    without = candidates()["api.md:8"]
    assert without["status"] == "out_of_scope" and "src/api/**" in without["reason"]
    scoped = candidates("--file", "src/api/users.py")["api.md:8"]
    assert scoped["status"] == "included"
    assert scoped["why"]["scope"] == "paths: src/api/**, **/*.sql"
    assert candidates("--file", "src/api/users.py")["context.md:1"]["why"]["scope"] == "workspace"
