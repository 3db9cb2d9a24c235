"""Claude Code (SPEC §11): the `UserPromptSubmit` command hook, and where it is configured.

Claude Code sends one JSON object on stdin (`session_id`, `transcript_path`, `cwd`,
`permission_mode`, `hook_event_name`, `prompt`). On exit 0 plain stdout is added to the
context (output starting with `{` would be parsed as JSON instead; an injection starts
with `## Memory`, so it never does). It keeps 10,000 characters of a hook's output; a
longer one is saved to a file and the model sees a preview, so the hook never prints more.
Nothing to add is an empty stdout. Exit 2 would block the prompt and erase it: never used.

Hooks live in `settings.json` under `hooks.UserPromptSubmit[].hooks[]` (`type`,
`command`, `timeout` in seconds): `~/.claude/settings.json` (the person's),
`<project>/.claude/settings.local.json` (the person's, for one project, not committed) and
`<project>/.claude/settings.json` (committed, shared with everyone on the project).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import Target
from .protocol import HookProtocol, made_on_demand

if TYPE_CHECKING:  # the install half: the hook's run never imports it
    from .hook_files import HookFiles

EVENT = "UserPromptSubmit"
OUTPUT_LIMIT = 10_000  # characters of hook output Claude Code keeps in the context


def _render(text: str) -> bytes:
    return (text + "\n").encode("utf-8")


def _measure(text: str) -> int:
    return len(text) + 1  # with the final newline printed after it


PROTOCOL = HookProtocol(target=Target.CLAUDE_CODE, name="Claude Code", event=EVENT, render=_render,
                        nothing=b"", limit=OUTPUT_LIMIT, unit="characters", measure=_measure)


def _handler(command: str) -> dict[str, object]:
    return {"type": "command", "command": command, "timeout": 10}


def _files() -> HookFiles:
    from .hook_files import HookFiles

    return HookFiles(
        event=EVENT,
        user=lambda home: home / ".claude" / "settings.json",
        personal_project=lambda ws: ws / ".claude" / "settings.local.json",
        shared_project=lambda ws: ws / ".claude" / "settings.json",
        handler=_handler,
    )


__getattr__ = made_on_demand(globals(), "FILES", _files)  # where this assistant keeps its hook settings
