"""The Claude Code hook (SPEC §11): `memtui hook claude-code`, or `python -m memtui.cli.hook`.

Claude Code runs it as a `UserPromptSubmit` command hook before every prompt, with one
JSON object on stdin (`session_id`, `transcript_path`, `cwd`, `permission_mode`,
`hook_event_name`, `prompt`). On exit 0 whatever it prints on stdout is added to the
context Claude sees. So it prints exactly the injection text (what `memtui preview`
prints for that prompt in the workspace of `cwd`) or nothing, and always exits 0: any
failure is one line on stderr and an empty stdout, never a blocked prompt.

Only the standard library is imported up front; the core is imported when needed, and
click and Textual never are.
"""

from __future__ import annotations

import json
import os
import sys
from typing import BinaryIO, TextIO

EVENT = "UserPromptSubmit"


class HookInputError(ValueError):
    """The hook input is not what Claude Code sends."""


def printable(text: str) -> str:
    """One line, control characters shown as escapes, so no path can forge output."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def parse_input(raw: bytes) -> tuple[str, str]:
    """(prompt, cwd) from the hook's stdin, or HookInputError saying what is wrong."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise HookInputError("hook input is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise HookInputError(f"hook input is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise HookInputError("hook input is not a JSON object")
    event = data.get("hook_event_name")
    if event is not None and event != EVENT:
        raise HookInputError(f"hook input is for {event!r}, not {EVENT!r}; install the hook under {EVENT}")
    prompt, cwd = data.get("prompt"), data.get("cwd")
    if not isinstance(prompt, str):
        raise HookInputError("hook input has no \"prompt\" string")
    if not isinstance(cwd, str) or not cwd:
        raise HookInputError("hook input has no \"cwd\" string")
    if not os.path.isabs(cwd):
        raise HookInputError(f"cwd {cwd!r} is not an absolute path")
    if not os.path.isdir(cwd):
        raise HookInputError(f"cwd {cwd!r} is not a directory")
    return prompt, cwd


def injection_for(raw: bytes, home: str | None = None) -> str:
    """The text to print for this hook input ('' for nothing). Raises on any failure."""
    prompt, cwd = parse_input(raw)
    from memtui.core.history import record
    from memtui.core.paths import Paths
    from memtui.core.serve import build_injection

    paths = Paths.resolve(home=home, cwd=cwd)
    result = build_injection(paths.workspace, prompt, home=paths.home)
    if result.disabled_reason == "switch_off":
        return ""
    # Recorded before it is printed: the history never misses an injection Claude saw, and a
    # muse.db that cannot be written (locked, damaged) gives nothing rather than a silent gap.
    outcome = record(paths.db_path, result, paths.workspace)
    if not outcome.ok:
        raise RuntimeError(f"{paths.db_path}: {outcome.error}")
    return result.text + "\n" if result.text else ""


def claude_code(stdin: BinaryIO, stdout: BinaryIO, stderr: TextIO, home: str | None = None) -> int:
    """Run the hook over these streams; always 0 (a hook must never block the prompt)."""
    try:
        if stdin.isatty():
            raise HookInputError("expects Claude Code's UserPromptSubmit JSON on stdin, not a terminal")
        text = injection_for(stdin.read(), home=home)
    except Exception as exc:  # any failure: nothing on stdout, the reason on stderr
        reason = str(exc) or type(exc).__name__
        try:
            stderr.write(f"memtui hook: {printable(reason)}\n")
            stderr.flush()
        except (OSError, ValueError):
            pass
        return 0
    if text:
        try:
            stdout.write(text.encode("utf-8"))
            stdout.flush()
        except (OSError, ValueError):
            pass
    return 0


def main(home: str | None = None) -> int:
    """The entry point: the process's own streams. memtui's log lines are kept off stderr
    (unless MEMTUI_LOG asks for them), so a failure is the one line `claude_code` writes."""
    import logging

    if not os.environ.get("MEMTUI_LOG"):
        quiet = logging.getLogger("memtui")
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
    code = claude_code(sys.stdin.buffer, sys.stdout.buffer, sys.stderr, home=home)
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # Claude Code stopped reading: nothing more to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return code


if __name__ == "__main__":
    sys.exit(main())
