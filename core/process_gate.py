"""The one gate for processes (SPEC §8): every child process memtui starts passes here.

A workspace is somebody else's folder (a cloned repository) and may ship `json.py`,
`yaml.py`, `sqlite3/` or a `memtui/` of its own. Python puts the current folder (`-m`,
`-c`) first on `sys.path`, and honours `PYTHONPATH`, `PYTHONSTARTUP` and the user site, so a
child interpreter started carelessly in a workspace imports the repository's code. Here:

- a Python child is `sys.executable -I ...`: isolated mode, so neither the current folder
  nor the user site is on `sys.path` and no `PYTHON*` variable is read (they are also left
  out of its environment, so nothing it starts in turn sees them);
- its working folder is the Muse home (never the workspace);
- any other program (git, the user's $EDITOR) is started with a working folder the caller
  names explicitly: there is no default, so a child can never inherit the workspace by
  accident.

No other module calls `subprocess`, `multiprocessing`, `os.exec*` or `os.spawn*`
(tests/core/test_process_gate.py lists every such call in memtui's source).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

DEVNULL = subprocess.DEVNULL
PIPE = subprocess.PIPE
SubprocessError = subprocess.SubprocessError
CompletedProcess = subprocess.CompletedProcess
Popen = subprocess.Popen

_Stream = int | IO[Any] | None


def python_argv(*args: str) -> list[str]:
    """The command line of an isolated Python child: this interpreter, `-I`, then `args`
    (e.g. `-m`, a module, its arguments)."""
    return [sys.executable, "-I", *args]


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any `PYTHON*` variable, plus `extra`."""
    env = {key: value for key, value in os.environ.items() if not key.upper().startswith("PYTHON")}
    env.update(extra or {})
    return env


def home_folder(home: Path) -> Path:
    """The working folder of a Python child: the Muse home when it is a folder, else the
    file system's root (never the current folder, which is often the workspace)."""
    try:
        if home.is_dir():
            return home.absolute()
    except OSError:
        pass
    return Path(os.path.abspath(os.sep))


def start_python(args: Sequence[str], *, home: Path, stdout: _Stream = DEVNULL,
                 stderr: _Stream = DEVNULL) -> subprocess.Popen[bytes]:
    """Start an isolated Python child (`python_argv(*args)`) in the Muse home, its standard
    input closed. OSError when it cannot start."""
    return subprocess.Popen(python_argv(*args), cwd=home_folder(home), env=child_env(), stdin=DEVNULL,
                            stdout=stdout, stderr=stderr)


def run_tool(argv: Sequence[str], *, cwd: Path, timeout: float | None = None, capture: bool = True,
             text: bool = False, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[Any]:
    """Run another program (git, an editor) to its end in the folder `cwd`, which the caller
    chooses (there is no default: never the current folder by accident). With `capture`, its
    output is collected (stdin closed); without, it has the terminal (an editor). `env` adds
    to the environment. OSError when it cannot start; subprocess.TimeoutExpired after
    `timeout` seconds."""
    environment = dict(os.environ) if env is None else {**os.environ, **env}
    if capture:
        return subprocess.run(list(argv), cwd=cwd, env=environment, stdin=DEVNULL, capture_output=True, text=text,
                              check=False, timeout=timeout)
    return subprocess.run(list(argv), cwd=cwd, env=environment, check=False, timeout=timeout)
