"""Where memories live (SPEC §1): home, workspace, memory roots, which files are memory files."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .model import FILE_LAYERS, LAYERS, Layer  # noqa: F401  (re-exported)

MAX_FILE_BYTES = 1024 * 1024  # files over 1 MiB are skipped and reported


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """`--home` wins, then `$MUSE_HOME`, then `~/.muse`; always absolute and resolved."""
    if home is None:
        home = os.environ.get("MUSE_HOME") or Path.home() / ".muse"
    return Path(home).expanduser().resolve()


def resolve_workspace(
    workspace: str | os.PathLike[str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> Path:
    """`-w DIR`; else the nearest ancestor (itself included) with a `.muse/` directory;
    else the nearest with `.git`; else the current directory."""
    if workspace is not None:
        return Path(workspace).expanduser().resolve()
    start = Path(cwd if cwd is not None else os.getcwd()).resolve()
    chain = [start, *start.parents]
    for marker in (".muse", ".git"):
        for directory in chain:
            candidate = directory / marker
            if marker == ".muse" and candidate.is_dir():
                return directory
            if marker == ".git" and candidate.exists():
                return directory
    return start


@dataclass(frozen=True)
class Paths:
    home: Path
    workspace: Path

    @classmethod
    def resolve(cls, home=None, workspace=None, cwd=None) -> "Paths":
        return cls(resolve_home(home), resolve_workspace(workspace, cwd))

    @property
    def user_root(self) -> Path:
        return self.home / "memory"

    @property
    def project_root(self) -> Path:
        return self.workspace / ".muse" / "memory"

    @property
    def db_path(self) -> Path:
        return self.home / "muse.db"

    @property
    def global_settings(self) -> Path:
        return self.home / "settings.json"

    @property
    def workspace_settings(self) -> Path:
        return self.workspace / ".muse" / "settings.json"

    def root(self, layer: str) -> Path:
        if layer == "user":
            return self.user_root
        if layer == "project":
            return self.project_root
        raise ValueError(f"layer {layer!r} has no memory root")

    def default_file(self, layer: str) -> Path:
        """Where `remember` appends: notes.md for the user, context.md for the project."""
        return self.root(layer) / ("notes.md" if layer == "user" else "context.md")


@dataclass(frozen=True)
class Problem:
    """A file or source that could not be read, with the reason. Never carries memory text."""

    source: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"source": self.source, "message": self.message}


def is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def iter_memory_files(root: Path) -> tuple[list[Path], list[Problem]]:
    """Every `*.md` under `root`, recursively, sorted by root-relative path.

    Skips any path with a component starting with `.`; follows a symlink (file or
    directory) only when its target resolves inside the root, reporting the others;
    never loops on a symlink cycle. Returns the files and the problems found.
    """
    files: list[Path] = []
    problems: list[Problem] = []
    if not root.is_dir():
        return files, problems
    real_root = root.resolve()
    seen_dirs: set[Path] = set()
    seen_files: set[Path] = set()
    linked: list[tuple[Path, Path, bool]] = []  # (path, target, is_dir), followed after real paths

    def walk(directory: Path) -> None:
        real_dir = directory.resolve()
        if real_dir in seen_dirs:
            return
        seen_dirs.add(real_dir)
        try:
            children = sorted(os.scandir(directory), key=lambda d: d.name)
        except OSError as exc:
            problems.append(Problem(str(directory), f"cannot read directory: {exc.strerror or exc}"))
            return
        for child in children:
            if child.name.startswith("."):
                continue
            path = Path(child.path)
            if child.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    if child.name.endswith(".md"):
                        problems.append(Problem(str(path), "broken symlink or symlink loop; not followed"))
                    continue
                if not is_inside(target, real_root):
                    if child.name.endswith(".md") or target.is_dir():
                        problems.append(
                            Problem(str(path), "symlink target is outside the memory root; not followed")
                        )
                    continue
                if target.is_dir():
                    linked.append((path, target, True))
                elif child.name.endswith(".md"):
                    linked.append((path, target, False))
                continue
            try:
                is_dir = child.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                walk(path)
            elif child.name.endswith(".md"):
                seen_files.add(path.resolve())
                files.append(path)

    walk(root)
    # Symlinks inside the root are followed after the real tree, so a file reached both
    # ways is listed once, under its real path.
    while linked:
        path, target, is_dir = linked.pop(0)
        if is_dir:
            walk(path)
        elif target not in seen_files:
            seen_files.add(target)
            files.append(path)
    files.sort(key=lambda p: relative_posix(p, root))
    return files, problems


def relative_posix(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()
