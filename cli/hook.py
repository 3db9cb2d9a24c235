"""The prompt hooks (SPEC §11): `memtui hook claude-code|codex|gemini`, or
`python -m memtui.cli.hook [TARGET]` (claude-code when none is given).

The assistant runs it before every prompt with one JSON object on stdin. It prints exactly
what that assistant takes (`memtui.core.assistants` says what for each), the injection
`memtui preview --target TARGET` shows for that prompt in the workspace of `cwd`, or the
target's "nothing"; and it always exits 0: any failure is one line on stderr and the
target's "nothing" on stdout, never a blocked prompt (no assistant's blocking exit code).

Input is bounded: at most `LIMIT` (1 MiB) of stdin is kept. A longer input is read to its end
without being kept (so Claude Code's write never fails) and the prompt is cut there for matching,
which is said on stderr. Bad options, a closed stdin or stdout, a vanished current directory,
a `--home` that is a file: each is a reason on stderr, the target's "nothing" on stdout and
exit 0 (exit 2 would block the prompt in every one of the assistants). `memtui ... hook TARGET`
is dispatched here before click parses anything (`run_argv`), so not even click's usage errors
can exit 2.

Only the standard library is imported up front (with `memtui.core.assistants`' names and
its input parser, themselves standard library only); the rest of the core is imported when
needed, and click and Textual never are.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import BinaryIO, TextIO

from memtui.core.assistants import TARGETS, Target
from memtui.core.assistants.protocol import HookInputError

LIMIT = 1 << 20  # bytes of stdin kept (SPEC §8)
_CHUNK = 1 << 16
_TARGET_NAMES = frozenset(str(t) for t in TARGETS)
# memtui's global options (cli/main.py) that may come before `hook`; each takes a value
_GLOBAL_OPTIONS = frozenset({"--home", "-w", "--workspace"})
_HELP = {"-h", "--help", "--version"}


def read_input(stdin: BinaryIO) -> tuple[bytes, bool]:
    """At most `LIMIT` bytes of `stdin`, and whether there was more (read to the end, not kept)."""
    kept = stdin.read(LIMIT)
    if kept is None or len(kept) < LIMIT:
        return kept or b"", False
    more = False
    sink = bytearray(_CHUNK)
    readinto = getattr(stdin, "readinto", None)
    while True:
        n = readinto(sink) if readinto is not None else len(stdin.read(_CHUNK) or b"")
        if not n:
            return kept, more
        more = True


def _say(stderr: TextIO | None, reason: str) -> None:
    """`reason` as one line on stderr, control characters shown as escapes (no path in it can forge output)."""
    from memtui.core.display import escape_name

    try:
        if stderr is not None:
            stderr.write(f"memtui hook: {escape_name(reason)}\n")
            stderr.flush()
    except (OSError, ValueError):
        pass


def run(target: Target, stdin: BinaryIO | None, stdout: BinaryIO, stderr: TextIO | None, home: str | None = None,
        problem: str | None = None) -> int:
    """Run `target`'s hook over these streams; always 0 (a hook must never block the prompt).
    `problem` (bad options): the input is still read, then the problem is the failure."""
    from memtui.core.assistants.delivery import answer, protocol

    proto = protocol(target)
    try:
        if stdin is None:
            raise HookInputError(f"stdin is closed; expects {proto.name}'s {proto.event} hook JSON on it")
        if stdin.isatty():
            raise HookInputError(f"expects {proto.name}'s {proto.event} hook JSON on stdin, not a terminal")
        raw, cut = read_input(stdin)
        if problem:
            raise HookInputError(problem)
        if cut:
            _say(stderr, f"hook input is longer than {LIMIT // (1 << 20)} MiB; the prompt was cut there for matching")
        out = answer(target, raw, home=home, cut=cut, warn=lambda message: _say(stderr, message))
    except Exception as exc:  # any failure: the target's nothing on stdout, the reason on stderr
        _say(stderr, str(exc) or type(exc).__name__)
        out = proto.nothing
    if out:
        try:
            stdout.write(out)
            stdout.flush()
        except (OSError, ValueError):
            pass
    return 0


def claude_code(stdin: BinaryIO | None, stdout: BinaryIO, stderr: TextIO | None, home: str | None = None,
                problem: str | None = None) -> int:
    return run(Target.CLAUDE_CODE, stdin, stdout, stderr, home=home, problem=problem)


def main(target: Target | str = Target.CLAUDE_CODE, home: str | None = None, problem: str | None = None) -> int:
    """The entry point: the process's own streams. memtui's log lines are kept off stderr
    (unless MEMTUI_LOG asks for them), so a failure is the one line `run` writes."""
    import logging

    if not os.environ.get("MEMTUI_LOG"):
        quiet = logging.getLogger("memtui")
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
    stdin = sys.stdin.buffer if sys.stdin is not None else None
    if sys.stdout is None:  # nowhere to print: the input is still read, so the writer never fails
        stdout: BinaryIO = open(os.devnull, "wb")  # noqa: SIM115 (lives as long as the process)
    else:
        stdout = sys.stdout.buffer
    code = run(Target(target), stdin, stdout, sys.stderr, home=home, problem=problem)
    try:
        stdout.flush()
    except (OSError, ValueError):  # the assistant stopped reading: nothing more to say
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stdout.fileno())
        except (OSError, ValueError):
            pass
    return code


def hook_argv(argv: Sequence[str]) -> tuple[Target, str | None, str | None] | None:
    """For `memtui [--home H] [-w W] hook TARGET ...`: (target, home, problem), `problem`
    saying what is wrong with the options (the hook still reads its input and exits 0). None
    for any other command (the first word that is not an option is not `hook`, or the word
    after it is no target), and for help."""
    args = list(argv)
    if any(a in _HELP for a in args):
        return None
    home: str | None = None
    problems: list[str] = []
    i = 0
    while i < len(args) and args[i] != "hook":
        arg = args[i]
        if not arg.startswith("-"):
            return None  # another command: remember, list, ...
        name, eq, value = arg.partition("=")
        if name in _GLOBAL_OPTIONS and not eq:  # --home H, -w W
            if i + 1 < len(args) and args[i + 1] != "hook":
                i += 1
                value = args[i]
            else:
                problems.append(f"option {arg} needs a value")
        elif name not in _GLOBAL_OPTIONS:
            if arg.startswith("-w") and not arg.startswith("--"):  # -wDIR
                name, value = "-w", arg[2:]
            else:
                problems.append(f"unknown option {arg!r} before 'hook'")
        if name == "--home":
            home = value
        i += 1
    if i + 1 >= len(args) or args[i + 1] not in _TARGET_NAMES:
        return None  # not a hook run (or `hook install`, `hook uninstall`)
    extra = args[i + 2:]
    if extra:
        problems.append(f"unexpected argument {extra[0]!r} after 'hook {args[i + 1]}'")
    if home == "":
        problems.append("--home is empty")
    return Target(args[i + 1]), home, "; ".join(problems) or None


def run_argv(argv: Sequence[str]) -> int | None:
    """Run the hook when `argv` (memtui's arguments) asks for it, returning its exit code (0);
    None when `argv` is another command."""
    found = hook_argv(argv)
    if found is None:
        return None
    target, home, problem = found
    return main(target, home=home, problem=problem)


if __name__ == "__main__":  # python -m memtui.cli.hook [TARGET] [--home HOME]
    given = sys.argv[1:]
    chosen = Target.CLAUDE_CODE
    problem: str | None = None
    home: str | None = None
    if len(given) >= 2 and given[-2] == "--home":  # (as `hook install` writes it without a console script)
        home = given.pop()
        given.pop()
    if given and given[0] in _TARGET_NAMES:
        chosen = Target(given.pop(0))
    elif given:
        problem = f"unknown target {given[0]!r} (targets: {', '.join(str(t) for t in TARGETS)})"
    if given and problem is None:
        problem = f"unexpected argument {given[0]!r} after {str(chosen)!r}"
    sys.exit(main(chosen, home=home, problem=problem))
