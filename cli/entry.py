"""The `memtui` console script. `memtui [--home DIR] [-w DIR] hook claude-code|codex|gemini`,
which an assistant runs before every prompt, goes straight to the hook (`memtui.cli.hook.run_argv`,
standard library only), before the command-line framework and the rest of the CLI are
imported: they would double its start-up, and a usage error of click's would exit 2, which
blocks the prompt in every assistant. Every other command line goes to `memtui.cli.main`,
which parses it in full. This is the one route to the hook.

`console` is what the installed script runs: for a hook it also keeps the garbage collector
off (the process lives a fraction of a second and makes no cycles worth collecting) and, once
its streams and logging are flushed, ends the process without the interpreter's teardown
(freeing every module and object: ≈10 ms of every prompt). `main` runs the same routes and
returns (or raises SystemExit) like any function."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    from memtui.cli.hook import run_argv

    args = list(sys.argv[1:] if argv is None else argv)
    code = run_argv(args)
    if code is not None:
        sys.exit(code)
    from memtui.cli.main import main as cli

    cli.main(args, prog_name="memtui")


def console() -> None:
    """The console script (pyproject's [project.scripts]): `main`, and for a hook, no
    garbage collection and no teardown."""
    import gc

    gc.disable()
    from memtui.cli.hook import hook_argv

    if hook_argv(sys.argv[1:]) is None:
        gc.enable()
        main()
        return
    from memtui.cli.hook import run_argv

    code = run_argv(sys.argv[1:])
    _leave(0 if code is None else code)


def _leave(code: int) -> None:
    """End the process now: its streams and log handlers flushed, then no teardown."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    if "logging" in sys.modules:
        import logging

        logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    main()
