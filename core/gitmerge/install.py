"""`memtui git install` / `uninstall`: the attribute line in the workspace's `.gitattributes`
and the driver in the repository-local git config."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import gate, markdown, process_gate
from ..fileio import read_if_exists
from ..markdown import strip_eol
from .parse import _file_eol

DRIVER = "memtui"
ATTRIBUTE_PATTERN = ".muse/memory/**/*.md"
ATTRIBUTE_LINE = f"{ATTRIBUTE_PATTERN} merge={DRIVER}"
DRIVER_NAME = "memtui: merge Muse memory files entry by entry"


class GitSetupError(RuntimeError):
    """`memtui git install` cannot do its job; the message says why."""


@dataclass(frozen=True)
class SetupReport:
    lines: list[str]


def _git(repo: Path, *args: str) -> process_gate.CompletedProcess[str]:
    try:  # the process gate: git in the repository it is asked about
        return process_gate.run_tool(["git", "-C", str(repo), *args], cwd=repo, text=True, timeout=60)
    except (OSError, process_gate.SubprocessError) as exc:
        raise GitSetupError(f"git could not run ({exc})") from None


def _check_repository(workspace: Path) -> None:
    run = _git(workspace, "rev-parse", "--is-inside-work-tree")
    if run.returncode != 0 or run.stdout.strip() != "true":
        raise GitSetupError(f"{workspace} is not inside a git work tree (run `git init` first, or pass -w)")


def _is_our_line(line: str) -> bool:
    return line.split() == ATTRIBUTE_LINE.split()


def _read_attributes(path: Path) -> tuple[bytes | None, list[str]]:
    old = read_if_exists(path)
    if old is None:
        return None, []
    try:
        return old, markdown.split_lines(old.decode("utf-8"))
    except UnicodeDecodeError:
        raise GitSetupError(f"{path}: not UTF-8; add the line `{ATTRIBUTE_LINE}` yourself") from None


def install(workspace: Path, command: str) -> SetupReport:
    """Add the attribute line to `<workspace>/.gitattributes` (kept when it is there, every other
    line untouched) and the driver to the repository-local git config."""
    _check_repository(workspace)
    lines: list[str] = []
    path = workspace / ".gitattributes"
    old, current = _read_attributes(path)
    if any(_is_our_line(strip_eol(line)) for line in current):
        lines.append(f"{path}: already has `{ATTRIBUTE_LINE}`")
    else:
        eol = _file_eol(current)
        if current and current[-1] == strip_eol(current[-1]):
            current[-1] += eol
        gate.write(path, "".join([*current, ATTRIBUTE_LINE + eol]).encode("utf-8"), root=workspace, kind=gate.Kind.TEXT,
                   expected=old)
        lines.append(f"{path}: added `{ATTRIBUTE_LINE}` (commit it, so your team's clones use it too)")
    driver = f"{command} merge-driver %O %A %B %P"
    for key, value in ((f"merge.{DRIVER}.name", DRIVER_NAME), (f"merge.{DRIVER}.driver", driver)):
        run = _git(workspace, "config", "--local", key, value)
        if run.returncode != 0:
            raise GitSetupError(f"git config {key} failed: {run.stderr.strip()}")
    lines.append(f"git config (this clone only): merge.{DRIVER}.driver = {driver}")
    return SetupReport(lines)


def uninstall(workspace: Path) -> SetupReport:
    """Remove the attribute line (and `.gitattributes` when nothing else is left in it) and the
    repository-local driver config."""
    _check_repository(workspace)
    lines: list[str] = []
    path = workspace / ".gitattributes"
    old, current = _read_attributes(path)
    kept = [line for line in current if not _is_our_line(strip_eol(line))]
    if old is None or kept == current:
        lines.append(f"{path}: has no `{ATTRIBUTE_LINE}` line")
    elif not "".join(kept).strip():
        gate.remove(path, root=workspace)
        lines.append(f"{path}: removed (it held only `{ATTRIBUTE_LINE}`)")
    else:
        gate.write(path, "".join(kept).encode("utf-8"), root=workspace, kind=gate.Kind.TEXT, expected=old)
        lines.append(f"{path}: removed `{ATTRIBUTE_LINE}`")
    present = _git(workspace, "config", "--local", "--get-regexp", rf"^merge\.{DRIVER}\.").returncode == 0
    if present:
        run = _git(workspace, "config", "--local", "--remove-section", f"merge.{DRIVER}")
        if run.returncode != 0:
            raise GitSetupError(f"git config --remove-section merge.{DRIVER} failed: {run.stderr.strip()}")
        lines.append(f"git config (this clone only): merge.{DRIVER} removed")
    else:
        lines.append(f"git config (this clone only): no merge.{DRIVER} driver set")
    return SetupReport(lines)
