"""settings.json (SPEC §4): read, merge, validate, and write without losing foreign keys."""

from __future__ import annotations

import copy
import errno
import json
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import gate, jsondata
from .bounded_reader import RefusedFileError, read_regular_if_exists
from .display import path_text
from .model import Layer
from .paths import Paths, Problem, escapes

MAX_SETTINGS_BYTES = 1024 * 1024  # a settings file must be a regular file of at most 1 MiB (SPEC §8)

DEFAULT_BUDGET: dict[str, int] = {"total": 2000, Layer.USER: 600, Layer.PROJECT: 800, Layer.CONVERSATION: 600}
DEFAULT_GATE: dict[str, float] = {Layer.USER: 0.0, Layer.PROJECT: 0.0, Layer.CONVERSATION: 0.2}
DEFAULT_MAX_ITEMS: dict[str, int | None] = {Layer.USER: None, Layer.PROJECT: None, Layer.CONVERSATION: 10}
DEFAULT_MAX_ITEM_CHARS = 200
DEFAULT_THEME = "memtui-dark"


class SettingsError(RuntimeError):
    """A settings file memtui refuses to touch (e.g. not valid JSON) or cannot write; the
    message names the file and the reason."""


def _os_reason(exc: OSError, path: Path) -> str:
    """A plain reason for an OSError met at `path` (no errno numbers, no traceback)."""
    if isinstance(exc, RefusedFileError):
        return exc.reason
    if exc.errno == errno.ENOTDIR:
        parent = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        return f"{path_text(str(parent))} is a file, not a folder" if parent else "a part of the path is not a folder"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    if exc.errno == errno.EISDIR:
        return "is a directory, not a file"
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    return exc.strerror or str(exc)


@dataclass
class Settings:
    enabled: bool = False
    enabled_source: str = "default"  # workspace | global | default
    global_enabled: bool | None = None
    workspace_enabled: bool | None = None
    budget: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_BUDGET))
    gate: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_GATE))
    max_items: dict[str, int | None] = field(default_factory=lambda: dict(DEFAULT_MAX_ITEMS))
    max_item_chars: int = DEFAULT_MAX_ITEM_CHARS
    redact_secrets: bool = True
    retrieval: str = "keyword"  # SPEC §13: keyword | hybrid
    injection: str = "muse"  # SPEC §15: muse (§5 exactly) | focused
    injection_source: str = "default"  # workspace | global | default
    half_life_days: float | None = None  # SPEC §13 decay; None = off
    require_review: bool = False  # memory.requireReview (SPEC §12): unreviewed entries are left out
    private_until: float | None = None  # memory.privateUntil (SPEC §18): seconds since the epoch; None = off
    theme: str = DEFAULT_THEME
    problems: list[Problem] = field(default_factory=list)
    unreadable: list[Problem] = field(default_factory=list)  # settings files that could not be read at all
    # the values saved but not used, by key (("memory", "budget", "total"), ("workspace", "memoryEnabled")):
    # (the value as the file writes it, why it is not used); a settings form shows them as they are
    invalid: dict[tuple[str, ...], tuple[str, str]] = field(default_factory=dict)
    global_path: Path | None = None
    workspace_path: Path | None = None

    @property
    def private(self) -> bool:
        """Private mode (SPEC §18): `memory.privateUntil` is still ahead; it ends by itself."""
        return self.private_until is not None and time.time() < self.private_until

    @property
    def unknown_because(self) -> Problem | None:
        """The unreadable settings file that may hold memoryEnabled when no readable one does
        (the workspace's first): memory is then off until that file is fixed by hand, and
        `memtui enable` would not overwrite it."""
        if self.enabled_source != "default" or not self.unreadable:
            return None
        return next((p for p in self.unreadable if p.source == str(self.workspace_path)), self.unreadable[0])

    @property
    def enabled_why(self) -> str:
        unknown = self.unknown_because
        if unknown is not None:
            reason = unknown.message.split("; using defaults", 1)[0]
            return f"{unknown.source} cannot be read ({reason}), so memoryEnabled is unknown and memory stays off"
        if self.enabled_source == "workspace":
            return f"memoryEnabled is {str(self.enabled).lower()} in {self.workspace_path}"
        if self.enabled_source == "global":
            return f"memoryEnabled is {str(self.enabled).lower()} in {self.global_path}"
        return "memoryEnabled is not set, and memory is off by default"


def read_settings_bytes(path: Path) -> bytes | None:
    """The bytes of a settings file, None if it is missing. It must be a regular file of at
    most 1 MiB: a FIFO is never opened and a link to /dev/zero never read past the limit
    (RefusedFileError, an OSError, says why)."""
    return read_regular_if_exists(path, MAX_SETTINGS_BYTES)


def read_json_object(path: Path) -> tuple[dict[str, Any] | None, Problem | None]:
    """The file's object, or None if missing; a Problem when it can't be used."""
    try:
        raw = read_settings_bytes(path)
    except RefusedFileError as exc:
        return None, Problem(str(path), f"settings file {exc.reason}; using defaults and not overwriting it")
    except OSError as exc:
        return None, Problem(str(path), f"cannot read settings: {_os_reason(exc, path)}; using defaults and not overwriting it")
    return parse_json_object(path, raw)


def parse_json_object(path: Path, raw: bytes | None,
                      consequence: str = "using defaults and not overwriting it",
                      ) -> tuple[dict[str, Any] | None, Problem | None]:
    """`raw` (the bytes of `path`, None if missing) as a JSON object, or the Problem with it
    (its message ends with `consequence`)."""
    if raw is None:
        return None, None
    try:
        # depth-limited, no lone surrogate: a clear error for this file (SPEC §8)
        data = jsondata.loads(raw.decode("utf-8"), parse_float=_float_or_kept, parse_constant=KeptNumber)
    except UnicodeDecodeError:
        return None, Problem(str(path), f"settings file is not UTF-8; {consequence}")
    except json.JSONDecodeError as exc:
        return None, Problem(str(path), f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}; {consequence}")
    if not isinstance(data, dict):
        tail = "not overwriting it" if consequence.startswith("using defaults") else consequence
        return None, Problem(str(path), f"settings must be a JSON object, not {type(data).__name__}; {tail}")
    return data, None


def _shown(value: Any) -> str:
    """A settings value as the file writes it (`"yes"`, `null`, `1e400`), for messages; long ones cut."""
    if isinstance(value, KeptNumber):
        return value.text
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except ValueError:
        text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _nonneg_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _invalid(s: Settings, key: tuple[str, ...], value: Any, problem: Problem) -> None:
    """A saved value that is not used: reported, and kept by key for the settings form."""
    s.problems.append(problem)
    s.invalid[key] = (_shown(value), problem.message)


def _merge_section(target: dict[str, Any], given: Any, path: Path, key: str, check: Callable[[Any], bool],
                   s: Settings) -> None:
    if given is None:
        return
    if not isinstance(given, dict):
        s.problems.append(Problem(str(path), f"memory.{key} must be an object; ignored"))
        return
    for name, value in given.items():
        if name not in target:
            s.problems.append(Problem(str(path), f"memory.{key}.{name} is not a known key; ignored"))
        elif not check(value):
            _invalid(s, ("memory", key, name), value, Problem(
                str(path), f"memory.{key}.{name} has an invalid value {_shown(value)}; using {_shown(target[name])}"))
        else:
            target[name] = value


def load_settings(paths: Paths) -> Settings:
    s = Settings(global_path=paths.global_settings, workspace_path=paths.workspace_settings)
    gdata, problem = read_json_object(paths.global_settings)
    if problem:
        s.problems.append(problem)
        s.unreadable.append(problem)
    wdata = None
    if paths.workspace_settings != paths.global_settings:
        # a cloned repository's `.muse/settings.json` (or `.muse`) may be a symlink out of
        # the workspace: then it is not read at all
        problem = paths.workspace_settings_problem()
        if problem is None:
            wdata, problem = read_json_object(paths.workspace_settings)
        if problem:
            s.problems.append(problem)
            s.unreadable.append(problem)

    def enabled_from(data: dict[str, Any] | None, path: Path, which: str) -> bool | None:
        if data is None or "memoryEnabled" not in data:
            return None
        value = data["memoryEnabled"]
        if not isinstance(value, bool):
            _invalid(s, (which, "memoryEnabled"), value,
                     Problem(str(path), f"memoryEnabled must be true or false, not {_shown(value)}; ignored"))
            return None
        return value

    s.global_enabled = enabled_from(gdata, paths.global_settings, "global")
    s.workspace_enabled = enabled_from(wdata, paths.workspace_settings, "workspace")
    if s.workspace_enabled is not None:
        s.enabled, s.enabled_source = s.workspace_enabled, "workspace"
    elif s.global_enabled is not None:
        s.enabled, s.enabled_source = s.global_enabled, "global"

    if wdata is not None and "memory" in wdata:
        wmemory = wdata["memory"]
        # SPEC §15: a workspace may choose how its memories are picked (`injection`), never
        # how much is sent or from where: every other key is the global file's alone
        others = [k for k in wmemory if k != "injection"] if isinstance(wmemory, dict) else ["memory"]
        if others:
            s.problems.append(
                Problem(
                    str(paths.workspace_settings),
                    "\"memory\" settings (budgets, gates, limits) are read only from the global settings; ignored here"
                    + (" (except memory.injection)" if isinstance(wmemory, dict) else ""),
                )
            )
        if isinstance(wmemory, dict) and "injection" in wmemory:
            _read_injection(s, wmemory["injection"], paths.workspace_settings, "workspace")

    ui = (gdata or {}).get("memtui")
    if isinstance(ui, dict) and isinstance(ui.get("theme"), str) and ui["theme"]:
        s.theme = ui["theme"]
    memory = (gdata or {}).get("memory")
    if memory is None:
        return s
    gpath = paths.global_settings
    if not isinstance(memory, dict):
        s.problems.append(Problem(str(gpath), "\"memory\" must be an object; using defaults"))
        return s
    _merge_section(s.budget, memory.get("budget"), gpath, "budget", _nonneg_int, s)
    _merge_section(s.gate, memory.get("gate"), gpath, "gate", lambda v: _is_number(v) and 0 <= v <= 1, s)
    _merge_section(s.max_items, memory.get("maxItems"), gpath, "maxItems", lambda v: v is None or _nonneg_int(v), s)
    if "maxItemChars" in memory:
        v = memory["maxItemChars"]
        if isinstance(v, int) and not isinstance(v, bool) and v >= 1:
            s.max_item_chars = v
        else:
            _invalid(s, ("memory", "maxItemChars"), v, Problem(
                str(gpath), f"memory.maxItemChars must be a positive integer, not {_shown(v)}; using 200"))
    s.redact_secrets = _switch(memory, "redactSecrets", s.redact_secrets, gpath, s)
    s.require_review = _switch(memory, "requireReview", s.require_review, gpath, s)
    if "retrieval" in memory:
        v = memory["retrieval"]
        if v in RETRIEVAL_MODES:
            s.retrieval = v
        else:
            _invalid(s, ("memory", "retrieval"), v, Problem(
                str(gpath), f"memory.retrieval must be \"keyword\" or \"hybrid\", not {_shown(v)}; using keyword"))
    if "decay" in memory:
        _read_decay(s, memory["decay"], gpath)
    if "injection" in memory and s.injection_source != "workspace":
        _read_injection(s, memory["injection"], gpath, "global")
    if memory.get("privateUntil") is not None:
        _read_private(s, memory["privateUntil"], gpath)
    return s


INJECTION_MODES = ("muse", "focused")


def _read_injection(s: Settings, value: Any, path: Path, which: str) -> None:
    """`memory.injection` (SPEC §15): "muse" (§5, the default) or "focused"; the workspace's wins."""
    if value in INJECTION_MODES:
        s.injection, s.injection_source = value, which
    else:
        key = ("memory", "injection") if which == "global" else ("workspace", "memory", "injection")
        _invalid(s, key, value, Problem(
            str(path), f"memory.injection must be \"muse\" or \"focused\", not {_shown(value)}; ignored"))


def _read_private(s: Settings, value: Any, gpath: Path) -> None:
    from .forgetting import private_until

    try:
        s.private_until = private_until(value)
    except (ValueError, TypeError) as exc:
        _invalid(s, ("memory", "privateUntil"), value, Problem(
            str(gpath), f"memory.privateUntil {exc if str(exc).startswith('must') else 'must be an ISO time'}, "
                        f"not {_shown(value)}; private mode is off"))


def _switch(memory: dict[str, Any], key: str, current: bool, gpath: Path, s: Settings) -> bool:
    """A true/false key under "memory": its value, or `current` (reported) when it is not a boolean."""
    v = memory.get(key, current)
    if isinstance(v, bool):
        return v
    _invalid(s, ("memory", key), v, Problem(str(gpath), f"memory.{key} must be true or false, not {_shown(v)}; ignored"))
    return current


RETRIEVAL_MODES = ("keyword", "hybrid")


def _read_decay(s: Settings, decay: Any, gpath: Path) -> None:
    if decay is None:
        return
    if not isinstance(decay, dict):
        s.problems.append(Problem(str(gpath), "memory.decay must be an object; ignored"))
        return
    for name in decay:
        if name != "halfLifeDays":
            s.problems.append(Problem(str(gpath), f"memory.decay.{name} is not a known key; ignored"))
    v = decay.get("halfLifeDays")
    if v is None:
        return
    if _is_number(v) and v > 0 and math.isfinite(v):
        s.half_life_days = float(v)
    else:
        s.problems.append(Problem(str(gpath), f"memory.decay.halfLifeDays must be a positive number of days, not {_shown(v)}; decay is off"))


def read_json_for_update(path: Path, within: Path | None = None,
                         consequence: str = "using defaults and not overwriting it") -> tuple[bytes | None, dict[str, Any]]:
    """The bytes of a JSON file about to be changed (None when missing) and its object ({}
    when missing). SettingsError (naming the file and the reason) when it exists but is not a
    JSON object or not a regular file of at most 1 MiB, or leads outside `within` through a
    symlink. Every JSON file memtui changes (Muse's settings, the assistants' settings and
    MCP client configs) is read here and written with `write_json_object`."""
    shown = path_text(str(path))
    if within is not None:
        reason = escapes(path, within)
        if reason is not None:
            raise SettingsError(f"{shown}: {reason}; not written")
    try:
        raw = read_settings_bytes(path)
    except RefusedFileError as exc:
        raise SettingsError(f"{shown}: {exc.reason}; not overwritten") from None
    except OSError as exc:
        raise SettingsError(f"{shown}: cannot read it: {_os_reason(exc, path)}; not overwritten") from None
    data, problem = parse_json_object(path, raw, consequence)
    if problem:
        raise SettingsError(f"{shown}: {problem.message}")
    return raw, copy.deepcopy(data) if data is not None else {}


class KeptNumber:
    """A number in a JSON file that no float holds as written (`1e400`, or the `NaN` and
    `Infinity` some writers allow): kept as its text, so writing the file back gives the same
    token instead of `Infinity` (which is not JSON). Not a number to memtui's own checks."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeptNumber) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def _float_or_kept(text: str) -> float | KeptNumber:
    value = float(text)
    return value if math.isfinite(value) else KeptNumber(text)


def dump_json_object(data: dict[str, Any]) -> bytes:
    """How memtui writes a JSON settings file: 2-space indent, UTF-8 kept, final newline; a
    number kept as written (KeptNumber) goes back as its own text."""
    return (dumps_value(data) + "\n").encode("utf-8")


def json_text_for(data: dict[str, Any], before: bytes | None) -> bytes:
    """The bytes to write for `data` over a file that held `before`: its text edited in place,
    every byte memtui did not change kept (SPEC §8, core/jsonedit.py), else written whole."""
    if before is not None:
        from .jsonedit import splice

        try:
            text = before.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None:
            out = splice(text, data, _loads_kept, dumps_value)
            if out is not None:
                return out.encode("utf-8")
    return dump_json_object(data)


def _loads_kept(text: str) -> Any:
    return json.loads(text, parse_float=_float_or_kept, parse_constant=KeptNumber)


def dumps_value(value: Any, indent: str | int | None = 2) -> str:
    """One JSON value as memtui writes it (no final newline), KeptNumbers as their own text."""
    kept: list[str] = []
    nonce = secrets.token_hex(8)

    def placeholder(value: object) -> str:
        if not isinstance(value, KeptNumber):
            raise TypeError(f"{type(value).__name__} is not JSON")
        kept.append(value.text)
        return f"\x00{nonce}:{len(kept) - 1}\x00"  # written as "\u0000…\u0000": no other string holds the nonce

    text = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False, default=placeholder)
    for i, number in enumerate(kept):
        text = text.replace(f'"\\u0000{nonce}:{i}\\u0000"', number, 1)
    return text


def write_json_object(path: Path, data: dict[str, Any], expected: bytes | None, root: Path | None = None,
                      container: Path | None = None) -> None:
    """Write `data` to `path` (its folder made when missing), refused with ConflictError when
    the file is no longer `expected` (what was read): another writer's keys are never lost.
    SettingsError (file and reason) when it cannot be written.

    The folder and the file pass the write gate with `root` (default: the file's folder)
    inside `container`: nothing below `root` may be a symlink."""
    shown = path_text(str(path))
    root = root if root is not None else path.parent
    try:
        gate.make_dir(path.parent, root=root, container=container)
    except gate.Refused as exc:
        raise SettingsError(str(exc)) from None
    except OSError as exc:
        if isinstance(exc, FileExistsError):
            reason = f"{path_text(str(path.parent))} is a file, not a folder"
        else:
            reason = _os_reason(exc, path.parent)
        raise SettingsError(f"{shown}: cannot create its folder: {reason}; not written") from None
    try:
        # refused if the file changed after it was read: another writer's keys are never lost
        gate.write(path, json_text_for(data, expected), root=root, container=container, kind=gate.Kind.SETTINGS,
                   expected=expected)
    except gate.Refused as exc:
        raise SettingsError(str(exc)) from None
    except OSError as exc:
        raise SettingsError(f"{shown}: cannot write it: {_os_reason(exc, path)}; not written") from None


def update_json_file(path: Path, changes: dict[tuple[str, ...], Any], within: Path | None = None,
                     root: Path | None = None) -> None:
    """Set each key path in `changes` (a value of `...` deletes it), keeping every other key
    and value. Refuses (SettingsError, naming the file and the reason) when the file exists
    but is not a JSON object, is not a regular file of at most 1 MiB, leads outside `within`
    through a symlink, or cannot be written (read-only folder, a parent that is a file).
    A ConflictError when the file changed while it was being updated.

    The write passes the write gate with `root` (default: the file's folder) inside `within`:
    nothing below `root` may be a symlink."""
    raw, data = read_json_for_update(path, within)
    for keys, value in changes.items():
        node = data
        for key in keys[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                child = {}
                node[key] = child
            node = child
        if value is ...:
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = value
    write_json_object(path, data, raw, root=root, container=within)


def set_workspace_enabled(paths: Paths, enabled: bool) -> Path:
    """Set `memoryEnabled` in the workspace settings; SettingsError (file + reason) when that
    file is invalid, not a regular file, leads out of the workspace, or cannot be written."""
    update_json_file(paths.workspace_settings, {("memoryEnabled",): enabled}, within=paths.workspace,
                     root=paths.workspace_settings.parent)
    return paths.workspace_settings


def set_global(paths: Paths, changes: dict[tuple[str, ...], Any]) -> Path:
    path = paths.global_settings
    if path.is_symlink():  # the person's own file, e.g. linked from their dotfiles: written where it leads
        try:
            path = path.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise SettingsError(f"{path_text(str(path))}: broken symlink or symlink loop ({exc}); not written") from None
    update_json_file(path, changes)
    return paths.global_settings


