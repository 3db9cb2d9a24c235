"""Relevance (SPEC §5 steps 3–4, exact): query/entry terms and the score."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, repeat
from typing import TYPE_CHECKING

from .model import Layer

if TYPE_CHECKING:
    from .model import Entry

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


_WORD_RUN = re.compile(r"\w+")  # \w is exactly `ch.isalnum() or ch == "_"` in Python's re
_LOWER_WORD_RUN = re.compile(r"[a-z0-9_]+")  # the same runs in lower-cased ASCII text, found faster


# CJK Unified Ideographs: every one is a wide letter (`_kind` says _WIDE; tests/core/test_relevance.py
# checks each against `_kind`), so a run of them alone is split into bigrams without asking per character.
_IDEOGRAPHS = re.compile("[\u4e00-\u9fff]+")


def terms(s: str) -> frozenset[str]:
    """NFKC + casefold; word runs (minus stop words) and wide runs (1 char, or bigrams)."""
    if s.isascii():  # NFKC leaves ASCII alone and casefold is lower()
        return frozenset(_LOWER_WORD_RUN.findall(s.lower())).difference(STOP_WORDS)
    s = unicodedata.normalize("NFKC", s).casefold()
    out: set[str] = set()
    for run in _WORD_RUN.findall(s):
        if run.isascii():
            if run not in STOP_WORDS:
                out.add(run)
        elif _IDEOGRAPHS.fullmatch(run):  # one wide run: 1 char, or its bigrams
            if len(run) == 1:
                out.add(run)
            else:
                out.update(map(str.__add__, run, run[1:]))
        else:
            _split_run(run, out)
    return frozenset(out)


def terms_many(texts: Sequence[str]) -> list[frozenset[str]]:
    """`[terms(s) for s in texts]`, the ASCII texts' terms made in bulk (lower-cased, split and
    their stop words dropped by C loops, with no Python call per text)."""
    plain = list(map(str.isascii, texts))
    words = map(frozenset, map(_LOWER_WORD_RUN.findall, map(str.lower, compress(texts, plain))))
    made = map(frozenset.difference, words, repeat(STOP_WORDS))
    # the others (NFKC, casefold and wide runs) one by one
    return [next(made) if ascii else terms(text) for text, ascii in zip(texts, plain)]


_part_terms = lru_cache(maxsize=4096)(terms)  # tags, sections, names: few distinct values, many entries


def _split_run(run: str, out: set[str]) -> None:
    """A run of word characters holding non-ASCII: split it into wide and word sub-runs."""
    n = len(run)
    i = 0
    while i < n:
        kind = _kind(run[i])
        j = i + 1
        while j < n and _kind(run[j]) == kind:
            j += 1
        if kind == _WIDE:
            if j - i == 1:
                out.add(run[i])
            else:
                out.update(run[k : k + 2] for k in range(i, j - 1))
        else:
            word = run[i:j]
            if word not in STOP_WORDS:
                out.add(word)
        i = j


def entry_terms(text: str, section: str = "", name: str = "", description: str = "", tags: Iterable[str] = ()) -> frozenset[str]:
    """M of §5 step 4: the terms of the text, section, name, description and each tag."""
    result = terms(text)
    extra = [part for part in (section, name, description, *tags) if part]
    if not extra:
        return result
    return result.union(*map(_part_terms, extra))


class _TagTerms(dict[tuple[str, ...], frozenset[str]]):
    """A tag tuple's terms, made once per distinct tuple (rows share a few)."""

    def __missing__(self, tags: tuple[str, ...]) -> frozenset[str]:
        found = self[tags] = frozenset().union(*map(_part_terms, filter(None, tags)))
        return found


def entry_terms_many(texts: Sequence[str], tags: Sequence[tuple[str, ...]]) -> list[frozenset[str]]:
    """`[entry_terms(text, tags=t) for text, t in zip(texts, tags)]` (a conversation row's M), in bulk."""
    return list(map(frozenset.union, terms_many(texts), map(_TagTerms().__getitem__, tags)))


def terms_of(entry: Entry) -> frozenset[str]:
    """An entry's M: its `terms`, or for a conversation entry made without them (a loaded
    store keeps its rows' entries without their terms) the terms of its text and tags, as
    `store.rows.conversation_entry` makes them. A Markdown entry always carries its own."""
    if entry.terms or entry.layer != Layer.CONVERSATION:
        return entry.terms
    return entry_terms(entry.text, tags=entry.tags)


@dataclass(frozen=True, slots=True)
class Focus:
    """What focused injection (SPEC §15) needs to score only the entries sharing a term with
    the message: the positions whose entry is pinned by its file, and whether every entry's
    indexed terms hold those of its section, name, description and tags as well as its text
    (focused M reads all five; the postings then find every entry holding a term)."""

    pinned: frozenset[int]
    covers: bool


def focus_of(entries: Iterable[Entry]) -> Focus:
    """`Focus` of a layer's entries in position order."""
    pinned: list[int] = []
    covers = True
    for pos, e in enumerate(entries):
        if e.pinned:
            pinned.append(pos)
        # (a conversation entry made without terms: `terms_of` makes them from its text and tags)
        made_whole = not e.terms and e.layer == Layer.CONVERSATION and not (e.section or e.name or e.description)
        if covers and not made_whole and (e.section or e.name or e.description or e.tags):
            covers = entry_terms("", e.section, e.name, e.description, e.tags) <= terms_of(e)
    return Focus(frozenset(pinned), covers)


def score(query_terms: frozenset[str], memory_terms: frozenset[str]) -> float:
    """§5 step 4: `|Q ∩ M| / |Q|`, or 0 when `Q` is empty."""
    return share(len(query_terms & memory_terms), len(query_terms))


def share(shared: int, n_query: int) -> float:
    """The score from its parts: `shared` = `|Q ∩ M|`, `n_query` = `|Q|`."""
    return shared / n_query if n_query else 0.0
