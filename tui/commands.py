"""The main screen's commands, described once: the help screen (`?`) lists each key with its
description; the command palette (ctrl+p) offers the same commands under their titles."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from textual.app import SystemCommand
from textual.binding import Binding, BindingType

# action -> (the palette's title, or "" when the palette does not offer it; the description)
COMMANDS: dict[str, tuple[str, str]] = {
    "new": ("New memory", "Create a memory in the focused layer"),
    "edit": ("Edit memory", "Edit the selected memory in place"),
    "edit_external": ("Edit in $EDITOR", "Edit the selected memory in your $EDITOR"),
    "delete": ("Delete memory", "Delete the selected memory (asks first)"),
    "undo": ("Undo", "Undo the last change (says which)"),
    "undo_log": ("Undo log", "Undo log: memtui's changes, newest first"),
    "inbox": ("Inbox", "Inbox: what the assistant learned, to accept (a; A: all), edit (e) or reject (x); u undoes"),
    "toggle_memory": ("Toggle memory", "Turn memory on or off for this workspace"),
    "settings": ("Settings", "Settings: budgets, gates, switches and theme"),
    "focus_query": ("Preview injection", "Type a message and see what would be injected"),
    "focus_filter": ("Filter memories", "Fuzzy filter over all layers (enter: to what it found)"),
    "findings": ("Doctor findings", "Doctor's findings: stale paths, duplicates, unreachable, never injected, invalid"),
    "cycle_order": ("Sort by injection history", "Sort each pane: file order → most injected → last injected"),
    "reload": ("Reload", "Reload every memory file, the database and the settings"),
    "pin": ("", "Pin or unpin the selected memory: a pinned one does not decay (u undoes it)"),
    "forecast": ("", "Forecast: the memories whose level changes or that expire within 7 days"),
    "toggle_private": ("", "Private mode on for an hour, or off: nothing is injected or recorded meanwhile"),
    "toggle_fold": ("", "Expand or collapse the injected text in the preview"),
    "focus_pane('user')": ("", "Go to the user layer: your memories in every workspace"),
    "focus_pane('project')": ("", "Go to the project layer: this workspace's memory files"),
    "focus_pane('conversation')": ("", "Go to the conversation layer: what Muse kept from this workspace's conversations"),
    "open_detail": ("", "On a small terminal (the detail view hidden): the selected memory in full, "
                        "with its fields and the doctor's reasons"),
}

# keys that are no binding of the main screen's own
MORE_KEYS = [
    ("↑/↓ j/k, pgup/pgdn", "Move in a pane"),
    ("tab / shift+tab", "Move between panes and inputs"),
    ("enter (on the fold)", "Expand or collapse the injected text (also f)"),
    ("enter (on a reason)", "List the memories left out for that reason"),
    ("ctrl+t (in the preview)", "Show the injection as Claude Code, Codex or Gemini CLI receives it "
                                "(cut to what each keeps), then as Muse's own again"),
    ("ctrl+s (in dialogs)", "Save"),
    ("ctrl+p", "Command palette (themes are remembered)"),
]

KEY_NAMES = {"question_mark": "?", "slash": "/", "escape": "esc"}


def help_rows(bindings: Iterable[BindingType]) -> list[tuple[str, str]]:
    """(key, what it does) for each binding, then the keys bound elsewhere."""
    rows = [(KEY_NAMES.get(b.key, b.key), COMMANDS.get(b.action, ("", b.description))[1])
            for b in bindings if isinstance(b, Binding)]
    return rows + MORE_KEYS


def system_commands(screen: Any) -> Iterator[SystemCommand]:
    """The palette's commands, each running the screen's action."""
    for action, (title, about) in COMMANDS.items():
        if title:
            yield SystemCommand(title, about, getattr(screen, f"action_{action}"))
