"""What the hook imports is what it needs: each assistant spawns it before every prompt, so
`memtui hook claude-code|codex|gemini` is routed before the command-line framework loads, and on a warm
run (the prepared index up to date) it reads the saved index with the standard library and
the injection's own modules, nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import enable, write

MEMTUI = str(Path(sys.executable).parent / "memtui")

# Every memtui module a warm hook imports, besides its own target's module
# (memtui.core.assistants.claude_code, .codex or .gemini). A new one here is a new cost on
# every prompt.
WARM_HOOK_MODULES = {
    "memtui", "memtui.cli", "memtui.cli.entry", "memtui.cli.hook",
    "memtui.core.assistants", "memtui.core.assistants.delivery", "memtui.core.assistants.protocol",
    "memtui.core", "memtui.core.serve", "memtui.core.injection", "memtui.core.relevance", "memtui.core.model",
    # the §5 rule's own parts (core/injection.py split by step; the JSON writer and the runs and
    # counts are loaded only when `preview --json` or the status counts ask for them)
    "memtui.core.candidates", "memtui.core.injection_result",
    "memtui.core.injection_lines", "memtui.core.injection_scores",
    "memtui.core.paths", "memtui.core.display", "memtui.core.fileio", "memtui.core.bounded_reader", "memtui.core.settings",
    "memtui.core.outbound", "memtui.core.gate", "memtui.core.history",
    "memtui.core.forgetting",  # SPEC §18: the expired entries left out (standard library and the model alone)
    "memtui.core.store", "memtui.core.store.prepared", "memtui.core.store.layer_index", "memtui.core.store.generation",
    "memtui.core.store.rows", "memtui.core.store.level_counts",
    "memtui.core.bitmaps",  # sets of positions as big integers (the index's postings; standard library only)
    # the prepared index's parts (each module one job: saved rows, pane order, candidate JSON, made lines, a patched layer)
    "memtui.core.store.entry_rows", "memtui.core.store.pane_order", "memtui.core.store.candidate_json",
    "memtui.core.store.line_cache", "memtui.core.store.patched_layer", "memtui.core.store.saved_file",
    "memtui.core.store.saved_layer", "memtui.core.store.current_layers", "memtui.core.store.build_layers",
    "memtui.core.store.aside",
    "memtui.core.scope",  # the rule's scope step (SPEC §16): the standard library alone until a scoped file is matched
    "memtui.core.jsondata",  # settings.json read with a depth limit (json and re only)
}
EVENTS = {"claude-code": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}
NEVER = ("click", "textual", "rich", "sqlite_utils", "rapidfuzz", "numpy", "markdown_it", "yaml", "watchdog", "mcp",
         "detect_secrets", "tomlkit", "memtui.cli.main", "memtui.core.store.memory", "memtui.core.store.index",
         "memtui.core.store.conversations", "memtui.core.store.database",
         "memtui.core.markdown", "memtui.core.assistants.files", "memtui.core.assistants.hook_files",
         "tokenizers", "safetensors", "wordllama", "memtui.core.semantic", "memtui.core.store.vectors",
         "memtui.core.secrets",  # the saved lines are redacted already: no detector is compiled
         # no scoped memory: the files in context are never looked for, no glob is compiled
         "wcmatch", "pathspec", "memtui.core.context", "memtui.core.workspace_files")  # the saved lines are redacted already: no detector is compiled


def imported(stderr: str) -> set[str]:
    """Module names from `-X importtime` lines (`import time: self | cumulative | name`)."""
    out = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":
                out.add(name)
    return out


@pytest.mark.parametrize("target", sorted(EVENTS))
def test_a_warm_hook_imports_the_injection_and_nothing_else(paths, target):
    write(paths.user_root / "preferences.md", "- Use vitest, not jest\n")
    write(paths.project_root / "context.md", "- 数据库连接池配置过小\n")
    enable(paths)
    event = json.dumps({"hook_event_name": EVENTS[target], "prompt": "vitest 数据库", "cwd": str(paths.workspace)})
    command = [MEMTUI, "--home", str(paths.home), "hook", target]
    first = subprocess.run(command, input=event.encode(), capture_output=True, timeout=60)
    assert b"vitest" in first.stdout  # builds and saves the prepared index
    subprocess.run(command, input=event.encode(), capture_output=True, timeout=60)  # muse.db now exists (history)
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    warm = subprocess.run(command, input=event.encode(), capture_output=True, timeout=60, env=env)
    assert warm.returncode == 0 and warm.stdout == first.stdout
    modules = imported(warm.stderr.decode())
    own = "memtui.core.assistants." + target.replace("-", "_")
    assert {m for m in modules if m.startswith("memtui")} == WARM_HOOK_MODULES | {own}
    assert not [m for m in modules if m.split(".")[0] in NEVER or m in NEVER]


def test_other_command_lines_still_reach_the_full_cli(paths):
    enable(paths)
    for argv in (["hook", "--help"], ["--home", str(paths.home), "hook", "claude-code", "--help"]):
        done = subprocess.run([MEMTUI, *argv], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "Usage:" in done.stdout, argv
    # a --home that is a file: the hook's own answer (exit 2 would block the prompt), not click's usage error
    not_a_dir = paths.home / "settings.json"
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "x", "cwd": str(paths.workspace)})
    done = subprocess.run([MEMTUI, "--home", str(not_a_dir), "hook", "claude-code"], input=event, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "") and "is not a directory" in done.stderr, done.stderr
    assert "Usage:" not in done.stderr


def test_decay_alone_loads_no_model(paths):
    """Decay (SPEC §13) without hybrid retrieval adds its own module and nothing of the model's."""
    write(paths.project_root / "context.md", "- Use PostgreSQL 16 + pgbouncer\n")
    enable(paths, {"memory": {"decay": {"halfLifeDays": 30}}})
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "postgresql", "cwd": str(paths.workspace)})
    command = [MEMTUI, "--home", str(paths.home), "hook", "claude-code"]
    for _ in range(2):
        subprocess.run(command, input=event.encode(), capture_output=True, timeout=60)
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    warm = subprocess.run(command, input=event.encode(), capture_output=True, timeout=60, env=env)
    assert warm.returncode == 0 and b"PostgreSQL" in warm.stdout
    modules = imported(warm.stderr.decode())
    own = {"memtui.core.assistants.claude_code", "memtui.core.retrieval"}
    assert {m for m in modules if m.startswith("memtui")} == WARM_HOOK_MODULES | own
    assert not [m for m in modules if m.split(".")[0] in NEVER or m in NEVER]
