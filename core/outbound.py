"""The one gate for what leaves (SPEC §8, §11): redaction and the off-switch.

Everything memtui hands to a model or writes for another tool passes through here, so the rule
lives in one place instead of at each call site (a new face that forgets it is the hole this
module closes):

- the injection: each line is made by `redact_line` (SPEC §5 step 8), once per entry text, and
  kept in the line cache / prepared index; the text is those lines, so it is byte-identical to
  what §5 says. `injection_text(result)` is what a hook may print: nothing while memory is off.
- every MCP tool result: `Outbound.check(settings)` refuses with exactly `MEMORY_OFF` while memory
  is off for the workspace, and `Outbound.result(value)` redacts every string in the result
  (texts, sections, tags, sources, ids, error messages).
- exported files and their names (core/interop calls these):

      from memtui.core import outbound
      body = outbound.redact_text(entry.text, settings)     # "[REDACTED]" in place of each secret
      name = outbound.redact_name(slug_source, settings)    # "redacted": no brackets in a file name

  Make a file name from the *redacted* text (a slug such as `sk-live-51h...` no longer looks like
  the key it came from, so redacting the slug afterwards finds nothing).

What counts as a secret is `memtui.core.secrets.redact` (detect-secrets' plugins plus the few rules
they lack). `memory.redactSecrets: false` in the global settings turns redaction off everywhere at
once; nothing else does (export's `--no-redact` passes `redact=False` explicitly).

API:

- `MEMORY_OFF`: the whole answer a model gets from a workspace where memory is off.
- `redact_line(one_line) -> (line, count)`: one line (the injection's §5 step 8).
- `redact_text(text, settings | bool) -> str`: any text, newlines kept. A secret that only shows
  once the text is joined onto one line (`password:` at a line's end, the value on the next) is
  caught too: then the text comes back joined onto one line, redacted.
- `redact_name(name, settings | bool) -> str`: for a file name (`redacted`, no brackets).
- `injection_text(result) -> str`: the injection text a hook may hand on ('' while memory is off).
- `Outbound`: one per long-lived face (the MCP server); remembers what it redacted by text, so
  each entry's text is redacted once, not on every call.
- `why_not_forget(entry, paths) -> str | None`: what a model may delete (SPEC §11): only the
  served workspace's own memories, project and conversation; None when it may.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .injection import InjectionResult
    from .model import Entry
    from .paths import Paths
    from .settings import Settings

__all__ = ["MEMORY_OFF", "REDACTED", "MemoryOff", "Outbound", "injection_text", "load_detectors", "redact_line", "redact_lines", "redact_name",  # noqa: F822 (REDACTED: __getattr__)
           "redact_text", "why_not_forget"]

MEMORY_OFF = "memory is off"
NAME_MARK = "redacted"


def __getattr__(name: str) -> str:
    # REDACTED is the secrets module's, which is imported when first needed: a warm hook
    # prints lines redacted when they were made, and never compiles the detectors' patterns
    if name == "REDACTED":
        from .secrets import REDACTED

        return REDACTED
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_found: Callable[[str], tuple[str, int]] | None = None  # `secrets.redact`, imported on the first line


def redact(text: str) -> tuple[str, int]:
    """`memtui.core.secrets.redact`: `text` with each secret replaced, and how many were."""
    global _found
    if _found is None:
        from .secrets import redact as found

        _found = found
    return _found(text)


def load_detectors() -> None:
    """Import and compile the secret detectors now rather than on the first line that needs
    them (before a fork: the child then shares them instead of importing them again)."""
    from .secrets import load_rules

    load_rules()


class MemoryOff(Exception):
    """Memory is off for the workspace: nothing of it may be handed to a model."""

    def __init__(self, message: str = MEMORY_OFF) -> None:
        super().__init__(message)


def _wanted(settings: Settings | bool) -> bool:
    return settings if isinstance(settings, bool) else bool(settings.redact_secrets)


def redact_line(one_line: str) -> tuple[str, int]:
    """One line with each secret replaced by `[REDACTED]`, and how many were."""
    return redact(one_line)


def redact_lines(lines: Sequence[str]) -> dict[int, tuple[str, int]]:
    """`redact_line` of many lines: (line, count) by position, for the lines it changed only."""
    from .secrets import redact_many

    return redact_many(lines)


def redact_text(text: str, settings: Settings | bool) -> str:
    """`text` with each secret replaced by `[REDACTED]` (unless redaction is off). Newlines are
    kept, except when a secret is only found with the text joined onto one line (the form the
    injection uses): then the joined, redacted line is returned, so nothing the injection would
    hide leaves by another way."""
    if not _wanted(settings) or not text:
        return text
    out, _ = redact(text)
    if "\n" in out or "\r" in out or "\t" in out:
        joined = " ".join(out.split())
        again, found = redact(joined)
        if found:
            return again
    return out


def redact_name(name: str, settings: Settings | bool) -> str:
    """A file name (or a slug for one) with each secret replaced by `redacted`."""
    if not _wanted(settings) or not name:
        return name
    from .secrets import REDACTED

    out, found = redact(name)
    return out.replace(REDACTED, NAME_MARK) if found else name


def injection_text(result: InjectionResult) -> str:
    """What a hook may hand to its assistant: the injection text ('' while memory is off). Its
    lines were redacted when they were made (`redact_line`, §5 step 8)."""
    if not result.enabled or result.disabled_reason == "switch_off":
        return ""
    return result.text


def private_message(settings: Settings) -> str:
    """What a model gets while private mode is on (SPEC §18)."""
    from datetime import UTC, datetime

    until = datetime.fromtimestamp(settings.private_until or 0, tz=UTC).replace(microsecond=0).isoformat()
    return f"memory is private until {until}: nothing is recalled or learned"


def why_not_forget(entry: Entry, paths: Paths) -> str | None:
    """Why a model may not delete `entry` through MCP, or None when it may: a project memory
    under this workspace's memory root, or a conversation memory (the store holds only this
    workspace's conversations). User memories follow the person everywhere: theirs to delete."""
    from .model import Layer

    if entry.layer == Layer.CONVERSATION:
        return None
    if entry.layer == Layer.USER:
        return (f"{entry.id!r} is a user memory: the person deletes those (`memtui delete` or the TUI), "
                "not an assistant")
    if entry.layer == Layer.PROJECT and entry.path is not None:
        try:
            if entry.path.resolve().is_relative_to(paths.project_root.resolve()):
                return None
        except (OSError, RuntimeError):
            pass
    return f"{entry.id!r} is not a memory of this workspace"


class Outbound:
    """The gate for one long-lived face (the MCP server). `check` refuses while memory is off;
    `text` and `result` redact, remembering each text's answer so an entry is redacted once."""

    LIMIT = 100_000  # texts remembered per setting; past it the memo starts again

    def __init__(self) -> None:
        self._memo: dict[str, str] = {}

    @staticmethod
    def check(settings: Settings) -> Settings:
        """`settings` when memory is on for the workspace; `MemoryOff` otherwise."""
        if not settings.enabled:
            raise MemoryOff()
        if settings.private:  # SPEC §18: answered like memory off, said as private
            raise MemoryOff(private_message(settings))
        return settings

    def text(self, text: str, settings: Settings | bool) -> str:
        if not _wanted(settings):
            return text
        done = self._memo.get(text)
        if done is None:
            if len(self._memo) >= self.LIMIT:
                self._memo.clear()
            done = self._memo[text] = redact_text(text, True)
        return done

    def result(self, value: Any, settings: Settings | bool) -> Any:
        """`value` (JSON-like: dicts, lists, strings, numbers) with every string redacted,
        keys included."""
        if isinstance(value, str):
            return self.text(value, settings)
        if isinstance(value, dict):
            return {self.text(k, settings) if isinstance(k, str) else k: self.result(v, settings)
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.result(v, settings) for v in value]
        return value
