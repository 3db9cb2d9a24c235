"""`memtui merge-driver BASE OURS THEIRS PATH`: the merge by entry, else git's line merge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import gate, markdown, process_gate
from ..bounded_reader import read_regular
from ..fileio import MAX_REWRITTEN_BYTES
from ..markdown import MemoryFileError, parse_text
from .parse import CannotMergeByEntry
from .write import MARKER_SIZE, merge_entries


@dataclass(frozen=True)
class DriverResult:
    conflicts: int  # conflict blocks left in the file (0: merged cleanly)
    by_entry: bool  # False: git merged the lines (see `reason`)
    reason: str = ""  # why the entry-wise merge was not used
    error: str = ""  # set when nothing could be merged (OURS left as it was)


def merge_with_git(base: Path, ours: Path, theirs: Path) -> tuple[int, bytes | None, str]:
    """git's own three-way line merge of the three files: (conflicts, merged bytes, error)."""
    try:  # the process gate: git in the folder of the files git handed over (SPEC §8)
        run = process_gate.run_tool(
            ["git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "--",
             *(str(p.absolute()) for p in (ours, base, theirs))],
            cwd=ours.absolute().parent, timeout=120)
    except (OSError, process_gate.SubprocessError) as exc:
        return 0, None, f"git merge-file could not run ({exc})"
    if not 0 <= run.returncode <= 127:
        return 0, None, run.stderr.decode("utf-8", "replace").strip() or f"git merge-file failed (exit {run.returncode})"
    return run.returncode, run.stdout, ""


def run_driver(base: Path, ours: Path, theirs: Path) -> DriverResult:
    """What `memtui merge-driver` does: merge into `ours` (git's %A) by entry, else by line."""
    import os
    import stat

    try:
        kind = os.lstat(ours).st_mode
    except OSError as exc:
        return DriverResult(1, False, error=f"cannot read {ours}: {exc.strerror}")
    if not stat.S_ISREG(kind):
        what = "a symlink" if stat.S_ISLNK(kind) else "not a regular file"
        return DriverResult(1, False, error=f"{ours} (OURS) is {what}; the result is never written through it")
    try:
        data = [read_regular(p, MAX_REWRITTEN_BYTES) for p in (base, ours, theirs)]  # the bounded reader
    except OSError as exc:
        return DriverResult(1, False, error=f"cannot read {exc.filename or 'a version'}: {exc.strerror or exc}")
    try:
        result = merge_entries(*data)
    except CannotMergeByEntry as exc:
        reason = str(exc)
    except Exception as exc:  # noqa: BLE001 - a driver that fails must leave the merge to git, never half done
        reason = f"the entry-wise merge failed ({type(exc).__name__}: {exc})"
    else:
        if result.data != data[1]:
            failed = _write_ours(ours, result.data)
            if failed:
                return DriverResult(1, True, error=failed)
        return DriverResult(result.conflicts, True)
    conflicts, merged, error = merge_with_git(base, ours, theirs)
    if merged is None:
        return DriverResult(1, False, reason, error)
    if conflicts == 0 and not _lines_merged_whole(merged, data):
        # git's clean line merge joined two entries into one, or moved one under another heading:
        # the two sides as one conflict instead, for a person to settle
        merged, conflicts = whole_file_conflict(data[1], data[2]), 1
        reason += "; git's line merge would have joined or moved entries, so the file is marked as one conflict"
    failed = _write_ours(ours, merged)
    return DriverResult(conflicts, False, reason, failed)


def _lines_merged_whole(merged: bytes, versions: Sequence[bytes]) -> bool:
    """Does git's clean merge read back as entries some version has, each under a heading of
    the same name as there (no two entries joined, none moved to another section)?"""
    try:
        got = parse_text(markdown.decode(merged)).entries
    except (MemoryFileError, UnicodeDecodeError):
        return True  # a file memtui skips anyway: git's merge as it is
    known: set[tuple[str, str]] = set()
    for data in versions:
        try:
            known.update((e.text, e.section) for e in parse_text(markdown.decode(data)).entries)
        except (MemoryFileError, UnicodeDecodeError):
            return True
    return all((e.text, e.section) in known for e in got)


def whole_file_conflict(ours: bytes, theirs: bytes) -> bytes:
    """OURS and THEIRS whole inside one pair of standard conflict markers."""
    eol = b"\r\n" if b"\r\n" in ours else b"\n"

    def ended(data: bytes) -> bytes:
        return data if not data or data.endswith((b"\n", b"\r")) else data + eol

    return (b"<" * MARKER_SIZE + b" ours" + eol + ended(ours) + b"=" * MARKER_SIZE + eol + ended(theirs)
            + b">" * MARKER_SIZE + b" theirs" + eol)


def _write_ours(ours: Path, data: bytes) -> str:
    """The result goes where git asked for it (%A, the file git made for `ours`), through the write
    gate like every write: never through a link put in its place. Returns why it could not, or ""."""
    ours = Path(ours).absolute()
    try:
        gate.write(ours, data, root=ours.parent, kind=gate.Kind.DATA)
    except gate.Refused as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot write {ours}: {exc.strerror or exc}"
    return ""
