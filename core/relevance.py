"""Relevance (SPEC §5 steps 3–4, exact): query/entry terms and the score."""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Iterable

STOP_WORDS = frozenset(
    "a an and are as at be but by for from has have i if in into is it its of on or so that "
    "the then there these this to was were will with you your we our".split()
)

_WIDE, _WORD, _SEP = 0, 1, 2


@lru_cache(maxsize=65536)
def _kind(ch: str) -> int:
    if unicodedata.category(ch).startswith("L") and unicodedata.east_asian_width(ch) in ("W", "F"):
        return _WIDE
    if ch.isalnum() or ch == "_":
        return _WORD
    return _SEP


def terms(s: str) -> frozenset[str]:
    """NFKC + casefold; word runs (minus stop words) and wide runs (1 char, or bigrams)."""
    s = unicodedata.normalize("NFKC", s).casefold()
    out: set[str] = set()
    n = len(s)
    i = 0
    while i < n:
        kind = _kind(s[i])
        j = i + 1
        while j < n and _kind(s[j]) == kind:
            j += 1
        if kind == _WORD:
            run = s[i:j]
            if run not in STOP_WORDS:
                out.add(run)
        elif kind == _WIDE:
            if j - i == 1:
                out.add(s[i])
            else:
                out.update(s[k : k + 2] for k in range(i, j - 1))
        i = j
    return frozenset(out)


def entry_terms(text: str, section: str = "", name: str = "", description: str = "", tags: Iterable[str] = ()) -> frozenset[str]:
    """M of §5 step 4: the terms of the text, section, name, description and each tag."""
    result = set(terms(text))
    for part in (section, name, description, *tags):
        if part:
            result |= terms(part)
    return frozenset(result)


def score(query_terms: frozenset[str], memory_terms: frozenset[str]) -> float:
    if not query_terms:
        return 0.0
    return len(query_terms & memory_terms) / len(query_terms)
