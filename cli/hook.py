"""The Claude Code hook (SPEC §11): `memtui hook claude-code`, or `python -m memtui.cli.hook`.

Claude Code runs it as a `UserPromptSubmit` command hook before every prompt, with one
JSON object on stdin (`session_id`, `transcript_path`, `cwd`, `permission_mode`,
`hook_event_name`, `prompt`). On exit 0 whatever it prints on stdout is added to the
context Claude sees. So it prints exactly the injection text (what `memtui preview`
prints for that prompt in the workspace of `cwd`) or nothing, and always exits 0: any
failure is one line on stderr and an empty stdout, never a blocked prompt.

Input is bounded: at most `LIMIT` (1 MiB) of stdin is kept. A longer input is read to its end
without being kept (so Claude Code's write never fails) and the prompt is cut there for matching,
which is said on stderr. Bad options, a closed stdin, a vanished current directory, a `--home`
that is a file: each is a reason on stderr and exit 0 (exit 2 would block the prompt in Claude
Code). `memtui ... hook claude-code` is dispatched here before click parses anything (`run_argv`),
so not even click's usage errors can exit 2.

Only the standard library is imported up front; the core is imported when needed, and
click and Textual never are.
"""

from __future__ import annotations

import codecs
import json
import os
import sys
from collections.abc import Sequence
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, not in the stubs
from typing import BinaryIO, TextIO

EVENT = "UserPromptSubmit"
LIMIT = 1 << 20  # bytes of stdin kept (SPEC §8)
_CHUNK = 1 << 16
TARGETS = ("claude-code",)
# memtui's global options (cli/main.py) that may come before `hook`; each takes a value
_GLOBAL_OPTIONS = frozenset({"--home", "-w", "--workspace"})
_HELP = {"-h", "--help", "--version"}


class HookInputError(ValueError):
    """The hook input is not what Claude Code sends."""


def printable(text: str) -> str:
    """One line, control characters shown as escapes, so no path can forge output."""
    from memtui.core.display import escape_name

    return escape_name(text)


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


def _cut_string(fragment: str) -> str:
    """A JSON string's content cut off anywhere (perhaps inside an escape), decoded."""
    for trim in range(7):  # the longest escape, \uXXXX, is 6 characters
        try:
            value = json.loads('"' + fragment[: len(fragment) - trim] + '"')
        except json.JSONDecodeError:
            continue
        if not isinstance(value, str):
            return ""
        # a \uD83D of a surrogate pair whose second half was cut off is left out too
        return value[:-1] if value and "\ud800" <= value[-1] <= "\udbff" else value
    return ""


def _salvage(text: str) -> dict:
    """The members of a JSON object that was cut off: every whole member, and a string member
    cut in the middle (the prompt, which Claude Code sends last) up to the cut."""
    decoder = json.JSONDecoder()
    ws = " \t\r\n"
    i, n = 0, len(text)
    out: dict[str, object] = {}
    while i < n and text[i] in ws:
        i += 1
    if not text.startswith("{", i):
        raise HookInputError("hook input is not a JSON object")
    i += 1
    while True:
        while i < n and text[i] in ws + ",":
            i += 1
        if i >= n or text[i] != '"':
            return out
        try:
            key, i = scanstring(text, i + 1)
        except json.JSONDecodeError:
            return out
        while i < n and text[i] in ws + ":":
            i += 1
        try:
            value, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            if text.startswith('"', i):
                out[key] = _cut_string(text[i + 1:])
            return out
        out[key] = value


def parse_input(raw: bytes, cut: bool = False) -> tuple[str, str]:
    """(prompt, cwd) from the hook's stdin (`cut`: only its first `LIMIT` bytes), or
    HookInputError saying what is wrong."""
    try:
        if cut:  # a character cut in two at the end is left out
            data = _salvage(codecs.getincrementaldecoder("utf-8")().decode(raw, final=False))
        else:
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


def injection_for(raw: bytes, home: str | None = None, cut: bool = False) -> str:
    """The text to print for this hook input ('' for nothing). Raises on any failure."""
    prompt, cwd = parse_input(raw, cut)
    from memtui.core import outbound
    from memtui.core.history import record
    from memtui.core.injection import build_injection
    from memtui.core.paths import Paths

    paths = Paths.resolve(home=home, cwd=cwd)
    if paths.home.exists() and not paths.home.is_dir():
        raise HookInputError(f"the Muse home {paths.home} is not a directory")
    result = build_injection(paths.workspace, prompt, home=paths.home)
    if result.disabled_reason == "switch_off":
        return ""
    # Recorded before it is printed: the history never misses an injection Claude saw, and a
    # muse.db that cannot be written (locked, damaged) gives nothing rather than a silent gap.
    outcome = record(paths.db_path, result, paths.workspace)
    if not outcome.ok:
        raise RuntimeError(f"{paths.db_path}: {outcome.error}")
    text = outbound.injection_text(result)  # what leaves passes the gate (SPEC §8)
    return text + "\n" if text else ""


def _say(stderr: TextIO | None, reason: str) -> None:
    try:
        if stderr is not None:
            stderr.write(f"memtui hook: {printable(reason)}\n")
            stderr.flush()
    except (OSError, ValueError):
        pass


def claude_code(stdin: BinaryIO | None, stdout: BinaryIO, stderr: TextIO | None, home: str | None = None,
                problem: str | None = None) -> int:
    """Run the hook over these streams; always 0 (a hook must never block the prompt).
    `problem` (bad options): the input is still read, then the problem is the failure."""
    try:
        if stdin is None:
            raise HookInputError("stdin is closed; expects Claude Code's UserPromptSubmit JSON on it")
        if stdin.isatty():
            raise HookInputError("expects Claude Code's UserPromptSubmit JSON on stdin, not a terminal")
        raw, cut = read_input(stdin)
        if problem:
            raise HookInputError(problem)
        if cut:
            _say(stderr, f"hook input is longer than {LIMIT // (1 << 20)} MiB; the prompt was cut there for matching")
        text = injection_for(raw, home=home, cut=cut)
    except Exception as exc:  # any failure: nothing on stdout, the reason on stderr
        _say(stderr, str(exc) or type(exc).__name__)
        return 0
    if text:
        try:
            stdout.write(text.encode("utf-8"))
            stdout.flush()
        except (OSError, ValueError):
            pass
    return 0


def main(home: str | None = None, problem: str | None = None) -> int:
    """The entry point: the process's own streams. memtui's log lines are kept off stderr
    (unless MEMTUI_LOG asks for them), so a failure is the one line `claude_code` writes."""
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
    code = claude_code(stdin, stdout, sys.stderr, home=home, problem=problem)
    try:
        stdout.flush()
    except (OSError, ValueError):  # Claude Code stopped reading: nothing more to say
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stdout.fileno())
        except (OSError, ValueError):
            pass
    return code


def hook_argv(argv: Sequence[str]) -> tuple[str | None, str | None] | None:
    """For `memtui [--home H] [-w W] hook claude-code ...`: (home, problem), `problem` saying
    what is wrong with the options (the hook still reads its input and exits 0). None for any
    other command (the first word that is not an option is not `hook`), and for help."""
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
    if i + 1 >= len(args) or args[i + 1] not in TARGETS:
        return None  # not a hook run (or `hook install`, `hook uninstall`)
    extra = args[i + 2:]
    if extra:
        problems.append(f"unexpected argument {extra[0]!r} after 'hook {args[i + 1]}'")
    if home == "":
        problems.append("--home is empty")
    return home, "; ".join(problems) or None


def run_argv(argv: Sequence[str]) -> int | None:
    """Run the hook when `argv` (memtui's arguments) asks for it, returning its exit code (0);
    None when `argv` is another command."""
    found = hook_argv(argv)
    if found is None:
        return None
    home, problem = found
    return main(home=home, problem=problem)


if __name__ == "__main__":
    sys.exit(main())
