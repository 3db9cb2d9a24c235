"""Run the real `memtui` console script in a subprocess, as a person (or a script) does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from memtui.core.paths import Paths

TIMEOUT = 60  # seconds: a hang (a FIFO opened, a lock never given up) fails the test, not the run


def memtui(paths: Paths, *args: str, input: str | None = None, timeout: float = TIMEOUT,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("memtui", path=str(Path(sys.executable).parent))
    assert exe, "the memtui console script is not installed next to this Python"
    return subprocess.run(
        [exe, "--home", str(paths.home), "-w", str(paths.workspace), *args],
        check=False, capture_output=True, text=True, timeout=timeout, input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    assert_no_traceback(result)
    return result


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr


def entries(paths: Paths, *args: str) -> list[dict]:
    return json.loads(ok(memtui(paths, "list", "--json", *args)).stdout)["entries"]


def entry_id(paths: Paths, text: str) -> str:
    found = [e["id"] for e in entries(paths) if e["text"] == text]
    assert len(found) == 1, (text, entries(paths))
    return found[0]


def undo_log(paths: Paths) -> list[dict]:
    return json.loads(ok(memtui(paths, "undo", "--list", "--json")).stdout)["changes"]
