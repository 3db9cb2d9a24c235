"""Gemini CLI (SPEC §11): the `BeforeAgent` command hook, and where it is configured.

Gemini CLI runs `BeforeAgent` hooks after a prompt is submitted and before the agent
plans, with one JSON object on stdin (`session_id`, `transcript_path`, `cwd`,
`hook_event_name` "BeforeAgent", `timestamp`, and `prompt`). Stdout must be JSON only:
on exit 0 it is parsed, and `hookSpecificOutput.additionalContext` is appended to the
prompt for this turn (its TypeScript type names `hookEventName: "BeforeAgent"` beside
it). Nothing to add is `{}`, the answer Gemini's own hook guide gives. Exit 2 would block
the turn and erase the prompt: never used. No limit on the context is documented.

Hooks live in `settings.json` under `hooks.BeforeAgent[].hooks[]` (`type`, `command`,
`name`, `timeout` in milliseconds): `~/.gemini/settings.json` or the project's
`.gemini/settings.json` (committed).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from . import Target
from .protocol import HookProtocol, made_on_demand

if TYPE_CHECKING:  # the install half: the hook's run never imports it
    from .hook_files import HookFiles

EVENT = "BeforeAgent"


def _render(text: str) -> bytes:
    out = {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": text}}
    return (json.dumps(out, ensure_ascii=False) + "\n").encode("utf-8")


PROTOCOL = HookProtocol(target=Target.GEMINI, name="Gemini CLI", event=EVENT, render=_render, nothing=b"{}\n")


def _handler(command: str) -> dict[str, object]:
    return {"type": "command", "command": command, "name": "memtui", "timeout": 10_000}


def _files() -> HookFiles:
    from .hook_files import HookFiles

    return HookFiles(
        event=EVENT,
        user=lambda home: home / ".gemini" / "settings.json",
        personal_project=None,
        shared_project=lambda ws: ws / ".gemini" / "settings.json",
        handler=_handler,
    )


__getattr__ = made_on_demand(globals(), "FILES", _files)  # where this assistant keeps its hook settings
