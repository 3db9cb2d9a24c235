"""An entry as the prepared index saves it: a row (a plain tuple of `Entry`'s fields but its
terms, the path as a string) and what a candidate shows of it (`Shown`), in the plain types
marshal takes, with the position of each field in a row named."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import Any, overload

from ..injection import Shown
from ..model import Entry

# `Made` and `Shown` as saved (marshal takes plain tuples only); `Made._make` and `Shown._make`
# give them their names back when read.
SavedMade = tuple[str, bool, int, int]
SavedShown = tuple[str, str, str, str]

# An entry as a plain tuple (for the prepared index): Entry's fields but `terms`, path as a string.
ENTRY_FIELDS = tuple(f.name for f in dataclasses.fields(Entry) if f.name != "terms")
FIELD_AT = {name: i for i, name in enumerate(ENTRY_FIELDS)}  # a field's position in a row
PATH_AT = FIELD_AT["path"]
TEXT_AT = FIELD_AT["text"]
ID_AT = FIELD_AT["id"]
SOURCE_AT = FIELD_AT["source"]
EXPIRES_AT = FIELD_AT["expires"]
PINNED_AT = FIELD_AT["pinned"]
LAYER_AT = FIELD_AT["layer"]
TAGS_AT = FIELD_AT["tags"]
PATHS_AT = FIELD_AT["paths"]
IMPORTANCE_AT = FIELD_AT["importance"]
STATUS_AT = FIELD_AT["status"]
# an entry's fields and a row's, path apart (compared in C: `LayerIndex.holds`)
FIELDS_BUT_PATH = attrgetter(*(name for name in ENTRY_FIELDS if name != "path"))
ROW_BUT_PATH = itemgetter(*(i for i, name in enumerate(ENTRY_FIELDS) if name != "path"))

_ALL_FIELDS = attrgetter(*ENTRY_FIELDS)
_ROW_TYPES = frozenset({str, int, float, bool, type(None), tuple})
STR_TYPES = frozenset({str})


def entry_row(entry: Entry) -> tuple[Any, ...]:
    row = list(_ALL_FIELDS(entry))
    row[PATH_AT] = None if entry.path is None else str(entry.path)
    row[LAYER_AT] = plain(row[LAYER_AT])  # the Layer enum
    row[IMPORTANCE_AT], row[STATUS_AT] = plain(row[IMPORTANCE_AT]), plain(row[STATUS_AT])  # and these
    tags = row[TAGS_AT]
    if type(tags) is not tuple or not STR_TYPES.issuperset(map(type, tags)):
        row[TAGS_AT] = plain(tags)
    if not _ROW_TYPES.issuperset(map(type, row)):  # anything else not plain (checked in C)
        row = [plain(value) for value in row]
    return tuple(row)


@overload
def plain(value: str) -> str: ...
@overload
def plain(value: object) -> object: ...
def plain(value: object) -> object:
    """str subclasses (the Layer enum) as plain str, tuples of them too: marshal takes only plain types."""
    if isinstance(value, str):
        return str.__str__(value) if type(value) is not str else value
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return value


def scoped_rows(rows: Sequence[tuple[Any, ...]], n_active: int) -> dict[int, tuple[str, ...]]:
    """The active positions of scoped entries (SPEC §16) and their globs, from entry rows."""
    return {pos: tuple(row[PATHS_AT]) for pos, row in enumerate(rows[:n_active]) if row[PATHS_AT]}


def shown_of(entry: Entry) -> Shown:
    return Shown(plain(entry.id), plain(entry.source_ref), plain(entry.importance), entry.updated_iso)
