"""The `memtui` console script. `memtui [--home DIR] [-w DIR] hook claude-code|codex|gemini`,
which an assistant runs before every prompt, goes straight to the hook (`memtui.cli.hook.run_argv`,
standard library only), before the command-line framework and the rest of the CLI are
imported: they would double its start-up, and a usage error of click's would exit 2, which
blocks the prompt in every assistant. Every other command line goes to `memtui.cli.main`,
which parses it in full. This is the one route to the hook."""

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


if __name__ == "__main__":
    main()
