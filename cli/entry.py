"""The `memtui` console script. `memtui [--home DIR] [-w DIR] hook claude-code`, which
Claude Code runs before every prompt, goes straight to the hook, before the command-line
framework and the rest of the CLI are imported (they would double its start-up); every
other command line goes to `memtui.cli.main`, which parses it in full."""

from __future__ import annotations

import os
import sys

_HOOK = ["hook", "claude-code"]
_OPTIONS = {"--home": "home", "-w": "workspace", "--workspace": "workspace"}


def hook_options(argv: list[str]) -> dict[str, str] | None:
    """The global options of a plain hook command line, or None for anything else (help,
    other words, a malformed or file-valued option: the full CLI answers those)."""
    found: dict[str, str] = {}
    i = 0
    while i < len(argv) and argv[i:] != _HOOK:
        name, eq, value = argv[i].partition("=")
        if name not in _OPTIONS or _OPTIONS[name] in found or (eq and not name.startswith("--")):
            return None
        if not eq:
            if i + 1 >= len(argv):
                return None
            value = argv[i + 1]
            i += 1
        if not value or os.path.isfile(value):  # what the full CLI refuses with a usage error
            return None
        found[_OPTIONS[name]] = value
        i += 1
    return found if argv[i:] == _HOOK else None


def main() -> None:
    options = hook_options(sys.argv[1:])
    if options is None:
        from memtui.cli.main import main as cli

        cli()
        return
    import logging

    from memtui.cli.hook import main as hook
    from memtui.core.paths import resolve_home

    logging.basicConfig(level=os.environ.get("MEMTUI_LOG", "WARNING").upper(), stream=sys.stderr,
                        format="%(name)s %(levelname)s %(message)s")
    sys.exit(hook(home=str(resolve_home(options.get("home")))))


if __name__ == "__main__":
    main()
