"""The files of a workspace, bounded (SPEC §16): what a bare file name in a prompt can name,
and what a scope glob can match (the doctor's `never_fires`).

The walk is iterative (no recursion limit), follows no symbolic link, never enters `.git`,
`node_modules` or another folder that is always generated, leaves out what the workspace's
top `.gitignore` ignores (read with pathspec, gitignore's own rules) and stops at `limit`
files: a monorepo of a million files costs at most `limit` directory entries, and the answer
says it was cut (`Listing.complete`).
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .bounded_reader import read_regular_if_exists

LIMIT = 20_000  # files listed at most
GITIGNORE_BYTES = 256 * 1024
SKIPPED = frozenset({".git", "node_modules", ".hg", ".svn", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
                     ".pytest_cache", ".ruff_cache", ".next", ".cache"})


@dataclass(frozen=True)
class Listing:
    files: tuple[str, ...]  # workspace-relative, "/" separators, in walk order
    complete: bool  # False: the walk stopped at its limit


def _ignored(workspace: Path) -> Any:
    """The workspace's top `.gitignore` as a pathspec matcher, or None."""
    path = workspace / ".gitignore"
    try:
        if path.is_symlink():
            return None
        data = read_regular_if_exists(path, GITIGNORE_BYTES)  # a FIFO, device or larger file: refused
        if data is None:
            return None
        lines = data.decode("utf-8", errors="replace").splitlines()
    except OSError:
        return None
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # a line pathspec cannot read: nothing is left out for it
        return None


def list_files(workspace: Path, limit: int = LIMIT) -> Listing:
    """The workspace's files (see the module's docstring), at most `limit` of them."""
    ignore = _ignored(workspace)
    out: list[str] = []
    queue: deque[tuple[str, str]] = deque([(str(workspace), "")])
    while queue:
        folder, rel = queue.popleft()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            child = f"{rel}/{name}" if rel else name
            try:
                if entry.is_symlink():
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if name in SKIPPED or (ignore is not None and ignore.match_file(child + "/")):
                    continue
                queue.append((entry.path, child))
                continue
            if ignore is not None and ignore.match_file(child):
                continue
            out.append(child)
            if len(out) >= limit:
                return Listing(tuple(out), False)
    return Listing(tuple(out), True)
