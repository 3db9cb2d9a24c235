"""A candidate's JSON as `preview --json` writes it (`injection.candidate_fields`, as
`json.dumps(..., ensure_ascii=False)` writes it), made once per entry and kept in two
pieces, before its score and after its status, so a query only writes those two between
them; and the same pieces as the UTF-8 records the prepared index saves and joins as bytes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from operator import itemgetter

from ..injection import Made, Shown, candidate_fields
from .entry_rows import STR_TYPES, SavedMade, SavedShown, plain

_SPLIT_AT = ', "score": null, "status": "'
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # what json.dumps(..., ensure_ascii=False) makes, once
_QUOTE = json.encoder.encode_basestring  # how that encoder writes a str (the C one when built)


def json_pieces(layer: str, shown: Shown | SavedShown, made: Made | SavedMade) -> tuple[str, str]:
    """A candidate's JSON (`injection.candidate_fields`, as `json.dumps(..., ensure_ascii=False)`
    writes it) before its score and after its status. Every `"` inside a JSON string is
    escaped, so the first unescaped `, "score": ` is the key's. `shown` and `made` may be
    saved (plain) tuples: they are unpacked."""
    entry_id, source, importance, updated = shown
    line, clipped, _, tokens = made
    layer = plain(layer)
    if STR_TYPES.issuperset(map(type, (entry_id, layer, source, importance, updated, line))) \
            and type(clipped) is bool and type(tokens) is int:
        # the fields in `candidate_fields`' order, each written as the encoder writes it
        return (f'{{"id": {_QUOTE(entry_id)}, "layer": {_QUOTE(layer)}, "source": {_QUOTE(source)}, "score": ',
                f'", "clipped": {"true" if clipped else "false"}, "tokens": {tokens}, "line": {_QUOTE(line)}, '
                f'"importance": {_QUOTE(importance)}, "updated_at": {_QUOTE(updated)}}}')
    whole = _ENCODE(candidate_fields(entry_id, layer, source, None, "", Made._make(made), importance, updated))
    at = whole.index(_SPLIT_AT)
    return whole[: at + len(', "score": ')], whole[at + len(_SPLIT_AT):]


RECORD_SEP = b", "  # ends each saved JSON record: the separator between two candidates
RUN_BATCH = 8192  # candidates joined into one piece of `preview --json`


def json_record(pieces: tuple[str, str]) -> bytes:
    """A candidate's two JSON pieces (`json_pieces`) as one UTF-8 record: joined by a NUL
    (never in JSON text: control characters are escaped) and followed by `RECORD_SEP`;
    UnicodeEncodeError for a lone surrogate."""
    return pieces[0].encode() + b"\x00" + pieces[1].encode() + RECORD_SEP


def split_record(record: bytes | memoryview) -> tuple[str, str]:
    """`json_record`'s pieces again."""
    before, after = bytes(record[:-len(RECORD_SEP)]).decode().split("\x00")
    return before, after


def json_run(records: Callable[[Sequence[int]], list[bytes | memoryview]], positions: Sequence[int],
             middle: bytes) -> Iterator[bytes]:
    """`", ".join(before + middle + after)` of the candidates at `positions`, UTF-8, from
    their records (`records` gives those of some positions), in pieces of `RUN_BATCH`
    candidates (`middle`: the score and status between a candidate's pieces)."""
    for i in range(0, len(positions), RUN_BATCH):
        part = b"".join(records(positions[i:i + RUN_BATCH])).replace(b"\x00", middle)
        yield part if i + RUN_BATCH < len(positions) else part[:-len(RECORD_SEP)]


def json_pieces_many(layer: str, shown: Sequence[Shown | SavedShown], made: Sequence[Made | SavedMade]) -> list[tuple[str, str]]:
    """`[json_pieces(layer, s, m) for s, m in zip(shown, made)]`: when every field is of the
    type the encoder writes as `json_pieces` does (checked over whole columns, in C), written
    without a check per candidate, the layer's own JSON once."""
    quote, layer = _QUOTE, plain(layer)
    if type(layer) is str and STR_TYPES.issuperset(map(type, chain.from_iterable(shown))) \
            and STR_TYPES.issuperset(map(type, map(itemgetter(0), made))) \
            and {bool}.issuperset(map(type, map(itemgetter(1), made))) and {int}.issuperset(map(type, map(itemgetter(3), made))):
        lay = quote(layer)
        return [(f'{{"id": {quote(entry_id)}, "layer": {lay}, "source": {quote(source)}, "score": ',
                 f'", "clipped": {"true" if clipped else "false"}, "tokens": {tokens}, "line": {quote(line)}, '
                 f'"importance": {quote(importance)}, "updated_at": {quote(updated)}}}')
                for (entry_id, source, importance, updated), (line, clipped, _, tokens) in zip(shown, made)]
    return [json_pieces(layer, s, m) for s, m in zip(shown, made)]

