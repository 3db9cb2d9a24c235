"""The prompt hooks (SPEC §11): `memtui hook claude-code|codex|gemini`, or
`python -m memtui.cli.hook [TARGET]` (claude-code when none is given).

The assistant runs it before every prompt with one JSON object on stdin. It prints exactly
what that assistant takes (`memtui.core.assistants` says what for each), the injection
`memtui preview --target TARGET` shows for that prompt in the workspace of `cwd`, or the
target's "nothing"; and it always exits 0: any failure is one line on stderr and the
target's "nothing" on stdout, never a blocked prompt (no assistant's blocking exit code).

Only the standard library is imported up front; the core is imported when needed, and
click and Textual never are.
"""

from __future__ import annotations

import os
import sys
from typing import BinaryIO, TextIO

from memtui.core.assistants import Target
from memtui.core.assistants.protocol import HookInputError


def printable(text: str) -> str:
    """One line, control characters shown as escapes, so no path can forge output."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def run(target: Target, stdin: BinaryIO, stdout: BinaryIO, stderr: TextIO, home: str | None = None) -> int:
    """Run `target`'s hook over these streams; always 0 (a hook must never block the prompt)."""
    from memtui.core.assistants.delivery import answer, protocol

    nothing = protocol(target).nothing
    try:
        if stdin.isatty():
            raise HookInputError(f"expects {protocol(target).name}'s {protocol(target).event} hook JSON on stdin, not a terminal")
        out = answer(target, stdin.read(), home=home)
    except Exception as exc:  # any failure: the target's nothing on stdout, the reason on stderr
        reason = str(exc) or type(exc).__name__
        try:
            stderr.write(f"memtui hook: {printable(reason)}\n")
            stderr.flush()
        except (OSError, ValueError):
            pass
        out = nothing
    if out:
        try:
            stdout.write(out)
            stdout.flush()
        except (OSError, ValueError):
            pass
    return 0


def claude_code(stdin: BinaryIO, stdout: BinaryIO, stderr: TextIO, home: str | None = None) -> int:
    return run(Target.CLAUDE_CODE, stdin, stdout, stderr, home=home)


def main(target: Target | str = Target.CLAUDE_CODE, home: str | None = None) -> int:
    """The entry point: the process's own streams. memtui's log lines are kept off stderr
    (unless MEMTUI_LOG asks for them), so a failure is the one line `run` writes."""
    import logging

    if not os.environ.get("MEMTUI_LOG"):
        quiet = logging.getLogger("memtui")
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
    code = run(Target(target), sys.stdin.buffer, sys.stdout.buffer, sys.stderr, home=home)
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # the assistant stopped reading: nothing more to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return code


if __name__ == "__main__":
    try:
        chosen = Target(sys.argv[1]) if len(sys.argv) > 1 else Target.CLAUDE_CODE
    except ValueError:
        sys.stderr.write(f"memtui hook: unknown target {printable(sys.argv[1])!r}\n")
        sys.exit(0)
    sys.exit(main(chosen))
