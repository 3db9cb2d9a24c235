"""Scoped memories (SPEC §16): the files a memory file is about, and whether a file in
context matches them.

A memory file names its scope with `paths:` in its frontmatter: globs relative to the
workspace root (`src/api/**`, `**/*.ts`, `src/**/*.{ts,tsx}`), a YAML list or one
comma-separated string. `**` is gitignore-style (any number of folders, none included), braces
expand, a glob without a `/` matches a file's name at any depth (`*.ts` is `**/*.ts`), and a
glob that names a folder matches every file below it (`src/api` is `src/api/**`).

The injection's one step for scope (`left_out`): the entries of a scoped file are candidates
only when a file in context matches one of its globs; the others are listed with the status
`out_of_scope`, their globs in the reason. An unscoped file is not touched by this step.

The glob library (wcmatch) is imported when a scoped file is first matched: a workspace
without scoped memories never pays for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

SCOPE_KEY = "paths"  # the frontmatter key of a Muse memory file's scope


def globs_of(value: Any) -> tuple[str, ...]:
    """The globs a frontmatter value names: a list of strings, or one comma-separated string
    (a comma inside braces, `*.{ts,tsx}`, does not split). Empty values are dropped."""
    if value is None:
        return ()
    if isinstance(value, str):
        items = split_globs(value)
    elif isinstance(value, (list, tuple)):
        items = [str(v) for v in value if v is not None and not isinstance(v, (dict, list))]
    else:
        items = [str(value)]
    return tuple(dict.fromkeys(g.strip() for g in items if g.strip()))


def split_globs(text: str) -> list[str]:
    """`a/**, b/*.{ts,tsx}` -> [`a/**`, `b/*.{ts,tsx}`]: commas split outside braces and brackets."""
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "{[":
            depth += 1
        elif ch in "}]" and depth:
            depth -= 1
        if ch == "," and not depth:
            out.append("".join(current))
            current = []
        else:
            current.append(ch)
    out.append("".join(current))
    return [g.strip().strip("'\"").strip() for g in out]


def scope_of(meta: Mapping[str, Any]) -> tuple[str, ...]:
    """A Muse memory file's scope: its `paths:` globs (empty: unscoped)."""
    return globs_of(meta.get(SCOPE_KEY))


def _normal(glob: str) -> str:
    glob = glob.strip().replace("\\", "/")
    while glob.startswith("./"):
        glob = glob[2:]
    return glob.lstrip("/") if glob.startswith("/") and not glob.startswith("//") else glob


@lru_cache(maxsize=256)
def _matcher(globs: tuple[str, ...]) -> Callable[[str], bool]:
    from wcmatch import glob as wc

    flags = wc.GLOBSTAR | wc.BRACE | wc.DOTMATCH | wc.MATCHBASE
    patterns = [_normal(g).rstrip("/") or "**" for g in globs]

    def match(path: str) -> bool:
        if wc.globmatch(path, patterns, flags=flags):
            return True
        parent = PurePosixPath(path).parent  # a glob naming a folder matches what is below it
        while str(parent) not in (".", "/", ""):
            if wc.globmatch(str(parent), patterns, flags=flags):
                return True
            parent = parent.parent
        return False

    return match


def matches(globs: Sequence[str], path: str) -> bool:
    """Does the workspace-relative path `path` ("/" separators) match one of `globs`?"""
    return bool(globs) and _matcher(tuple(globs))(path)


def matching(globs: Sequence[str], files: Iterable[str]) -> list[str]:
    """The files of `files` that match one of `globs`."""
    if not globs:
        return []
    match = _matcher(tuple(globs))
    return [f for f in files if match(f)]


def reason(globs: Sequence[str]) -> str:
    """Why a scoped entry is out of scope, as `preview --json` says it (the files in context
    are the result's `files`)."""
    return f"no file in context matches paths: {', '.join(globs)}"


# ---------------------------------------------------------------------- the injection's step
Files = Sequence[str] | Callable[[], Sequence[str]]


class Context:
    """The files in context for one injection, workspace-relative with "/" separators; found
    when first asked for (`find`), so a workspace with no scoped memory never looks."""

    def __init__(self, files: Files = ()):
        self._given = files
        self._files: tuple[str, ...] | None = None if callable(files) else tuple(files)
        self.asked = False  # whether anything needed them

    @property
    def files(self) -> tuple[str, ...]:
        self.asked = True
        if self._files is None:
            assert callable(self._given)
            self._files = tuple(self._given())
        return self._files


def left_out(scoped: Mapping[int, Sequence[str]], context: Context) -> frozenset[int]:
    """SPEC §16's step: the positions of scoped entries (`scoped`: position -> globs) whose
    globs match no file in context. Unscoped entries are never in `scoped`."""
    if not scoped:
        return frozenset()
    files = context.files
    if not files:
        return frozenset(scoped)
    decided: dict[tuple[str, ...], bool] = {}  # one decision per file's globs, not per entry
    out = []
    for pos, globs in scoped.items():
        key = tuple(globs)
        hit = decided.get(key)
        if hit is None:
            hit = decided[key] = bool(matching(key, files))
        if not hit:
            out.append(pos)
    return frozenset(out)


# ---------------------------------------------------------------------- paths given by a person
def relative_to(workspace: Path, path: str | os.PathLike[str], cwd: Path | None = None) -> str | None:
    """`path` as the workspace-relative "/" path scope globs are matched against: an absolute
    path inside the workspace, or a relative one (from `cwd` when that is inside the workspace,
    else from the workspace root). None for a path outside the workspace. The file need not
    exist (a file about to be created is in context too)."""
    raw = os.fspath(path)
    if not raw.strip():
        return None
    try:
        p = Path(raw).expanduser()
    except RuntimeError:  # `~someone` without a home folder
        return None
    if not p.is_absolute():
        base = cwd if cwd is not None and _inside(cwd, workspace) else workspace
        p = base / p
    p = Path(os.path.normpath(p))
    try:
        resolved_ws = workspace.resolve()
    except OSError:
        resolved_ws = workspace
    for root in (workspace, resolved_ws):
        try:
            rel = p.relative_to(root)
        except ValueError:
            continue
        text = rel.as_posix()
        return None if text in ("", ".") else text
    try:  # through a link: compare resolved paths
        rel = p.resolve().relative_to(resolved_ws)
    except (OSError, ValueError):
        return None
    text = rel.as_posix()
    return None if text in ("", ".") else text


def typed_files(workspace: Path, text: str) -> tuple[str, ...]:
    """The files a person typed in one field (space- or comma-separated), workspace-relative;
    a word outside the workspace is left out."""
    found = (relative_to(workspace, word) for word in text.replace(",", " ").split())
    return tuple(dict.fromkeys(f for f in found if f is not None))


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (OSError, ValueError):
        return False
