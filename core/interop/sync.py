"""Export as a sync (SPEC §9): replace what memtui wrote before, touch nothing else.

memtui marks the files it writes at a destination in a manifest it keeps in the Muse home
(`<home>/exports/<hash of the destination>.json`: each file's path relative to the
destination and the sha256 of the bytes memtui wrote), not inside the files and not at
the destination:

- the exported files stay exactly what the other tool expects (no comment or extra key
  that Claude Code would load into the model's context, Cursor would show, or that would
  break a byte-for-byte round trip);
- a repository cannot ship a manifest claiming memtui wrote its `AGENTS.md`: only the
  Muse home, which a clone cannot write into, decides what memtui may replace.

For each file an export would write, the plan says:

- `added`: nothing is there yet;
- `replaced`: memtui wrote it, nobody changed it since, and the new text differs; or the
  format says the new text is what is there with only memtui's own additions (Claude Code's
  `MEMORY.md` as memtui imported it, with the lines of new topics at its end: `adopt`);
- `unchanged`: what is there is already exactly the new text;
- `conflict`: memtui wrote it but it was changed since (by hand, by the tool): left alone;
- `left`: memtui did not write it (or it is not a regular file): never touched;
- `removed`: memtui wrote it earlier, nobody changed it, and this export no longer has it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from .. import gate, jsondata
from ..bounded_reader import read_regular
from ..fileio import ConflictError, sha256

MANIFEST_FOLDER = "exports"
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
MAX_EXPORT_BYTES = 256 * 1024 * 1024  # a jsonl backup of a whole home


class Action(StrEnum):
    ADDED = "added"
    REPLACED = "replaced"
    UNCHANGED = "unchanged"
    CONFLICT = "conflict"
    LEFT = "left"
    REMOVED = "removed"


# what a dry run and a report list, in this order
ACTIONS: tuple[Action, ...] = tuple(Action)
BLOCKED = (Action.CONFLICT, Action.LEFT)


@dataclass
class Step:
    path: Path
    rel: str
    action: Action
    data: bytes | None = None  # what memtui would write (None for removed / left over)
    current: bytes | None = None  # what is there now
    reason: str = ""


@dataclass
class SyncPlan:
    base: Path
    manifest: Path
    fmt: str
    steps: list[Step] = field(default_factory=list)
    previous: dict[str, str] = field(default_factory=dict)  # rel -> sha256 memtui wrote last time
    problem: str = ""  # the manifest could not be read (then nothing counts as memtui's)
    target: Path | None = None  # what the record is about (the folder, or the one file)
    home: Path | None = None  # the Muse home: the write gate's root for the manifest
    container: Path | None = None  # the workspace, when the destination is inside it

    def of(self, action: Action) -> list[Step]:
        return [s for s in self.steps if s.action == action]

    def counts(self) -> dict[str, int]:
        return {str(a): len(self.of(a)) for a in ACTIONS}

    @property
    def blocked(self) -> list[Step]:
        """Files this export wanted to write but may not (changed since, or not memtui's)."""
        return [s for s in self.steps if s.action in BLOCKED and s.data is not None]

    def as_dict(self) -> dict[str, object]:
        return {"destination": str(self.base), "manifest": str(self.manifest), **self.counts(),
                "files": [{"path": str(s.path), "action": str(s.action), **({"reason": s.reason} if s.reason else {})}
                          for s in self.steps]}


def _key(target: Path, fmt: str) -> str:
    """What one export record is about: a format written to one destination (a folder, or
    the one file of agents-md / jsonl), so exports of other formats, or of another single
    file into the same folder, never count as stale files of this one."""
    return f"{fmt}\0{os.path.abspath(target)}"


def manifest_path(home: Path, target: Path, fmt: str) -> Path:
    key = hashlib.sha256(os.fsencode(_key(target, fmt))).hexdigest()[:24]
    return Path(home) / MANIFEST_FOLDER / f"{key}.json"


def _load_manifest(path: Path, target: Path, fmt: str) -> tuple[dict[str, str], str]:
    try:
        data = read_regular(path, MAX_MANIFEST_BYTES)
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        return {}, f"{path}: cannot read ({exc.strerror or exc}); nothing at the destination counts as memtui's"
    try:
        obj = jsondata.loads(data.decode("utf-8"))
        files = obj["files"]
        if (obj.get("destination"), obj.get("format")) != (os.path.abspath(target), fmt) or not isinstance(
                files, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            raise ValueError
    except (ValueError, KeyError, TypeError):
        return {}, f"{path}: not a memtui export record; nothing at the destination counts as memtui's"
    outside = sorted(rel for rel in files if not _inside_destination(rel))
    if outside:  # memtui writes only names below the destination: the record was changed by someone else
        return {}, (f"{path}: names files outside the destination ({', '.join(map(repr, outside[:3]))}); not a "
                    "record memtui wrote, so nothing at the destination counts as memtui's")
    return dict(files), ""


def _inside_destination(rel: str) -> bool:
    """A manifest's name of a file: a relative POSIX path below the destination (no `..`, no
    absolute path, no empty or `.` part, no backslash or NUL)."""
    parts = rel.split("/")
    return (bool(rel) and "\\" not in rel and "\0" not in rel and not os.path.isabs(rel)
            and all(part not in ("", ".", "..") for part in parts))


def _current(path: Path, base: Path) -> tuple[bytes | None, str]:
    """What is at `path` now (None: nothing), or a reason it is not a file memtui may touch."""
    here = base
    for part in path.relative_to(base).parts[:-1]:
        here = here / part
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return None, f"{here} is a symlink; export never writes through one"
        except FileNotFoundError:
            return None, ""
        except OSError as exc:
            return None, f"{here}: {exc.strerror or exc}"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return None, "not a regular file (a symlink, folder or device); never touched"
    try:
        return read_regular(path, MAX_EXPORT_BYTES, follow_symlinks=False), ""
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"


def check_base(base: Path, root: Path) -> None:
    """Refuse (InteropError) a destination under `root` reached through a symlink below `root`
    (a repository can ship `.cursor -> ~` or `memory-bank -> /anywhere`): the write gate's
    own check, made before anything is planned."""
    from . import InteropError

    for folder in (base, *base.parents):  # the destination folder, or the first of its folders that is there
        if os.path.lexists(folder):
            if not folder.is_dir():
                raise InteropError(f"{folder}: not a directory; nothing was written")
            break
    if base != root and root not in base.parents:
        return
    try:
        gate.target(base, root, root_itself=True)
    except gate.Refused as exc:
        raise InteropError(f"{exc.path}: {exc.reason}; export never writes through one "
                           "(nothing was written)") from None


# (rel, what is there, what memtui would write, the rels memtui may write) -> the reason memtui
# may take the file over although it did not write it, or "" (see `claude_code.adopt`)
Adopt = Callable[[str, bytes, bytes, frozenset[str]], str]


def plan(files: dict[Path, bytes], base: Path, home: Path, fmt: str, target: Path | None = None,
         container: Path | None = None, adopt: Adopt | None = None) -> SyncPlan:
    """What writing `files` (absolute paths under `base`) would do, given what memtui wrote
    there before; `target` names the destination of the record (default `base`); `container`
    the workspace when `base` is inside it (the write gate keeps every write there); `adopt`
    the format's word on a file memtui did not write whose new text only adds memtui's own
    lines to it (it is then replaced, and memtui's from then on)."""
    target = target or base
    manifest = manifest_path(home, target, fmt)
    gate.target(manifest, Path(home))  # the record stays in the Muse home (gate.Refused before anything is written)
    previous, problem = _load_manifest(manifest, target, fmt)
    result = SyncPlan(base, manifest, fmt, previous=previous, problem=problem, target=target, home=Path(home),
                      container=container)
    wanted: set[str] = set()
    for path, data in files.items():
        rel = path.relative_to(base).as_posix()
        wanted.add(rel)
        current, reason = _current(path, base)
        if reason:
            result.steps.append(Step(path, rel, Action.LEFT, data, None, reason))
        elif current is None:
            result.steps.append(Step(path, rel, Action.ADDED, data))
        elif current == data:
            result.steps.append(Step(path, rel, Action.UNCHANGED, data, current))
        elif rel in previous and sha256(current) == previous[rel]:
            result.steps.append(Step(path, rel, Action.REPLACED, data, current))
        elif rel in previous:
            result.steps.append(Step(path, rel, Action.CONFLICT, data, current,
                                     "changed since memtui wrote it; left alone"))
        else:
            result.steps.append(Step(path, rel, Action.LEFT, data, current, "not written by memtui; never touched"))
    if adopt is not None:
        writable = frozenset(s.rel for s in result.steps if s.action in (Action.ADDED, Action.REPLACED, Action.UNCHANGED))
        for step in result.steps:
            if step.action == Action.LEFT and step.current is not None and step.data is not None:
                why = adopt(step.rel, step.current, step.data, writable)
                if why:
                    step.action, step.reason = Action.REPLACED, why
    for rel, digest in sorted(previous.items()):
        if rel in wanted:
            continue
        path = base.joinpath(*rel.split("/"))
        current, reason = _current(path, base)
        if current is None and not reason:
            continue  # already gone
        if current is not None and sha256(current) == digest:
            result.steps.append(Step(path, rel, Action.REMOVED, None, current))
        else:
            result.steps.append(Step(path, rel, Action.CONFLICT, None, current,
                                     reason or "no longer exported, but changed since memtui wrote it; left alone"))
    return result


def apply(sync: SyncPlan) -> SyncPlan:
    """Carry the plan out, file by file; a file that changed since the plan becomes a conflict.
    The manifest then records what memtui wrote (and still marks conflicting files as its own)."""
    record = dict(sync.previous)
    for step in sync.steps:
        try:
            if step.action in (Action.ADDED, Action.REPLACED):
                assert step.data is not None
                gate.write(step.path, step.data, root=sync.base, container=sync.container, kind=gate.Kind.TEXT,
                           expected=step.current)
            elif step.action == Action.REMOVED:
                _remove(step, sync)
        except ConflictError:
            step.action, step.reason = Action.CONFLICT, "changed while the export ran; left alone"
            continue
        except gate.Refused as exc:  # a link appeared on the way since the plan
            step.action, step.reason = Action.LEFT, f"{exc.reason}; never touched"
            continue
        if step.action in (Action.ADDED, Action.REPLACED, Action.UNCHANGED):
            assert step.data is not None
            record[step.rel] = sha256(step.data)
        elif step.action == Action.REMOVED:
            record.pop(step.rel, None)
    for rel in list(record):
        if not any(s.rel == rel for s in sync.steps) and not os.path.lexists(sync.base.joinpath(*rel.split("/"))):
            record.pop(rel)  # deleted by someone: nothing left to mark
    data = {"destination": os.path.abspath(sync.target or sync.base), "format": sync.fmt,
            "files": dict(sorted(record.items()))}
    home = sync.home if sync.home is not None else sync.manifest.parent.parent
    gate.write(sync.manifest, (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8"), root=home,
               kind=gate.Kind.DATA)
    return sync


def _remove(step: Step, sync: SyncPlan) -> None:
    current, _ = _current(step.path, step.path.parent)
    if current != step.current:
        raise ConflictError(f"{step.path} changed since the plan")
    gate.remove(step.path, root=sync.base, container=sync.container)

