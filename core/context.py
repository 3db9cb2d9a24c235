"""Files in context for a hook run (SPEC §16): what a scoped memory is matched against when
the assistant, not a person, asks for the injection.

- The workspace files the prompt names: `@src/x.py` and `src/x.py` (a path that exists in
  the workspace, file or folder), an absolute path inside the workspace, and a bare `x.py`
  when exactly one file of the workspace has that name (the listing is bounded:
  `workspace_files.list_files`, and made only when the prompt holds such a bare name).
- For Claude Code, the files its transcript shows were read or edited in the last turns:
  the `tool_use` blocks of its `Read`, `Edit`, `MultiEdit`, `Write` and `NotebookEdit` tools
  (`input.file_path`, `input.notebook_path`) in the assistant entries of the transcript's
  JSONL, read from its end only (`TAIL_BYTES`), back to the `TURNS`-th prompt of the person.

All of it is found only when a scoped memory needs it (`serve.build_injection` is handed a
function): a workspace without scoped memories never reads its transcript or lists its files.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .scope import relative_to

log = logging.getLogger("memtui.injection")

MAX_NAMES = 200  # path-looking words of a prompt considered at most
TAIL_BYTES = 512 * 1024  # of a transcript, read from its end
TURNS = 3  # the person's last prompts whose tool calls count
FILE_TOOLS = {"Read": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path",
              "NotebookEdit": "notebook_path"}

# a path-looking word: an optional @, then name characters with at least one "." or "/" inside
_WORD = re.compile(r"(?<![\w./@-])@?([\w./-]+)")


def _words(prompt: str) -> Iterator[str]:
    n = 0
    for m in _WORD.finditer(prompt):
        word = m.group(1).rstrip(".")
        if not word or ("/" not in word and "." not in word.strip(".")) or word in (".", ".."):
            continue
        yield word
        n += 1
        if n >= MAX_NAMES:
            return


def _named_file(word: str) -> bool:
    """A bare word that reads as a file name: a stem and an extension of 2-10 letters or digits
    with a letter in it (`mod0.py`, `Dockerfile.dev`; not `e.g`, `v1.2`, `3.14`)."""
    stem, dot, ext = word.rpartition(".")
    return bool(dot and stem.strip(".") and 2 <= len(ext) <= 10 and ext.isalnum() and not ext.isdigit())


def named_in_prompt(prompt: str, workspace: Path, list_names: Any = None) -> list[str]:
    """The workspace files (and folders) `prompt` names, workspace-relative. `list_names`:
    a function giving the workspace's files (for bare names), by default the bounded walk."""
    found: dict[str, None] = {}
    bare: list[str] = []
    for word in _words(prompt):
        if "/" in word.rstrip("/"):
            rel = relative_to(workspace, word.rstrip("/"))
            if rel is not None and (workspace / rel).exists():
                found[rel] = None
        elif word.startswith("/"):
            continue
        else:
            name = word.rstrip("/")
            if (workspace / name).exists():  # a top-level file or folder
                found[name] = None
            elif _named_file(name):
                bare.append(name)
    if bare:
        if list_names is None:
            from .workspace_files import list_files

            files: Iterable[str] = list_files(workspace).files
        else:
            files = list_names()
        by_name: dict[str, list[str]] = {}
        wanted = set(bare)
        for f in files:
            base = f.rsplit("/", 1)[-1]
            if base in wanted:
                by_name.setdefault(base, []).append(f)
        for name in bare:
            hits = by_name.get(name, [])
            if len(hits) == 1:  # a name two files share names neither
                found[hits[0]] = None
    return list(found)


def transcript_files(transcript: str | Path, workspace: Path, turns: int = TURNS,
                     tail: int = TAIL_BYTES) -> list[str]:
    """The workspace files Claude Code's transcript shows were read or edited in the last
    `turns` prompts, newest first, workspace-relative. A missing or unreadable transcript, or
    a line that is not JSON, gives nothing for it (the hook never fails for it)."""
    from .bounded_reader import read_regular_tail

    try:
        data = read_regular_tail(transcript, tail)
    except OSError:
        return []
    lines = data.split(b"\n")
    if len(data) >= tail and lines:
        lines = lines[1:]  # the first line was cut by the tail
    found: dict[str, None] = {}
    seen_turns = 0
    for raw in reversed(lines):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "user" and _is_prompt(entry, content):
            seen_turns += 1
            if seen_turns >= turns:
                break
            continue
        if kind != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            key = FILE_TOOLS.get(str(block.get("name")))
            given = block.get("input")
            path = given.get(key) if key and isinstance(given, dict) else None
            if isinstance(path, str):
                rel = relative_to(workspace, path)
                if rel is not None:
                    found.setdefault(rel, None)
    return list(found)


def _is_prompt(entry: dict[str, Any], content: Any) -> bool:
    """A person's prompt (not a tool's result, not a meta line that a hook or command added)."""
    if entry.get("isMeta") or entry.get("isSidechain"):
        return False
    if isinstance(content, str):
        return True
    if isinstance(content, list):
        return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return False


def hook_files(workspace: Path, prompt: str, transcript: str | None) -> list[str]:
    """Every file in context for a hook run: the prompt's, then the transcript's. A failure
    to find them costs the scoped memories only, never the injection (it is logged)."""
    found: dict[str, None] = {}
    sources: list[Callable[[], list[str]]] = [lambda: named_in_prompt(prompt, workspace)]
    if transcript:
        sources.append(lambda: transcript_files(transcript, workspace))
    for source in sources:
        try:
            found.update(dict.fromkeys(source()))
        except Exception as exc:  # noqa: BLE001  (the hook must inject whatever happens here)
            log.warning("files in context not found: %s", exc)
    return list(found)
