"""Run `memtui` as a person (or a script) does: a separate process with its own stdin, stdout,
stderr, exit code, locks and file descriptors.

Two ways, same result:

- `memtui(...)` (most tests): a *forked* entry point. The test process forks; the child points
  fds 0/1/2 at pipes, rebuilds `sys.std*` on them, calls the console script's `main` and
  leaves with its exit code. It is a real process (its own locks, its own SQLite connections,
  a real exit status, a traceback on stderr if it crashes) that skips only interpreter
  start-up and imports: ~20 ms instead of ~300 ms, which is most of the CLI tests' time.
- `memtui(..., real=True)`, and every call when MEMTUI_TEST_SUBPROCESS=1: the installed
  console script in a fresh interpreter. A representative set of tests always goes this way
  (tests/cli/test_cli.py, test_hook.py, the pseudo-terminal tests, the locked-database test).

A fork is only safe when the test process has no other thread and holds no SQLite database
open (a forked child must not inherit SQLite's per-process lock bookkeeping); otherwise the
call falls back to the real console script on its own.
"""

from __future__ import annotations

import gc
import io
import json
import logging
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

from memtui.core.paths import Paths

TIMEOUT = 60  # seconds: a hang (a FIFO opened, a lock never given up) fails the test, not the run


def memtui(paths: Paths, *args: str, input: str | None = None, timeout: float = TIMEOUT,
           env: dict[str, str] | None = None, real: bool = False) -> subprocess.CompletedProcess[str]:
    argv = ["--home", str(paths.home), "-w", str(paths.workspace), *args]
    return run_cli(argv, input=input, timeout=timeout, env=env, real=real)


def run_cli(argv: list[str], input: str | None = None, timeout: float = TIMEOUT,
            env: dict[str, str] | None = None, real: bool = False) -> subprocess.CompletedProcess[str]:
    """`memtui ARGV...` with `input` on stdin (else /dev/null)."""
    if real or os.environ.get("MEMTUI_TEST_SUBPROCESS") == "1" or not _fork_is_safe():
        return _subprocess(argv, input, timeout, env)
    return _forked(argv, input, timeout, env)


def console_script() -> str:
    exe = shutil.which("memtui", path=str(Path(sys.executable).parent))
    assert exe, "the memtui console script is not installed next to this Python"
    return exe


def _subprocess(argv: list[str], input: str | None, timeout: float,
                env: dict[str, str] | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *argv],
        check=False, capture_output=True, text=True, timeout=timeout, input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
    )


def _open_database() -> bool:
    """An SQLite database is open in this process (its lock state must not be copied into a child)."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return True
    for fd in fds:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.endswith((".db", ".db-wal", ".db-shm", ".db-journal", ".sqlite")):
            return True
    return False


def _fork_is_safe() -> bool:
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return False
    if _open_database():
        # Most often a store an earlier test left unclosed: garbage whose connection closes when
        # it is collected. Without this every later call of the worker paid a fresh interpreter.
        gc.collect()
        return not _open_database()
    return True


# Imported once in the test process so that no forked child pays for them again (the CLI
# imports them lazily: sqlite_utils alone, which pulls in numpy when it is installed, is
# ~0.3 s of every command's start-up).
_WARM = ("memtui.cli.entry", "memtui.cli.main", "memtui.core.doctor", "memtui.core.transfer", "memtui.core.backup", "memtui.core.history", "memtui.core.store.prepared",
         "sqlite_utils", "yaml", "markdown_it", "rapidfuzz")


def _warm() -> None:
    import importlib

    for name in _WARM:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def _forked(argv: list[str], input: str | None, timeout: float,
            env: dict[str, str] | None) -> subprocess.CompletedProcess[str]:
    _warm()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe() if input is not None else (os.open(os.devnull, os.O_RDONLY), -1)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
                if fd > 2:
                    os.close(fd)
            code = _child_main(argv, env)
        finally:
            os._exit(code)
    os.close(out_w)
    os.close(err_w)
    os.close(in_r)
    data = (input or "").encode("utf-8")
    if in_w != -1 and not data:
        os.close(in_w)
        in_w = -1
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    open_fds = [out_r, err_r]
    deadline = time.monotonic() + timeout
    try:
        while open_fds or in_w != -1:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(["memtui", *argv], timeout)
            writers = [in_w] if in_w != -1 else []
            readable, writable, _ = select.select(open_fds, writers, [], min(left, 1.0))
            if writable:
                try:
                    sent = os.write(in_w, data[:65536])
                except BrokenPipeError:
                    sent = len(data)
                data = data[sent:]
                if not data:
                    os.close(in_w)
                    in_w = -1
            for fd in readable:
                chunk = os.read(fd, 65536)
                if chunk:
                    chunks[fd].append(chunk)
                else:
                    open_fds.remove(fd)
                    os.close(fd)
    finally:
        for fd in open_fds + ([in_w] if in_w != -1 else []):
            os.close(fd)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return subprocess.CompletedProcess(
        ["memtui", *argv], code,
        b"".join(chunks[out_r]).decode("utf-8", "replace"), b"".join(chunks[err_r]).decode("utf-8", "replace"))


def _child_main(argv: list[str], env: dict[str, str] | None) -> int:
    """In the forked child: a fresh process's view (environment, standard streams, logging,
    signals), then the console script's entry point."""
    os.environ.update({"PYTHONIOENCODING": "utf-8", **(env or {})})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python sets it at start-up
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    root = logging.getLogger()
    for handler in list(root.handlers):  # pytest's capture handlers belong to the parent
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)
    from memtui.cli.entry import main  # the console script's entry point (pyproject's [project.scripts])

    code = 0
    try:
        main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:  # as the interpreter does: the traceback on stderr, exit 1
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return code


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    assert_no_traceback(result)
    return result


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr


def entries(paths: Paths, *args: str) -> list[dict]:
    return json.loads(ok(memtui(paths, "list", "--json", *args)).stdout)["entries"]


def entry_id(paths: Paths, text: str) -> str:
    found = [e["id"] for e in entries(paths) if e["text"] == text]
    assert len(found) == 1, (text, entries(paths))
    return found[0]


def undo_log(paths: Paths) -> list[dict]:
    return json.loads(ok(memtui(paths, "undo", "--list", "--json")).stdout)["changes"]
