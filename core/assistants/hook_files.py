"""Adding memtui's prompt hook to an assistant's JSON hooks file, and taking it out.

Claude Code, Codex and Gemini CLI all keep command hooks in one shape:

    {"hooks": {"<Event>": [{"hooks": [{"type": "command", "command": "...", ...}]}]}}

(the prompt events take no matcher, so the group has none). Install appends one such group,
or updates the command of a memtui hook already there; every other key and value is kept
(the file's text is edited in place: every byte memtui did not change stays as written). A file that is not a JSON object, or
whose `hooks` / event list has another shape, is reported and never overwritten. Which
containers install made (the file, its folder, `hooks`, `hooks.<Event>`) is kept in a
receipt, so uninstall removes exactly those once empty, never ones that were there before.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..paths import home_option
from ..settings import SettingsError, read_json_for_update, write_json_object
from .files import DIR, FILE, Change, ConfigError, Receipts, remove_file, shown, write_target

HOOK_MODULE = "memtui.cli.hook"
CONSEQUENCE = "not changed"


@dataclass(frozen=True)
class HookFiles:
    """Where one assistant keeps its hooks, and the handler memtui adds."""

    event: str
    user: Callable[[Path], Path]  # the person's home -> their own settings file
    personal_project: Callable[[Path], Path] | None  # workspace -> the uncommitted project file, if the tool has one
    shared_project: Callable[[Path], Path]  # workspace -> the committed project file
    handler: Callable[[str], dict[str, object]]  # command -> the handler object


def find_memtui() -> str | None:
    """The `memtui` console script of the running installation: the one being run, else
    the one next to this Python (a virtualenv's bin/), else the first on PATH."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "memtui" and argv0.is_file():
        return os.path.abspath(argv0)
    beside = Path(sys.executable).parent / "memtui"
    if beside.is_file() and os.access(beside, os.X_OK):
        return os.path.abspath(beside)
    return shutil.which("memtui")


def hook_command(target: str, program: str | None = None, shared: bool = False, home: Path | None = None) -> str:
    """The shell command the assistant runs. Shared (a committed file): plain `memtui`,
    found on each person's PATH, with each person's own home. Personal: this installation's
    `memtui` by absolute path, quoted; with no console script, this Python running the hook
    module; `--home HOME` when `home` is not `~/.muse` (the assistant runs the hook without
    this shell's `$MUSE_HOME`: the hook must read the store the person installed it for)."""
    if shared:
        return f"memtui hook {target}"
    named = [shlex.quote(word) for word in home_option(home)] if home is not None else []
    if program is None:
        program = find_memtui()
    if program is None:
        return " ".join([shlex.quote(os.path.abspath(sys.executable)), "-m", HOOK_MODULE, target, *named])
    return " ".join([shlex.quote(os.path.abspath(program)), *named, "hook", target])


def _without_home(words: list[str]) -> list[str]:
    """A hook command's words without its `--home HOME`."""
    if "--home" in words[:-1]:
        at = words.index("--home")
        return words[:at] + words[at + 2:]
    return words


def is_memtui_hook(command: object, target: str) -> bool:
    """A command this module writes for `target` (any path to memtui, or the hook module; with
    or without a `--home`)."""
    if not isinstance(command, str):
        return False
    try:
        words = _without_home(shlex.split(command))
    except ValueError:
        return False
    if len(words) >= 3 and words[-2:] == ["hook", target] and Path(words[-3]).name == "memtui":
        return True
    if len(words) >= 3 and words[-3:] == ["-m", HOOK_MODULE, target]:
        return True
    return target == "claude-code" and len(words) >= 3 and words[-2:] == ["-m", HOOK_MODULE]


def _read(path: Path, within: Path | None) -> tuple[bytes | None, dict[str, Any]]:
    try:
        return read_json_for_update(path, within, consequence=CONSEQUENCE)
    except SettingsError as exc:
        raise ConfigError(str(exc)) from None


def _event_list(path: Path, data: dict[str, Any], event: str, create: bool) -> tuple[list[Any] | None, list[str]]:
    """`hooks.<event>` (made when `create`), and which containers were made."""
    made: list[str] = []
    hooks = data.get("hooks")
    if hooks is None:
        if not create:
            return None, made
        hooks = data["hooks"] = {}
        made.append("hooks")
    if not isinstance(hooks, dict):
        raise ConfigError(f"{shown(path)}: \"hooks\" is not a JSON object; not changed")
    groups = hooks.get(event)
    if groups is None:
        if not create:
            return None, made
        groups = hooks[event] = []
        made.append(f"hooks.{event}")
    if not isinstance(groups, list):
        raise ConfigError(f"{shown(path)}: \"hooks.{event}\" is not a JSON array; not changed")
    return groups, made


def _ours(groups: list[Any], target: str) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(group, handler) for every memtui hook handler of `target` in the event's groups."""
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            continue
        for handler in handlers:
            if isinstance(handler, dict) and handler.get("type") == "command" and is_memtui_hook(handler.get("command"), target):
                yield group, handler


def install(files: HookFiles, target: str, settings_path: str | os.PathLike[str], command: str,
            receipts: Receipts | None = None, within: Path | None = None) -> Change:
    """Add the hook to `settings_path` once; a memtui hook already there gets `command`."""
    given = Path(settings_path)
    path, root = write_target(given, within)
    raw, data = _read(path, within)
    made = [] if raw is not None else [FILE]
    if raw is None and not path.parent.is_dir():
        made.append(DIR)
    groups, made_here = _event_list(path, data, files.event, create=True)
    made += made_here
    assert groups is not None
    existing = list(_ours(groups, target))
    if existing:
        _, handler = existing[0]
        if handler.get("command") == command:
            return Change(given, False, f"The memtui hook is already in {shown(given)}.")
        handler["command"] = command
        _write(path, root, data, raw)
        return Change(given, True, f"Updated the memtui hook in {shown(given)} to run: {command}")
    groups.append({"hooks": [files.handler(command)]})
    _write(path, root, data, raw)
    if receipts is not None:
        receipts.keep(path, f"hook:{target}", made)
    return Change(given, True, f"Added the memtui hook ({files.event}) to {shown(given)}: {command}")


def _write(path: Path, root: Path, data: dict[str, Any], raw: bytes | None) -> None:
    try:
        write_json_object(path, data, raw, root=root)
    except SettingsError as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:  # ConflictError is not one; it names the file already
        raise ConfigError(f"{shown(path)}: cannot write ({exc.strerror or exc}); not changed") from None
    except RuntimeError as exc:
        raise ConfigError(str(exc)) from None


def uninstall(files: HookFiles, target: str, settings_path: str | os.PathLike[str],
              receipts: Receipts | None = None, within: Path | None = None) -> Change:
    """Remove every memtui hook handler of `target` from `settings_path`, and the
    containers install made for it once they are empty; everything else stays."""
    given = Path(settings_path)
    path, root = write_target(given, within)
    raw, data = _read(path, within)
    if raw is None:
        return Change(given, False, f"No memtui hook in {shown(given)} (no such file).")
    groups, _ = _event_list(path, data, files.event, create=False)
    found = list(_ours(groups or [], target))
    if not found:
        return Change(given, False, f"No memtui hook in {shown(given)}.")
    assert groups is not None
    for group, handler in found:
        group["hooks"].remove(handler)
    # A group left with no handler and nothing else of its own was ours.
    groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [] and set(g) <= {"hooks", "matcher"}
                                           and any(g is og for og, _ in found))]
    book = receipts or Receipts(None)
    made = book.made(path, f"hook:{target}")
    hooks = data["hooks"]
    if f"hooks.{files.event}" in made and not groups:
        del hooks[files.event]
    if "hooks" in made and not hooks:
        del data["hooks"]
    if FILE in made and not data:
        remove_file(path, root, raw, DIR in made)
    else:
        _write(path, root, data, raw)
    book.drop(path, f"hook:{target}")
    return Change(given, True, f"Removed the memtui hook from {shown(given)}.")



@dataclass(frozen=True)
class HookPlace:
    """The file a hook install writes, whether it is shared (committed), and the workspace
    it must stay inside (None for the person's own file)."""

    path: Path
    shared: bool
    within: Path | None
    note: str = ""


def place(files: HookFiles, name: str, workspace: Path, project: bool, shared: bool,
          user_home: Path | None = None) -> HookPlace:
    """Where `--project` / `--shared` put the hook: the person's own file by default; with
    `--project`, the project's personal (uncommitted) file when the tool has one; with
    `--shared`, or for a tool whose project file is always committed, the shared file with
    a command that does not depend on one person's installation."""
    if shared or (project and files.personal_project is None):
        note = ("This file is shared with everyone on the project (committed), so the hook runs plain `memtui`: "
                "memtui must be on everyone's PATH (e.g. installed with pipx).")
        if not shared:
            note = f"{name} has no personal project file. " + note
        return HookPlace(files.shared_project(workspace), True, workspace, note)
    if project:
        assert files.personal_project is not None
        return HookPlace(files.personal_project(workspace), False, workspace,
                         f"This is your own file for this project ({name} does not share it); "
                         "`--shared` writes the committed one instead.")
    return HookPlace(files.user(Path(user_home) if user_home is not None else Path.home()), False, None)
