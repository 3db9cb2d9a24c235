"""The candidates of an injection (SPEC §5): a layer's, as the rule reads them
(`LayerCandidates`), and what the injection says of each (`preview --json`'s `candidates`):
the line made of it (`Made`), what it shows (`Shown`), and its fate (`Candidate`). The rule
that gives the fate is `core.injection`; this module only holds the vocabulary, so that the
rule, the JSON writer and the store can all speak of it without importing each other."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

from .model import CandidateStatus, Entry
from .scope import reason as scope_reason

if TYPE_CHECKING:
    from .focused import Why
    from .injection import LineMaker

ARCHIVED, SUPERSEDED, OUT_OF_SCOPE = CandidateStatus.ARCHIVED, CandidateStatus.SUPERSEDED, CandidateStatus.OUT_OF_SCOPE


class Made(NamedTuple):
    """A line made of an entry's text (steps 8 and 9). The prepared index saves it as a plain
    tuple (marshal takes no subclass) and gives it its names back when it reads it."""

    line: str
    clipped: bool
    redacted: int  # secrets redacted in it
    tokens: int


class Shown(NamedTuple):
    """What a candidate shows of its entry (`preview --json`), readable without the entry.
    Saved as a plain tuple, like `Made`."""

    id: str
    source: str  # the entry's `source_ref`
    importance: str
    updated_at: str  # ISO


class LayerCandidates(Protocol):
    """One layer's candidates as the rule reads them. Positions `0 .. n_active-1` are the
    active entries in base order (`base_key`), `n_active .. size-1` the archived ones."""

    layer: str
    n_active: int
    size: int

    @property
    def rank(self) -> Sequence[int]:
        """The importance rank of each position."""
        ...

    def shared(self, q: frozenset[str]) -> Mapping[int, int]:
        """`|Q ∩ M|` of each active position sharing a term with the query (the others share none)."""
        ...

    def in_order(self, shared: Mapping[int, int], scored_only: bool) -> Iterator[tuple[int, Sequence[int]]]:
        """Active positions in step-6 order (importance, score descending, base order), as runs
        of positions that share as many terms with the query: (`|Q ∩ M|`, positions). With
        `scored_only`, only the positions in `shared`."""
        ...

    def archived_terms(self, pos: int) -> frozenset[str]: ...

    def scoped(self) -> Mapping[int, Sequence[str]]:
        """The active positions whose entry's file is scoped (SPEC §16), with its globs."""
        ...

    def positions_of(self, ids: frozenset[str]) -> frozenset[int]:
        """The active positions whose entry id is in `ids` (archived entries stay archived)."""
        ...

    def review_fields(self, pos: int) -> tuple[str, str, str, str]:
        """(layer, id, text, source) of a position, for the review check (SPEC §12)."""
        ...

    def entry(self, pos: int) -> Entry: ...

    def shown(self, pos: int) -> Shown:
        """What a candidate shows of its entry."""
        ...

    def made(self, pos: int, maker: LineMaker) -> Made: ...


@runtime_checkable
class CountedShared(Protocol):
    """A layer's `shared` answer that counts itself (the prepared index's bitmaps,
    `LevelCounts`): the largest `|Q ∩ M|` and how many positions have each, without a dict."""

    def top(self) -> int: ...

    def histogram(self) -> dict[int, int]: ...


def inactive_status(view: LayerCandidates, pos: int) -> CandidateStatus:
    """Step 2: a candidate that is not active is listed `archived`, or `superseded` when §17's
    `supersede` replaced it."""
    return SUPERSEDED if view.entry(pos).superseded_by else ARCHIVED


def candidate_fields(entry_id: str, layer: str, source: str, score: float | None, status: str,
                     made: Made, importance: str, updated_at: str, parts: tuple[float, float] | None = None) -> dict[str, object]:
    """A candidate as `preview --json` prints it (SPEC §5): the one definition. In hybrid
    retrieval (§13) `parts` = (keyword, semantic) follow the score."""
    line, clipped, _, tokens = made  # unpacked: a saved (plain) tuple reads the same
    if parts is not None:
        return {"id": entry_id, "layer": layer, "source": source, "score": score, "keyword": parts[0],
                "semantic": parts[1], "status": status, "clipped": clipped, "tokens": tokens, "line": line,
                "importance": importance, "updated_at": updated_at}
    return {"id": entry_id, "layer": layer, "source": source, "score": score, "status": status,
            "clipped": clipped, "tokens": tokens, "line": line, "importance": importance, "updated_at": updated_at}


class Candidate:
    """One entry's fate in an injection: where it is in its layer, its score and status. The
    entry, its line and cost are looked up in the layer when asked for."""

    __slots__ = ("view", "pos", "score", "status", "_maker", "parts", "why")

    def __init__(self, view: LayerCandidates, pos: int, score: float, status: CandidateStatus, maker: LineMaker,
                 parts: tuple[float, float] | None = None, why: Why | None = None):
        self.view = view
        self.pos = pos
        self.score = score
        self.status = status
        self._maker = maker
        self.parts = parts  # (keyword, semantic) in hybrid retrieval (§13), else None
        self.why = why  # the parts of the score in focused injection (§15), else None

    @property
    def entry(self) -> Entry:
        return self.view.entry(self.pos)

    @property
    def id(self) -> str:
        """The entry's id, read without making the entry."""
        return self.view.shown(self.pos).id

    @property
    def source(self) -> str:
        """The entry's `source_ref` (`path:line`, `conversation:<cid>/<id>`), read without making the entry."""
        return self.view.shown(self.pos).source

    @property
    def layer(self) -> str:
        return self.view.layer

    @property
    def line(self) -> str:
        return self.view.made(self.pos, self._maker).line

    @property
    def clipped(self) -> bool:
        return self.view.made(self.pos, self._maker).clipped

    @property
    def redacted(self) -> int:
        return self.view.made(self.pos, self._maker).redacted

    @property
    def tokens(self) -> int:
        return self.view.made(self.pos, self._maker).tokens

    @property
    def reason(self) -> str | None:
        """Why an `out_of_scope` candidate is left out: its file's globs (SPEC §16); else None."""
        if self.status != OUT_OF_SCOPE:
            return None
        return scope_reason(self.view.scoped().get(self.pos, ()))

    def as_dict(self) -> dict[str, object]:
        shown = self.view.shown(self.pos)
        fields = candidate_fields(shown.id, self.view.layer, shown.source, self.score, self.status,
                                  self.view.made(self.pos, self._maker), shown.importance, shown.updated_at, self.parts)
        if self.status == OUT_OF_SCOPE:
            fields["reason"] = self.reason
        if self.why is not None:
            fields["why"] = self.why.as_dict()
        return fields
