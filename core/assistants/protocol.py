"""What a hook target reads on stdin and prints on stdout, and how much context it keeps.

Every target gets the same injection (SPEC §5) for the same prompt and workspace; what
differs is the envelope (plain text, or one JSON object), what "nothing" is, and the most
context the tool keeps: past its limit a tool replaces the text with a preview and a file
path, so the model would see a cut-off memory. `fit` drops whole entries from the end
(the last layer's lowest-ranked first) until the text is within the limit, so what the
assistant receives is always a valid injection, the same one `memtui preview --target`
shows.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, not in the stubs
from typing import TYPE_CHECKING, Any, TypeVar

from .. import jsondata
from . import Target

if TYPE_CHECKING:  # pragma: no cover
    from ..injection import InjectionResult

MEMORY_HEADER = "## Memory"
LAYER_HEADER = "### "
ENTRY_PREFIX = "- "


class HookInputError(ValueError):
    """The hook input is not what the assistant sends; the message says what is wrong."""


@dataclass(frozen=True)
class HookProtocol:
    """One assistant's prompt hook: the event it runs on, how it takes context, its limit."""

    target: Target
    name: str  # the assistant, as people call it: "Claude Code"
    event: str  # the `hook_event_name` of its input
    render: Callable[[str], bytes]  # stdout for a non-empty injection text
    nothing: bytes  # stdout when there is nothing to add (memory off, nothing passes, any failure)
    limit: int | None = None  # the most context the tool keeps, in `unit`s of `measure`
    unit: str = "characters"
    measure: Callable[[str], int] = len  # the size of a text as the tool counts it against `limit`

    def fits(self, text: str) -> bool:
        return self.limit is None or self.measure(text) <= self.limit


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


def _salvage(text: str) -> dict[str, object]:
    """The members of a JSON object that was cut off: every whole member, and a string member
    cut in the middle (the prompt, which every assistant sends after `cwd`) up to the cut."""
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


def parse_input(raw: bytes, event: str, cut: bool = False) -> tuple[str, str]:
    """(prompt, cwd) from a hook's stdin (`cut`: only its first bytes, the rest not kept), or
    HookInputError saying what is wrong. Every target sends one JSON object with at least
    `prompt` and `cwd` (and `hook_event_name`)."""
    prompt, cwd, _ = parse_hook_input(raw, event, cut)
    return prompt, cwd


def parse_hook_input(raw: bytes, event: str, cut: bool = False) -> tuple[str, str, str | None]:
    """`parse_input` and the input's `transcript_path` (a string, or None): Claude Code's
    transcript shows which files its last turns read or edited (SPEC §16)."""
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(raw, final=False) if cut else raw.decode("utf-8")
        jsondata.check_depth(text)  # before a parser that recurses (SPEC §8: nested data is read with a limit)
        if cut:  # a character cut in two at the end is left out
            data = _salvage(text)
        else:
            data = json.loads(text)
    except UnicodeDecodeError:
        raise HookInputError("hook input is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise HookInputError(f"hook input is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise HookInputError("hook input is not a JSON object")
    given = data.get("hook_event_name")
    if given is not None and given != event:
        raise HookInputError(f"hook input is for {given!r}, not {event!r}; install the hook under {event}")
    prompt, cwd = data.get("prompt"), data.get("cwd")
    if not isinstance(prompt, str):
        raise HookInputError("hook input has no \"prompt\" string")
    if not isinstance(cwd, str) or not cwd:
        raise HookInputError("hook input has no \"cwd\" string")
    if not os.path.isabs(cwd):
        raise HookInputError(f"cwd {cwd!r} is not an absolute path")
    if not os.path.isdir(cwd):
        raise HookInputError(f"cwd {cwd!r} is not a directory")
    transcript = data.get("transcript_path")
    return prompt, cwd, transcript if isinstance(transcript, str) and os.path.isabs(transcript) else None


def fit(result: InjectionResult, protocol: HookProtocol) -> InjectionResult:
    """`result` as `protocol`'s tool receives it: unchanged when its text is within the
    tool's limit, else a copy without the last entries (and without a layer header left
    with no entry), `truncated`, with count, chars, tokens and included entries to match."""
    text = result.text
    if not text or protocol.fits(text):
        return result
    from ..injection import BUDGET, INCLUDED, Candidate, block_cost

    assert protocol.limit is not None
    lines = text.split("\n")
    kept = sum(1 for line in lines if line.startswith(ENTRY_PREFIX))
    size, empty = protocol.measure(text), protocol.measure("")

    def pop() -> str:  # the last line, and its size with the newline before it taken off `size`
        nonlocal size
        line = lines.pop()
        size -= protocol.measure(line + "\n") - empty
        return line

    while lines and size > protocol.limit:
        if pop().startswith(ENTRY_PREFIX):
            kept -= 1
        while lines and (lines[-1].startswith(LAYER_HEADER) or lines[-1] == ""):
            pop()  # a header whose entries are all gone, and the blank line before it
    if kept <= 0 or lines in ([], [MEMORY_HEADER]):
        lines, kept = [], 0
    new_text = "\n".join(lines)
    included = [c for c in result.included if c.status == INCLUDED]
    dropped = {(id(c.view), c.pos) for c in included[kept:]}
    # every candidate again, those cut here marked `budget` (new objects: the result's own stay as they are)
    candidates = [c if (id(c.view), c.pos) not in dropped else Candidate(c.view, c.pos, c.score, BUDGET, c._maker)
                  for c in result.iter_candidates()]
    return dataclasses.replace(
        result, text=new_text, count=kept, chars=len(new_text), tokens=block_cost(new_text) if new_text else 0,
        truncated=True, included=[c for c in candidates if c.status == INCLUDED],
        disabled_reason=result.disabled_reason if kept else "over_budget",
        _candidates=candidates, _status_counts=None,
    )


_Made = TypeVar("_Made")


def made_on_demand(module_globals: dict[str, Any], name: str, make: Callable[[], _Made]) -> Callable[[str], _Made]:
    """A module `__getattr__` that makes the attribute `name` when it is first asked for and keeps
    it in the module: an assistant's settings-file code (`FILES`) is never imported for a hook run,
    which needs only its `PROTOCOL`."""

    def module_getattr(attr: str) -> _Made:
        if attr == name:
            made = module_globals[name] = make()
            return made
        raise AttributeError(f"module {module_globals['__name__']!r} has no attribute {attr!r}")

    return module_getattr
