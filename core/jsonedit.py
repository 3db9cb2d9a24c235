"""A JSON file changed in place (SPEC §8, "installers change only what they own"): the text of
a JSON document edited to hold new data while every byte memtui did not change stays as it
was (numbers as written, `\\u00e9` escapes, indentation, key order, line ends).

`splice(text, new, loads, dumps)` walks the old text and the new data together: a value equal
to the old one keeps its text; an object keeps its members' text, drops the removed ones with
the separator before them, and appends added ones after the last member in the same layout; an
array keeps its items, drops removed ones the same way, appends added ones; anything else is
written anew in the indentation around it. So an install followed by an uninstall gives the
file back byte for byte: the uninstall removes exactly what the install appended.

Only the changed values are walked (iteratively scanned, never recursing into unchanged
nests). `splice` returns None when it cannot keep the text (duplicate keys, a reordered
object): the caller then writes the data whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_WS = " \t\r\n"
Loads = Callable[[str], Any]
Dumps = Callable[[Any, "str | None"], str]  # (value, indent unit or None: one line) -> its JSON text


class _Unkept(Exception):
    """The text cannot be kept around this change."""


def _ws(t: str, i: int) -> int:
    while i < len(t) and t[i] in _WS:
        i += 1
    return i


def _string_end(t: str, i: int) -> int:
    j = i + 1
    while t[j] != '"':
        j += 2 if t[j] == "\\" else 1
    return j + 1


def _value_end(t: str, i: int) -> int:
    """The index just after the JSON value that starts at `i` (scanned, not recursed)."""
    c = t[i]
    if c == '"':
        return _string_end(t, i)
    if c in "{[":
        depth, j = 0, i
        while True:
            c = t[j]
            if c == '"':
                j = _string_end(t, j)
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
    j = i
    while j < len(t) and t[j] not in _WS + ",]}":
        j += 1
    return j


def _parts(t: str, s: int) -> tuple[list[tuple[int, int, int]], int]:
    """The members (key start, value start, value end) of the object or the items (start,
    start, end) of the array at `s`, and the index of its closing bracket."""
    obj = t[s] == "{"
    close = "}" if obj else "]"
    out: list[tuple[int, int, int]] = []
    j = _ws(t, s + 1)
    if t[j] == close:
        return out, j
    while True:
        start = j
        if obj:
            j = _ws(t, _string_end(t, j))
            j = _ws(t, j + 1)  # past ':'
        end = _value_end(t, j)
        out.append((start, j, end))
        j = _ws(t, end)
        if t[j] == ",":
            j = _ws(t, j + 1)
            continue
        return out, j


def same(a: Any, b: Any) -> bool:
    """JSON-equal with types kept apart (`1`, `1.0` and `true` differ) and key order counted."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _line_indent(t: str, i: int) -> str:
    """The leading whitespace of the line holding index `i`."""
    start = t.rfind("\n", 0, i) + 1
    end = start
    while end < len(t) and t[end] in " \t":
        end += 1
    return t[start:end]


def indent_unit(t: str) -> str:
    """The document's indentation step: a tab, or the smallest run of leading spaces (2 when none)."""
    smallest = 0
    for line in t.split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if not stripped or stripped == line:
            continue
        lead = line[: len(line) - len(stripped)]
        if lead.startswith("\t"):
            return "\t"
        smallest = len(lead) if not smallest else min(smallest, len(lead))
    return " " * (smallest or 2)


class _Splicer:
    def __init__(self, t: str, loads: Loads, dumps: Dumps):
        self.t, self.loads, self.dumps = t, loads, dumps
        self.unit = indent_unit(t)
        self.eol = "\r\n" if "\r\n" in t else "\n"

    def fresh(self, value: Any, indent: str) -> str:
        """`value` written anew, its later lines at `indent`."""
        return self.dumps(value, self.unit).replace("\n", self.eol + indent)

    def value(self, s: int, e: int, new: Any) -> str:
        t = self.t
        old = self.loads(t[s:e])
        if same(old, new):
            return t[s:e]
        indent = _line_indent(t, s)
        if t[s] == "{" and isinstance(new, dict) and isinstance(old, dict):
            return self.obj(s, e, old, new, indent)
        if t[s] == "[" and isinstance(new, list) and isinstance(old, list):
            return self.arr(s, e, old, new, indent)
        return self.fresh(new, indent)

    def _join(self, s: int, close: int, parts: list[tuple[int, int, int]], texts: list[str],
              keep: list[bool], added: list[Any], key_of: Callable[[Any], str], indent: str) -> str:
        """The container at [s, close] with its parts kept (`keep`, their new value `texts`)
        and `added` values appended (each with its key prefix from `key_of`), in its own layout.
        A part removed goes with the separator before it (the first one: after it); the last
        one removed leaves the container as `{` + what stood before its closing bracket."""
        t = self.t
        lead = t[s + 1: parts[0][0]] if parts else ""
        trail = t[parts[-1][2]: close] if parts else t[s + 1: close]
        seps = [t[parts[i][2]: parts[i + 1][0]] for i in range(len(parts) - 1)]
        out: list[tuple[str, str]] = []
        carry: str | None = None
        for i, part in enumerate(parts):
            sep = lead if i == 0 else seps[i - 1]
            if keep[i]:
                out.append((carry if not out and carry is not None else sep, t[part[0]: part[1]] + texts[i]))
            elif not out and carry is None:
                carry = sep
        if added:
            if out:
                sep = next((x for x in seps if x), None) or ("," + lead if "\n" in lead else ", ")
                first = sep
            elif "\n" in trail:
                first = self.eol + indent + self.unit
                sep = "," + first
            else:
                first, sep = "", ", "
            line = sep[sep.rfind("\n") + 1:] if "\n" in sep else indent
            for value in added:  # in the container's layout: one per line, or all on its line
                text = key_of(value) + (self.fresh(value[1], line) if "\n" in sep else self.dumps(value[1], None))
                out.append((sep if out else first, text))
        return t[s] + "".join(a + b for a, b in out) + trail + t[close]

    def obj(self, s: int, e: int, old: dict[str, Any], new: dict[str, Any], indent: str) -> str:
        t = self.t
        members, close = _parts(t, s)
        keys = [self.loads(t[m[0]: _string_end(t, m[0])]) for m in members]
        if len(set(keys)) != len(keys):
            raise _Unkept("duplicate keys")
        kept = [k for k in keys if k in new]
        if list(new)[: len(kept)] != kept:
            raise _Unkept("keys reordered")
        colon = t[_string_end(t, members[0][0]): members[0][1]] if members else ": "
        texts = [self.value(m[1], m[2], new[k]) if k in new else "" for k, m in zip(keys, members, strict=True)]
        added = [(k, new[k]) for k in list(new)[len(kept):]]
        return self._join(s, close, members, texts, [k in new for k in keys], added,
                          lambda kv: self.dumps(kv[0], self.unit) + colon, indent)

    def arr(self, s: int, e: int, old: list[Any], new: list[Any], indent: str) -> str:
        t = self.t
        items, close = _parts(t, s)
        if len(new) >= len(old):
            texts = [self.value(i[1], i[2], v) for i, v in zip(items, new, strict=False)]
            keep = [True] * len(items)
            rest = new[len(old):]
        else:  # items removed: the new list must be the old one with some left out
            keep, j = [], 0
            for value in old:
                hit = j < len(new) and same(value, new[j])
                keep.append(hit)
                j += hit
            if j != len(new):
                raise _Unkept("items changed and removed at once")
            texts = [t[i[1]: i[2]] for i in items]
            rest = []
        return self._join(s, close, items, texts, keep, [(None, v) for v in rest], lambda kv: "", indent)


def splice(text: str, new: Any, loads: Loads, dumps: Dumps) -> str | None:
    """`text` (one JSON document) edited to hold `new`, every unchanged byte kept; None when
    the text cannot be kept (the caller writes `new` whole)."""
    try:
        s = _ws(text, 0)
        e = _value_end(text, s)
        splicer = _Splicer(text, loads, dumps)
        out = text[:s] + splicer.value(s, e, new) + text[e:]
        if not same(loads(out), new):
            return None
        return out
    except (_Unkept, IndexError, ValueError):
        return None
