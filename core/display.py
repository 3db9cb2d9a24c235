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
Each function is one regex search on the common (clean) path, and one regex
substitution with a table lookup per escaped character otherwise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable

__all__ = ["display_path", "escape_name", "escape_text", "json_for_terminal", "path_text"]


def _hex(code: int) -> str:
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _build_table(codes: Iterable[int]) -> dict[int, str]:
    table = {code: _hex(code) for code in codes}
    for code, short in ((0x09, "\\t"), (0x0A, "\\n"), (0x0D, "\\r")):
        if code in table:
            table[code] = short
    # Surrogate escapes stand for one undecodable byte each: show the byte, not the surrogate.
    for code in range(0xDC80, 0xDD00):
        if code in table:
            table[code] = f"\\x{code - 0xDC00:02x}"
    return table


_SURROGATES = range(0xD800, 0xE000)
# The bidirectional embedding, override and isolate controls (SPEC §8): they make a terminal
# show text in another order than it is ("Trojan Source"), so they are shown as escapes too.
BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_TEXT_CONTROLS = [c for c in range(0x20) if c not in (0x09, 0x0A)] + list(range(0x7F, 0xA0)) + list(BIDI_CONTROLS)
# Unicode line/paragraph separators and the bidirectional marks: harmless in memory text
# (right-to-left writing uses the marks), but in a one-line name they can fake a line break
# or show a name reversed.
_NAME_EXTRA = [0x09, 0x0A, 0x0D, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F]

_PATH_TABLE = _build_table(_SURROGATES)
_TEXT_TABLE = _build_table([*_TEXT_CONTROLS, *_SURROGATES])
_NAME_TABLE = _build_table([*_TEXT_CONTROLS, *_NAME_EXTRA, *_SURROGATES])


def _class_of(table: dict[int, str]) -> re.Pattern[str]:
    codes = sorted(table)
    ranges: list[list[int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    parts = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges
    )
    return re.compile(f"[{parts}]")


def _replacer(table: dict[int, str]) -> Callable[[re.Match[str]], str]:
    def sub(match: re.Match[str]) -> str:
        return table[ord(match.group())]

    return sub


_PATH_RE = _class_of(_PATH_TABLE)
_TEXT_RE = _class_of(_TEXT_TABLE)
_NAME_RE = _class_of(_NAME_TABLE)
_PATH_SUB = _replacer(_PATH_TABLE)
_TEXT_SUB = _replacer(_TEXT_TABLE)
_NAME_SUB = _replacer(_NAME_TABLE)


def path_text(s: str) -> str:
    """`s` with undecodable bytes (surrogate escapes) shown as `\\xNN`; otherwise unchanged."""
    return _PATH_RE.sub(_PATH_SUB, s) if _PATH_RE.search(s) else s


def escape_text(s: str) -> str:
    """Memory text for a terminal: control characters other than tab and newline, and the
    bidi controls, become visible escapes (`\\x1b`, `\\x7f`, `\\x9b`, `\\u202e`), so the
    text can move no cursor, set no title, write no clipboard, open no link and reorder
    nothing."""
    return _TEXT_RE.sub(_TEXT_SUB, s) if _TEXT_RE.search(s) else s


def escape_name(s: str) -> str:
    """A path, file name or other one-line field for a terminal: like `escape_text`, and
    tab, newline, carriage return, line separators and bidi controls escaped too."""
    return _NAME_RE.sub(_NAME_SUB, s) if _NAME_RE.search(s) else s


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
