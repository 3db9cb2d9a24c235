"""Strings that reach a terminal (SPEC §8): memory text and file names are data, never control.

Three levels, from least to most escaping:

- `path_text(s)`: only what cannot be encoded at all. A file name holding bytes that are
  not UTF-8 arrives from the OS with "surrogate escapes" (`x\\udcff.md`); such a string
  cannot be printed, written to SQLite or hashed as UTF-8. Each of those bytes becomes the
  four characters `\\xff` (and any other lone surrogate `\\udXXX`). Everything else is kept,
  so this is fit for `--json`, ids and the index.
- `escape_text(s)`: memory text shown in a terminal. Control characters (C0 except tab
  and newline, DEL, C1: so ESC/CSI sequences, OSC 8 links, OSC 52 clipboard writes,
  title changes) and the bidirectional embedding, override and isolate controls
  (U+202A–U+202E, U+2066–U+2069: "Trojan Source" reordering) become visible escapes such
  as `\\x1b` or `\\u202e`; surrogates as above.
- `escape_name(s)` / `display_path(p)`: paths, file names and other one-line fields.
  Also escapes `\\n`, `\\r`, `\\t`, the Unicode line and paragraph separators and the
  bidirectional marks, so no name can forge a line of output or reorder what is shown.

`--json` output and the injection text are never escaped: they keep the exact characters.
Each function is one regex search on the common (clean) path (`path_text`: a check that
the text encodes as UTF-8), and one regex substitution otherwise; the patterns are compiled
when first used.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import cache

__all__ = ["display_path", "escape_name", "escape_text", "json_for_terminal", "path_text"]


def _hex(code: int) -> str:
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


_SHORT = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _escape(match: re.Match[str]) -> str:
    """How an escaped character is shown: tab, newline and carriage return by their short
    escapes; a surrogate escape (U+DC80–U+DCFF stands for one undecodable byte) as that
    byte, `\\xff`; any other character by its code, `\\x1b` or `\\u202e`."""
    code = ord(match.group())
    short = _SHORT.get(code)
    if short is not None:
        return short
    if 0xDC80 <= code < 0xDD00:
        return f"\\x{code - 0xDC00:02x}"
    return _hex(code)


_SURROGATES = (0xD800, 0xDFFF)  # every lone surrogate, as an inclusive range
# The bidirectional embedding, override and isolate controls (SPEC §8): they make a terminal
# show text in another order than it is ("Trojan Source"), so they are shown as escapes too.
BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_TEXT_CONTROLS = [c for c in range(0x20) if c not in (0x09, 0x0A)] + list(range(0x7F, 0xA0)) + list(BIDI_CONTROLS)
# Unicode line/paragraph separators and the bidirectional marks: harmless in memory text
# (right-to-left writing uses the marks), but in a one-line name they can fake a line break
# or show a name reversed.
_NAME_EXTRA = [0x09, 0x0A, 0x0D, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F]


def _class_of(codes: Iterable[int], span: tuple[int, int]) -> re.Pattern[str]:
    """A character class of `codes` and the inclusive range `span`, written as ranges."""
    ranges: list[list[int]] = []
    for code in sorted(set(codes)):
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    ranges.append(list(span))
    parts = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges
    )
    return re.compile(f"[{parts}]")


# Compiled when first needed: a class spanning the surrogates costs milliseconds to compile,
# and the hook, which starts for every prompt, usually needs none of them.
@cache
def _text_re() -> re.Pattern[str]:
    return _class_of(_TEXT_CONTROLS, _SURROGATES)


@cache
def _name_re() -> re.Pattern[str]:
    return _class_of([*_TEXT_CONTROLS, *_NAME_EXTRA], _SURROGATES)


@cache
def _path_re() -> re.Pattern[str]:
    return _class_of((), _SURROGATES)


def path_text(s: str) -> str:
    """`s` with undecodable bytes (surrogate escapes) shown as `\\xNN`; otherwise unchanged."""
    if s.isascii():
        return s
    try:  # only a lone surrogate stops a string from encoding as UTF-8
        s.encode("utf-8")
    except UnicodeEncodeError:
        return _path_re().sub(_escape, s)
    return s


def escape_text(s: str) -> str:
    """Memory text for a terminal: control characters other than tab and newline, and the
    bidi controls, become visible escapes (`\\x1b`, `\\x7f`, `\\x9b`, `\\u202e`), so the
    text can move no cursor, set no title, write no clipboard, open no link and reorder
    nothing."""
    pattern = _text_re()
    return pattern.sub(_escape, s) if pattern.search(s) else s


def escape_name(s: str) -> str:
    """A path, file name or other one-line field for a terminal: like `escape_text`, and
    tab, newline, carriage return, line separators and bidi controls escaped too."""
    pattern = _name_re()
    return pattern.sub(_escape, s) if pattern.search(s) else s


def display_path(p: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """A path as one safe line of terminal output."""
    return escape_name(os.fsdecode(p))


# JSON text already escapes C0 controls (ESC becomes \u001b) but, without ensure_ascii,
# leaves DEL, the C1 controls (U+009B is an 8-bit CSI), the line separators and the bidi
# controls raw. They can only occur inside JSON strings, so writing them as \uXXXX gives
# the same JSON value.
_JSON_RE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def json_for_terminal(text: str) -> str:
    """JSON text (from `json.dumps`) with the control characters that JSON leaves raw written
    as `\\uXXXX` escapes: the same JSON value, and safe to show in a terminal."""
    return _JSON_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _JSON_RE.search(text) else text
