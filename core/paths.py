"""Where memories live (SPEC §1): home, workspace, memory roots, which files are memory files."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path

from .bounded_reader import file_kind
from .display import path_text
from .model import FILE_LAYERS, LAYERS, Layer  # noqa: F401  (re-exported)

MAX_FILE_BYTES = 1024 * 1024  # files over 1 MiB are skipped and reported


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """`--home` wins, then `$MUSE_HOME`, then `~/.muse`; always absolute and resolved."""
    if home is None:
        home = os.environ.get("MUSE_HOME") or Path.home() / ".muse"
    return Path(home).expanduser().resolve()


def home_option(home: Path) -> tuple[str, ...]:
    """`--home HOME` for a command another program runs (an assistant's hook, an MCP client's
    server): it starts without this shell's `$MUSE_HOME`, so a home other than `~/.muse` is
    named; nothing for `~/.muse`."""
    return () if home == (Path.home() / ".muse").expanduser().resolve() else ("--home", str(home))


class WorkspaceError(ValueError):
    """The workspace asked for cannot be one (not an existing folder, or its project memory
    root would be the user memory root); the message says which and why."""


def resolve_workspace(
    workspace: str | os.PathLike[str] | None = None, cwd: str | os.PathLike[str] | None = None,
    home: Path | None = None,
) -> Path:
    """`-w DIR` (an existing folder); else the nearest ancestor (itself included) with a
    `.muse/` directory that is not the Muse `home` itself (SPEC §1: the home is never a
    workspace marker); else the nearest with `.git`; else the current directory."""
    if workspace is not None:
        chosen = Path(workspace).expanduser()
        if not chosen.is_dir():
            what = "does not exist" if not os.path.lexists(chosen) else "is not a directory"
            raise WorkspaceError(f"workspace {path_text(str(workspace))} {what}")
        return chosen.resolve()
    start = Path(cwd if cwd is not None else os.getcwd()).resolve()
    chain = [start, *start.parents]
    for marker in (".muse", ".git"):
        for directory in chain:
            candidate = directory / marker
            if marker == ".muse" and candidate.is_dir() and not _is_home(candidate, home):
                return directory
            if marker == ".git" and candidate.exists():
                return directory
    return start


def _is_home(candidate: Path, home: Path | None) -> bool:
    if home is None:
        return False
    try:
        return candidate.resolve() == home.resolve()
    except (OSError, RuntimeError):
        return False


@dataclass(frozen=True)
class Paths:
    home: Path
    workspace: Path

    @classmethod
    def resolve(cls, home: str | os.PathLike[str] | None = None, workspace: str | os.PathLike[str] | None = None,
                cwd: str | os.PathLike[str] | None = None) -> Paths:
        """The home and the workspace (SPEC §1); WorkspaceError when `workspace` is not an
        existing folder, or when the workspace's project memory root would be the user memory
        root (its `.muse` is the home)."""
        home_path = resolve_home(home)
        found = cls(home_path, resolve_workspace(workspace, cwd, home_path))
        if found.workspace == home_path or home_path in found.workspace.parents:
            raise WorkspaceError(f"{path_text(str(found.workspace))} cannot be a workspace: it is inside the Muse home "
                                 f"({path_text(str(home_path))}), which is never a workspace; run memtui in a project "
                                 "folder or name one with -w")
        if _is_home(found.workspace / ".muse", home_path) or _is_home(found.project_root, found.user_root):
            raise WorkspaceError(f"{path_text(str(found.workspace))} cannot be a workspace: its project memory "
                                 f"would be the user memory ({path_text(str(found.user_root))}); run memtui in a "
                                 "project folder or name one with -w (your user memories are there in every project)")
        return found

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
        if layer == Layer.USER:
            return self.user_root
        if layer == Layer.PROJECT:
            return self.project_root
        raise ValueError(f"layer {layer!r} has no memory root")

    def default_file(self, layer: str) -> Path:
        """Where `remember` appends: notes.md for the user, context.md for the project."""
        return self.root(layer) / ("notes.md" if layer == Layer.USER else "context.md")

    def model_file(self, layer: str) -> Path:
        """Where a model's `remember` (MCP) appends: learned.md, marked `source: auto`, so what a
        model wrote waits for review like the assistant's other learned memories (SPEC §8, §12)."""
        return self.root(layer) / "learned.md"

    def container(self, layer: str) -> Path:
        """What a layer's memory root (and every file in it) must stay inside: for the project,
        the workspace (a cloned repository decides what is there); for the user, the root itself
        — it is the person's own folder, and may be a link into their dotfiles."""
        if layer == Layer.USER:
            return self.user_root
        if layer == Layer.PROJECT:
            return self.workspace
        raise ValueError(f"layer {layer!r} has no memory root")

    def root_problem(self, layer: str) -> Problem | None:
        """Why the layer's memory root must not be used (read or written), or None.

        The project root (`.muse` and `.muse/memory`) must resolve inside the workspace: a cloned repository whose `.muse/memory` is a symlink
        to `~` must not turn every `*.md` of the home into memories. A root that does not
        exist yet is fine (it is simply empty)."""
        reason = self._root_reason(layer)
        if reason is None:
            return None
        return Problem(str(self.root(layer)), f"{reason}; the {layer} memory layer is not read")

    def _root_reason(self, layer: str) -> str | None:
        return root_reason(self.root(layer), self.container(layer))

    def memory_files(self, layer: str) -> tuple[list[Path], list[Problem]]:
        """The layer's memory files and the problems found (`iter_memory_files`), or, when
        the root itself is unsafe (`root_problem`), no files and that one problem, whose
        source is the root."""
        return iter_memory_files(self.root(layer), within=self.container(layer))

    def writable_root(self, layer: str) -> Path:
        """The layer's root, for a writer; UnsafePathError (with path and reason) when the
        root leads outside its home or workspace or is not a directory."""
        reason = self._root_reason(layer)
        if reason is not None:
            raise UnsafePathError(f"{path_text(str(self.root(layer)))}: {reason}; nothing is written there")
        return self.root(layer)

    def workspace_settings_problem(self) -> Problem | None:
        """Why `<workspace>/.muse/settings.json` must not be read or written, or None: it
        (or `.muse`) is a symlink that leads outside the workspace."""
        reason = escapes(self.workspace_settings, self.workspace)
        if reason is None:
            return None
        return Problem(str(self.workspace_settings), f"{reason}; not read, and memtui will not write it")


class UnsafePathError(ValueError):
    """A path memtui refuses to read or write through (it leads outside where it must stay)."""


def root_reason(root: Path, container: Path) -> str | None:
    """Why the memory root `root` must not be used, or None: it leads outside `container`
    through a symlink (`escapes`), or it exists but is not a directory (or a part of its path
    is a file). A root that does not exist yet is fine."""
    reason = escapes(root, container)
    if reason is not None:
        return reason
    try:
        st = os.stat(root)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        broken = next((p for p in root.parents if p.exists() and not p.is_dir()), root.parent)
        try:
            where = relative_posix(broken, container)
        except ValueError:
            where = path_text(str(broken))
        return f"{where} is not a directory"
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    if stat.S_ISDIR(st.st_mode):
        return None
    return f"it is {file_kind(st.st_mode)}, not a directory"


def escapes(path: Path, container: Path) -> str | None:
    """A plain reason when `path` (below `container`, not yet resolved) leads outside
    `container` through a symlink at any of its components; None when it stays inside
    (or the components do not exist yet). `container` is taken as it resolves."""
    try:
        real_container = container.resolve()
        relative = path.relative_to(container)
    except (OSError, RuntimeError, ValueError) as exc:
        return f"cannot check where it leads: {exc}"
    current = container
    for part in relative.parts:
        current = current / part
        if not current.is_symlink():
            if not os.path.lexists(current):
                return None  # nothing further down exists yet; what will be created is inside
            continue
        try:
            target = current.resolve(strict=False)
        except (OSError, RuntimeError):
            return f"{relative_posix(current, container)} is a symlink loop"
        if not is_inside(target, real_container):
            return (f"{relative_posix(current, container)} is a symlink to {path_text(str(target))}, "
                    f"outside {path_text(str(container))}")
    return None


@dataclass(frozen=True)
class Problem:
    """A file or source that could not be read, with the reason. Never carries memory text."""

    source: str
    message: str

    def __post_init__(self) -> None:
        # A file name may hold bytes that are not UTF-8 (surrogate escapes from the OS):
        # keep the problem printable and JSON-safe by showing such bytes as `\xff`.
        object.__setattr__(self, "source", path_text(self.source))
        object.__setattr__(self, "message", path_text(self.message))

    def as_dict(self) -> dict[str, str]:
        return {"source": self.source, "message": self.message}


def is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def iter_memory_files(root: Path, within: Path | None = None) -> tuple[list[Path], list[Problem]]:
    """Every `*.md` under `root`, recursively, sorted by root-relative path (`memory_file_names`,
    as paths)."""
    names, problems = memory_file_names(root, within)
    return list(map(Path, names)), problems


def memory_file_names(root: Path, within: Path | None = None) -> tuple[list[str], list[Problem]]:
    """Every `*.md` under `root`, recursively, sorted by root-relative path, each as the
    text of its path (`str(path)`: a check of thousands of files makes no Path of each).

    Skips any path with a component starting with `.`; follows a symlink (file or
    directory) only when its target resolves inside the root, reporting the others;
    never loops on a symlink cycle. A `*.md` that is not a regular file (a FIFO, socket,
    device, or a directory named `x.md`) is reported and skipped without being opened, and
    so is a file or folder whose name is not UTF-8 (reported as `x\\xff.md`).
    With `within`, the root itself must resolve inside that folder and be a directory (see
    `root_reason`); otherwise nothing is read and that is the one problem, with the root as
    its source.
    Returns the files and the problems found.
    """
    files: list[str] = []
    problems: list[Problem] = []
    if within is not None:
        reason = root_reason(root, within)
        if reason is not None:
            return files, [Problem(str(root), f"{reason}; the memory files under it are not read")]
    if not root.is_dir():
        return files, problems
    real_root = root.resolve()
    seen_dirs: set[Path] = set()
    seen_files: set[str] = set()  # real paths
    found: list[tuple[str, str]] = []  # (root-relative posix path, path)
    linked: list[tuple[Path, str, Path, bool]] = []  # (path, relative, target, is_dir), followed after real paths

    def not_a_file(path: str, mode: int) -> None:
        problems.append(Problem(path, f"is {file_kind(mode)}, not a regular file; skipped, not opened"))

    def bad_name(path: str, name: str, is_dir: bool) -> bool:
        """A name that is not UTF-8 cannot be stored, hashed or printed as text: the file
        (or folder, with what is in it) is reported, under its escaped name, and skipped."""
        if name.isascii() or path_text(name) == name:
            return False
        what = "folder name is not UTF-8; skipped with its contents" if is_dir else "file name is not UTF-8; skipped"
        problems.append(Problem(path, f"{what} (rename it to use it)"))
        return True

    def opened(directory: Path, rel: str, real: str | None = None) -> tuple[Iterator[os.DirEntry[str]], str, str] | None:
        """A folder to walk: (its children in name order, its real path with a trailing
        separator, `rel`, the folder relative to the root with a trailing `/`, '' for the
        root); None when it was walked already or cannot be read. `real`: its real path when
        the caller knows it (a folder, not a link, in a folder whose real path is known:
        resolving each of 1,000 nested folders again would cost their depth each time)."""
        real_dir = Path(real) if real is not None else directory.resolve()
        if real_dir in seen_dirs:
            return None
        seen_dirs.add(real_dir)
        try:
            children = sorted(os.scandir(directory), key=lambda d: d.name)
        except OSError as exc:
            problems.append(Problem(str(directory), f"cannot read directory: {exc.strerror or exc}"))
            return None
        return iter(children), os.path.join(real_dir, ""), rel

    def walk(directory: Path, rel: str) -> None:
        """Depth first, in name order, with a stack of its own rather than recursion: no
        nesting of folders is too deep (SPEC §8)."""
        start = opened(directory, rel)
        stack = [start] if start is not None else []
        while stack:
            children, real_prefix, rel = stack[-1]
            below = None
            for child in children:
                below = visit(child, real_prefix, rel)
                if below is not None:
                    break
            if below is None:
                stack.pop()
            else:
                stack.append(below)

    def visit(child: os.DirEntry[str], real_prefix: str, rel: str) -> tuple[Iterator[os.DirEntry[str]], str, str] | None:
        """One child of a folder being walked: recorded, reported or skipped; a folder to
        walk next is returned."""
        name = child.name
        if name.startswith("."):
            return None
        path = child.path  # str(Path(child.path)): the folder's path is a Path's text, the name has no separator
        is_md = name.endswith(".md")
        if child.is_symlink():
            try:
                target = Path(path).resolve(strict=True)
                mode = os.stat(target).st_mode
            except (OSError, RuntimeError):
                if is_md:
                    problems.append(Problem(path, "broken symlink or symlink loop; not followed"))
                return None
            if not is_inside(target, real_root):
                if is_md or stat.S_ISDIR(mode):
                    problems.append(
                        Problem(path, "symlink target is outside the memory root; not followed")
                    )
                return None
            if is_md and not stat.S_ISREG(mode):
                not_a_file(path, mode)
            elif (is_md or stat.S_ISDIR(mode)) and bad_name(path, name, stat.S_ISDIR(mode)):
                return None
            elif stat.S_ISDIR(mode):
                linked.append((Path(path), rel + name, target, True))
            elif is_md:
                linked.append((Path(path), rel + name, target, False))
            return None
        try:
            # the directory entry's type answers without a system call for the usual
            # cases; only something else (FIFO, socket, device) is stat()ed, to name it
            if child.is_file(follow_symlinks=False):
                mode = stat.S_IFREG
            elif child.is_dir(follow_symlinks=False):
                mode = stat.S_IFDIR
            else:
                mode = child.stat(follow_symlinks=False).st_mode
        except OSError as exc:
            if is_md:
                problems.append(Problem(path, f"cannot read: {exc.strerror or exc}"))
            return None
        if is_md and not stat.S_ISREG(mode):
            not_a_file(path, mode)
        elif (is_md or stat.S_ISDIR(mode)) and bad_name(path, name, stat.S_ISDIR(mode)):
            return None
        elif stat.S_ISDIR(mode):
            return opened(Path(path), rel + name + "/", real_prefix + name)
        elif is_md:
            seen_files.add(real_prefix + name)  # not a symlink, in a resolved folder: its real path
            found.append((rel + name, path))
        return None

    walk(root, "")
    # Symlinks inside the root are followed after the real tree, so a file reached both
    # ways is listed once, under its real path.
    while linked:
        path, rel, target, is_dir = linked.pop(0)
        if is_dir:
            walk(path, rel + "/")
        elif str(target) not in seen_files:
            seen_files.add(str(target))
            found.append((rel, str(path)))
    # sorted by root-relative path (the names are UTF-8: the others were skipped above)
    found.sort(key=itemgetter(0))
    files += [path for _, path in found]
    return files, problems


def relative_posix(path: Path, root: Path) -> str:
    """`path` relative to `root` with `/` separators, as printable, UTF-8-safe text (bytes
    of a file name that are not UTF-8 are shown as `\xff`)."""
    return path_text(path.relative_to(root).as_posix())
