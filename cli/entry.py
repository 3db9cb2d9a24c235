"""The `memtui` console script. `memtui [--home DIR] [-w DIR] hook claude-code|codex|gemini`,
which an assistant runs before every prompt, goes straight to the hook (`memtui.cli.hook.run_argv`,
standard library only), before the command-line framework and the rest of the CLI are
imported: they would double its start-up, and a usage error of click's would exit 2, which
blocks the prompt in every assistant. Every other command line goes to `memtui.cli.main`,
which parses it in full. This is the one route to the hook.

`console` is what the installed script runs: for a hook, and for `preview`, it also keeps
the garbage collector off (the process lives a fraction of a second and makes no cycles worth
collecting: ≈25 ms of a `preview --json` of 40,000 candidates) and, once its streams and
logging are flushed, ends the process without the interpreter's teardown (freeing every
module and object: ≈10 ms of every prompt). `main` runs the same routes and
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
    """The console script (pyproject's [project.scripts]): `main`, and for a hook or a
    preview, no garbage collection and no teardown."""
    import gc

    gc.disable()
    from memtui.cli.hook import hook_argv

    args = sys.argv[1:]
    if hook_argv(args) is not None:
        from memtui.cli.hook import run_argv

        code = run_argv(args)
        _leave(0 if code is None else code)
    if _command(args) != "preview":  # the TUI and the MCP server live long: they collect
        gc.enable()
        main()
        return
    try:
        main()
    except SystemExit as exc:  # as the interpreter ends on it
        if exc.code is None or isinstance(exc.code, int):
            _leave(exc.code or 0)
        print(exc.code, file=sys.stderr)
        _leave(1)


def _command(args: Sequence[str]) -> str | None:
    """The command word of memtui's arguments: the first after the global options
    (`--home DIR`, `-w DIR`, `--workspace DIR`, or `--home=DIR`)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("-"):
            return arg
        i += 2 if arg in ("--home", "-w", "--workspace") else 1
    return None


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
