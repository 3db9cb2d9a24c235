"""Layers built aside in a child process (`prepare`'s first run: the Markdown layers built
and saved there while the parent builds the conversation layer): forked from a process
without other threads, else spawned as a new interpreter when worth its imports."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..paths import Paths
from ..settings import Settings
from .build_layers import build_layers

log = logging.getLogger("memtui.prepared")

# A spawned child (`prepare(spawn=True)`) costs a new interpreter and its imports (≈0.3 s of CPU): worth it
# only beside a conversation layer that takes longer than that, i.e. a muse.db of ≈10,000 rows or more.
SPAWN_DB_BYTES = 8_000_000


def start_aside(paths: Paths, settings: Settings, layers: list[str], spawn: bool = False) -> Any:
    """A child process that builds and saves `layers` (a pid when forked, a Popen when
    spawned), or None where that is not safe (a process with other threads is never forked)
    or not possible."""
    import threading

    if not hasattr(os, "fork") or threading.active_count() != 1:
        return spawn_aside(paths, layers) if spawn and _db_bytes(paths) >= SPAWN_DB_BYTES else None
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid:
        log.info("prepared index: the %s layers built by a child process (%d)", " and ".join(layers), pid)
        return pid
    code = 1
    try:
        build_layers(paths, settings, True, layers)
        code = 0
    except BaseException:  # noqa: BLE001 - the parent builds what was not saved
        pass
    finally:
        os._exit(code)


def _db_bytes(paths: Paths) -> int:
    try:
        return paths.db_path.stat().st_size
    except OSError:
        return 0


def spawn_aside(paths: Paths, layers: list[str]) -> Any:
    from .. import process_gate

    code = "import sys; from memtui.core.store.aside import build_aside; build_aside(sys.argv[1:])"
    try:  # isolated, in the Muse home: nothing the workspace ships is imported (SPEC §8)
        child = process_gate.start_python(["-c", code, str(paths.home), str(paths.workspace), *layers],
                                          home=paths.home)
    except OSError as exc:
        log.info("prepared index: no child process for the %s layers: %s", " and ".join(layers), exc)
        return None
    log.info("prepared index: the %s layers built by a child process (%d)", " and ".join(layers), child.pid)
    return child


def build_aside(argv: Sequence[str]) -> None:
    """A spawned child's work (`spawn_aside`): HOME WORKSPACE LAYER... built and saved with
    the settings read here (a layer saved with other settings than the parent's is not used)."""
    from ..settings import load_settings

    paths = Paths(Path(argv[0]), Path(argv[1]))
    build_layers(paths, load_settings(paths), True, list(argv[2:]))


def wait_aside(child: Any) -> None:
    if not isinstance(child, int):
        child.wait()
        return
    try:
        os.waitpid(child, 0)
    except ChildProcessError:
        pass

