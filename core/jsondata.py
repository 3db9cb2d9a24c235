"""JSON from files and programs memtui does not control, read with limits (SPEC §8 "One
bounded reader"): a nest deeper than `MAX_DEPTH` is refused before the parser (which
recurses) sees it, and a lone surrogate (`"\\ud800"`, valid JSON that no UTF-8 file can
hold) is refused after it. Both are `json.JSONDecodeError`s, so every caller that reports
a bad JSON file (with its line and column) reports these too, for that file or row alone.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 256  # far beyond any settings file, client config or record; far below the interpreter's limit

# possessive: a long string is skipped without a backtracking stack (the plain form kept
# about 100 bytes per character of a string: 117 MB for a 1 MiB prompt); a string left
# open (text cut inside it) runs to the end: one pass, and no bracket in it counted
_STRUCTURE = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\Z)|[\[\]{}]', re.DOTALL)
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def check_depth(text: str, limit: int = MAX_DEPTH) -> None:
    """JSONDecodeError when arrays and objects in `text` nest deeper than `limit` (strings
    skipped, a string left open at the end included; the text need not be valid JSON: the
    parser says what else is wrong). Linear in the text."""
    depth = 0
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                raise json.JSONDecodeError(f"nested more than {limit} levels deep", text, match.start())
        elif token in "]}":
            depth -= 1


def check_surrogates(value: Any, text: str = "") -> None:
    """JSONDecodeError when a string of the parsed `value` (a key or a value) holds a lone
    surrogate, which cannot be written back as UTF-8 nor shown. Iterative."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found is not None:
                raise json.JSONDecodeError(
                    f"a string holds a lone surrogate (\\u{ord(found.group()):04x}), which is not text", text,
                    _where(text, found.group()))
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _where(text: str, char: str) -> int:
    """Where `char` (a surrogate) is written in `text`: as itself or as a \\u escape."""
    at = text.find(char)
    if at >= 0:
        return at
    found = re.search(rf"\\u{ord(char):04x}", text, re.IGNORECASE)
    return found.start() if found is not None else 0


def loads(text: str, **kwargs: Any) -> Any:
    """`json.loads(text, **kwargs)` within the limits above."""
    check_depth(text)
    value = json.loads(text, **kwargs)
    check_surrogates(value, text)
    return value


_ESCAPE = re.compile(rb"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)


def _surrogate_at(match: re.Match[bytes] | None) -> int | None:
    """The surrogate a `\\uXXXX` escape writes, else None."""
    if match is None or len(match.group(1)) != 5:
        return None
    code = int(match.group(1)[1:], 16)
    return code if 0xD800 <= code <= 0xDFFF else None


def replace_lone_surrogates(raw: bytes, escape: bytes = b"\\ufffd") -> bytes:
    """JSON text with every lone surrogate escape (`\\ud800` not half of a pair) written as
    `escape`: by default `\\ufffd`, the replacement character, as a byte that is not UTF-8
    already is when a stream is read with errors="replace"; everything else byte for byte."""
    if b"\\u" not in raw:
        return raw
    escapes = list(_ESCAPE.finditer(raw))
    lone: list[re.Match[bytes]] = []
    i = 0
    while i < len(escapes):
        code = _surrogate_at(escapes[i])
        if code is not None:
            after = escapes[i + 1] if i + 1 < len(escapes) else None
            low = _surrogate_at(after)
            if code < 0xDC00 and after is not None and after.start() == escapes[i].end() and low is not None \
                    and low >= 0xDC00:
                i += 2  # a pair: one character
                continue
            lone.append(escapes[i])
        i += 1
    if not lone:
        return raw
    out, last = [], 0
    for match in lone:
        out += [raw[last:match.start()], escape]
        last = match.end()
    out.append(raw[last:])
    return b"".join(out)
