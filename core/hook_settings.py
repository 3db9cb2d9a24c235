"""Adding memtui's Claude Code hook to Claude Code's settings.json, and taking it out (SPEC §11).

Claude Code reads hooks from `~/.claude/settings.json` (user) or
`<project>/.claude/settings.json` (project) in this shape:

    {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "...", "timeout": 10}]}]}}

(`UserPromptSubmit` takes no matcher, so the group has none.) Install appends one such
group; every other key and value is kept (the file is re-written JSON-equal, 2-space
indent). A file that is not a JSON object, or whose `hooks` / `UserPromptSubmit` has
another shape, is reported and never overwritten. Which containers install created (the
file, `.claude/`, `hooks`, `hooks.UserPromptSubmit`) is kept in a receipt in the Muse
home, so uninstall removes exactly those (when empty), never ones that were there before.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import gate
from .fileio import ConflictError, read_if_exists

EVENT = "UserPromptSubmit"
TIMEOUT_SECONDS = 10  # the hook answers in well under a second; a stuck one must not hold the prompt
MAX_BYTES = 1024 * 1024
RECEIPTS_NAME = "claude-code-hooks.json"
HOOK_ARGS = ("hook", "claude-code")
HOOK_MODULE = "memtui.cli.hook"


class HookSettingsError(RuntimeError):
    """The settings file cannot be changed; the message names the file and the reason."""


@dataclass(frozen=True)
class HookChange:
    path: Path
    changed: bool
    message: str


def user_settings_path(user_home: str | os.PathLike[str] | None = None) -> Path:
    return Path(user_home if user_home is not None else Path.home()).expanduser() / ".claude" / "settings.json"


def project_settings_path(workspace: str | os.PathLike[str]) -> Path:
    return Path(workspace) / ".claude" / "settings.json"


def receipts_path(muse_home: str | os.PathLike[str]) -> Path:
    return Path(muse_home) / RECEIPTS_NAME


def hook_command(program: str | None = None) -> str:
    """The shell command Claude Code runs: this installation's `memtui` by absolute path,
    quoted; when there is no console script, this Python running the hook module."""
    if program is None:
        program = find_memtui()
    if program is None:
        return f"{shlex.quote(os.path.abspath(sys.executable))} -m {HOOK_MODULE}"
    return " ".join([shlex.quote(os.path.abspath(program)), *HOOK_ARGS])


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


def is_memtui_hook(command: object) -> bool:
    """A command this module writes (any path to memtui, or `python -m memtui.cli.hook`)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) >= 3 and tuple(words[-2:]) == HOOK_ARGS and Path(words[-3]).name == "memtui":
        return True
    return len(words) >= 3 and words[-2:] == ["-m", HOOK_MODULE]


# ---------------------------------------------------------------------- reading and writing
def _target(path: Path, root: Path | None) -> tuple[Path, Path]:
    """The file to write and the root the write gate holds it to.

    Without `root` (the person's own `~/.claude/settings.json`): a symlinked settings.json
    (dotfile managers link it) is written where it leads, never over the link. With `root`
    (a project's `.claude/settings.json`, `root` its workspace): the repository decides what
    is there, so no part of the path below the workspace may be a symlink."""
    if root is not None:
        try:
            return gate.target(path, root), root
        except gate.Refused as exc:
            raise HookSettingsError(f"{exc.path}: {exc.reason}; not changed") from None
    try:
        real = path.resolve(strict=True) if path.is_symlink() else path
    except (OSError, RuntimeError) as exc:
        raise HookSettingsError(f"{path}: broken symlink or symlink loop ({exc}); not changed") from None
    return real, real.parent


def _read(path: Path) -> tuple[bytes | None, dict | None]:
    """The file's bytes and its object, (None, None) when there is no file."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        raise HookSettingsError(f"{path}: cannot read ({exc.strerror or exc}); not changed") from None
    if not stat.S_ISREG(st.st_mode):
        raise HookSettingsError(f"{path}: not a regular file; not changed")
    if st.st_size > MAX_BYTES:
        raise HookSettingsError(f"{path}: larger than 1 MiB; not changed")
    try:
        raw = read_if_exists(path)
    except OSError as exc:
        raise HookSettingsError(f"{path}: cannot read ({exc.strerror or exc}); not changed") from None
    if raw is None:
        return None, None
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise HookSettingsError(f"{path}: not UTF-8 text; not changed") from None
    except json.JSONDecodeError as exc:
        raise HookSettingsError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); not changed") from None
    if not isinstance(data, dict):
        raise HookSettingsError(f"{path}: not a JSON object; not changed")
    return raw, data


def _dump(data: dict) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _write(path: Path, root: Path, data: bytes, expected: bytes | None) -> None:
    try:
        gate.make_dir(path.parent, root=root)
        gate.write(path, data, root=root, kind=gate.Kind.SETTINGS, expected=expected)
    except gate.Refused as exc:
        raise HookSettingsError(f"{exc.path}: {exc.reason}; not changed") from None
    except ConflictError as exc:
        raise HookSettingsError(str(exc)) from None
    except OSError as exc:
        raise HookSettingsError(f"{path}: cannot write ({exc.strerror or exc}); not changed") from None


def _event_list(path: Path, data: dict, create: bool) -> tuple[list | None, list[str]]:
    """`hooks.UserPromptSubmit` (made when `create`), and which containers were made."""
    made: list[str] = []
    hooks = data.get("hooks")
    if hooks is None:
        if not create:
            return None, made
        hooks = data["hooks"] = {}
        made.append("hooks")
    if not isinstance(hooks, dict):
        raise HookSettingsError(f"{path}: \"hooks\" is not a JSON object; not changed")
    groups = hooks.get(EVENT)
    if groups is None:
        if not create:
            return None, made
        groups = hooks[EVENT] = []
        made.append(f"hooks.{EVENT}")
    if not isinstance(groups, list):
        raise HookSettingsError(f"{path}: \"hooks.{EVENT}\" is not a JSON array; not changed")
    return groups, made


def _ours(groups: list) -> Iterator[tuple[dict, dict]]:
    """(group, handler) for every memtui hook handler in the event's groups."""
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            continue
        for handler in handlers:
            if isinstance(handler, dict) and handler.get("type") == "command" and is_memtui_hook(handler.get("command")):
                yield group, handler


# ---------------------------------------------------------------------- receipts
def _load_receipts(path: Path | None) -> dict:
    if path is None:
        return {}
    try:
        raw = read_if_exists(path)
        data = json.loads(raw) if raw else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_receipts(path: Path | None, receipts: dict) -> None:
    if path is None:
        return
    try:
        gate.write(path, _dump(receipts), root=path.parent, kind=gate.Kind.DATA)
    except OSError:
        pass  # without a receipt uninstall keeps the (empty) containers: safe, only less tidy


# ---------------------------------------------------------------------- install / uninstall
def install(settings_path: str | os.PathLike[str], command: str | None = None,
            receipts: str | os.PathLike[str] | None = None, timeout: int = TIMEOUT_SECONDS,
            root: str | os.PathLike[str] | None = None) -> HookChange:
    """Add the hook to `settings_path` once; a memtui hook already there is updated in place.
    `root`: the workspace a project's settings file must stay in (see `_target`)."""
    shown = Path(settings_path)
    path, within = _target(shown, Path(root) if root is not None else None)
    command = command or hook_command()
    raw, data = _read(path)
    made = [] if raw is not None else ["file"]
    if raw is None and not path.parent.is_dir():
        made.append("dir")
    data = {} if data is None else data
    groups, made_here = _event_list(path, data, create=True)
    made += made_here
    assert groups is not None
    existing = list(_ours(groups))
    if existing:
        _, handler = existing[0]
        if handler.get("command") == command:
            return HookChange(shown, False, f"The memtui hook is already in {shown}.")
        handler["command"] = command
        _write(path, within, _dump(data), raw)
        return HookChange(shown, True, f"Updated the memtui hook in {shown} to run: {command}")
    groups.append({"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
    _write(path, within, _dump(data), raw)
    receipt_file = Path(receipts) if receipts is not None else None
    book = _load_receipts(receipt_file)
    book[str(path)] = {"created": made}
    _save_receipts(receipt_file, book)
    return HookChange(shown, True, f"Added the memtui hook ({EVENT}) to {shown}: {command}")


def uninstall(settings_path: str | os.PathLike[str],
              receipts: str | os.PathLike[str] | None = None, root: str | os.PathLike[str] | None = None) -> HookChange:
    """Remove every memtui hook handler from `settings_path`, and the containers install made
    for it once they are empty; everything else stays as it is."""
    shown = Path(settings_path)
    path, within = _target(shown, Path(root) if root is not None else None)
    raw, data = _read(path)
    if data is None:
        return HookChange(shown, False, f"No memtui hook in {shown} (no such file).")
    groups, _ = _event_list(path, data, create=False)
    found = list(_ours(groups or []))
    if not found:
        return HookChange(shown, False, f"No memtui hook in {shown}.")
    for group, handler in found:
        group["hooks"].remove(handler)
    assert groups is not None
    # A group left with no handler and nothing else of its own was ours.
    groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [] and set(g) <= {"hooks", "matcher"}
                                           and any(g is og for og, _ in found))]
    receipt_file = Path(receipts) if receipts is not None else None
    book = _load_receipts(receipt_file)
    made = book.get(str(path), {}).get("created", []) if isinstance(book.get(str(path)), dict) else []
    hooks = data["hooks"]
    if f"hooks.{EVENT}" in made and not groups:
        del hooks[EVENT]
    if "hooks" in made and not hooks:
        del data["hooks"]
    if "file" in made and not data:
        try:
            if read_if_exists(path) != raw:
                raise HookSettingsError(f"{path} changed on disk since it was read; not overwritten")
            gate.remove(path, root=within, missing_ok=False)
        except gate.Refused as exc:
            raise HookSettingsError(f"{exc.path}: {exc.reason}; not changed") from None
        except OSError as exc:
            raise HookSettingsError(f"{path}: cannot remove ({exc.strerror or exc})") from None
        if "dir" in made:
            try:
                gate.remove_dir(path.parent, root=within)  # only when empty
            except OSError:
                pass
    else:
        _write(path, within, _dump(data), raw)
    if str(path) in book:
        del book[str(path)]
        _save_receipts(receipt_file, book)
    return HookChange(shown, True, f"Removed the memtui hook from {shown}.")
