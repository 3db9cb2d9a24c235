"""Codex CLI (SPEC §11): the `UserPromptSubmit` command hook, and where it is configured.

Codex sends one JSON object on stdin whose schema (openai/codex,
`codex-rs/hooks/schema/generated/user-prompt-submit.command.input.schema.json`) requires
`cwd`, `hook_event_name` ("UserPromptSubmit"), `model`, `permission_mode`, `prompt`,
`session_id`, `transcript_path` (may be null) and `turn_id`. Its output schema allows no
property it does not name (`additionalProperties: false`, at the top and inside
`hookSpecificOutput`), so the hook prints exactly
`{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": TEXT}}`
and nothing else; an empty stdout is "nothing to add". Codex keeps 2,500 of its
approximate tokens (a token per 4 bytes of UTF-8) of a hook's text, so at most 10,000
bytes. Exit 2 would block the prompt: never used.

Hooks live in `hooks.json` (`~/.codex/hooks.json` — `$CODEX_HOME` when set — or `<repo>/.codex/hooks.json`, which
is committed and loads once the project is trusted) in the same shape as Claude Code's:
`hooks.UserPromptSubmit[].hooks[]` with `type`, `command`, `timeout` in seconds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from . import Target
from .protocol import HookProtocol, made_on_demand

if TYPE_CHECKING:  # the install half: the hook's run never imports it
    from .hook_files import HookFiles

EVENT = "UserPromptSubmit"
OUTPUT_LIMIT = 10_000  # bytes: 2,500 tokens at Codex's estimate of 4 bytes a token


def _render(text: str) -> bytes:
    out = {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": text}}
    return (json.dumps(out, ensure_ascii=False) + "\n").encode("utf-8")


def _measure(text: str) -> int:
    return len(text.encode("utf-8"))


PROTOCOL = HookProtocol(target=Target.CODEX, name="Codex", event=EVENT, render=_render, nothing=b"",
                        limit=OUTPUT_LIMIT, unit="UTF-8 bytes", measure=_measure)


def codex_home(user_home: Path) -> Path:
    """Where Codex keeps the person's config: `$CODEX_HOME`, else `~/.codex`."""
    return Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else user_home / ".codex"


def _handler(command: str) -> dict[str, object]:
    return {"type": "command", "command": command, "timeout": 10}


def _files() -> HookFiles:
    from .hook_files import HookFiles

    return HookFiles(
        event=EVENT,
        user=lambda home: codex_home(home) / "hooks.json",
        personal_project=None,
        shared_project=lambda ws: ws / ".codex" / "hooks.json",
        handler=_handler,
    )


__getattr__ = made_on_demand(globals(), "FILES", _files)  # where this assistant keeps its hook settings
