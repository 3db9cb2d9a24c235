"""The doctor for the TUI's insights, in a process of its own at low priority: its search
(near-duplicates over every entry) is long, pure-Python work that would otherwise hold the
interpreter the panes and the preview need between keystrokes. The child reads the memories
itself (read-only, as `memtui doctor` does) and sends the findings back. No Textual here:
the child imports this module."""

from __future__ import annotations

import os
import pickle
import sys
import threading
from typing import Any

from memtui.core import process_gate
from memtui.core.doctor import findings_read
from memtui.core.finding_set import FoundSet
from memtui.core.paths import Paths

NICENESS = 10  # the child yields the machine's cores to the interactive process


class DoctorFailed(RuntimeError):
    """The doctor's process ended without findings (its error, or how it ended)."""


def main(argv: list[str]) -> int:
    """The child: `python -m memtui.tui.insights HOME WORKSPACE` writes the findings and what
    they were found in (`MemoryStore.read_state`), pickled, to its standard output (for its
    parent only)."""
    try:
        os.nice(NICENESS)
    except OSError:
        pass
    try:
        found, read = findings_read(Paths.resolve(home=argv[0], workspace=argv[1]))
        out: tuple[str, object] = ("ok", (FoundSet(found), read))  # packed: a few strings, not an object each
    except Exception as exc:
        out = ("error", f"{type(exc).__name__}: {exc}")
    sys.stdout.buffer.write(pickle.dumps(out))
    return 0


class DoctorProcess:
    """One doctor run at a time in a child process; `stop()` ends it (the app quitting)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: process_gate.Popen[bytes] | None = None
        self._stopped = False

    def run(self, paths: Paths) -> tuple[FoundSet, tuple[Any, ...] | None]:
        """The findings and what they were found in, from a child process (blocks: call it
        from a worker thread)."""
        with self._lock:
            if self._stopped:
                raise DoctorFailed("the app is closing")
            # the terminal is the TUI's: nothing of the child's may reach it; isolated and in the
            # Muse home, so nothing the workspace ships is imported (SPEC §8)
            process = self._process = process_gate.start_python(
                ["-m", "memtui.tui.insights", str(paths.home), str(paths.workspace)], home=paths.home,
                stdout=process_gate.PIPE)
        try:
            data, _ = process.communicate()  # (packed: 14 MB for 418,000 findings at ten times the store)
        finally:
            with self._lock:
                self._process = None
        try:
            status, value = pickle.loads(data)  # our own child's output, never anyone else's
        except Exception:
            raise DoctorFailed(f"the doctor's process ended without findings (exit status {process.returncode})") from None
        if status != "ok":
            raise DoctorFailed(value)
        found: tuple[FoundSet, tuple[Any, ...] | None] = value
        return found

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            process = self._process
        if process is not None and process.poll() is None:
            process.terminate()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
