"""`preview --json` written fast: `json.dumps(result.as_dict(), ensure_ascii=False)`, byte for
byte, in pieces. Tens of thousands of candidates make tens of megabytes: they are written a run
at a time (consecutive candidates of one layer with one score and status, `injection_runs`),
each candidate's JSON taken ready-made from its layer where the layer keeps it (`ReadyJson`,
the prepared index), around the score and status the run gives. Held equal to `json.dumps` by
the tests (tests/core/test_injection.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

from .candidates import OUT_OF_SCOPE, Candidate
from .injection_runs import runs

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .candidates import LayerCandidates
    from .injection import LineMaker
    from .injection_runs import Decided
    from .model import CandidateStatus


@runtime_checkable
class ReadyJson(Protocol):
    """A layer that keeps its candidates' JSON ready: each candidate's JSON before its score
    and after its status (`core.store.layer_index.json_pieces`)."""

    def candidate_jsons(self, positions: Sequence[int], maker: LineMaker) -> Iterable[tuple[str, str]] | None: ...

    def candidate_json_bytes(self, positions: Sequence[int], maker: LineMaker, middle: bytes) -> Iterable[bytes] | None:
        """`", ".join(before + middle + after)` of `positions`' JSON pieces, UTF-8, in pieces
        (else None)."""
        ...

    def preload(self, maker: LineMaker, as_json: bool) -> None:
        """Read at once what is saved of every candidate's JSON."""
        ...


def preload(plan: Decided) -> None:
    """Every layer that keeps JSON ready reads it now (a damaged section raises here)."""
    for view in plan.views():
        if isinstance(view, ReadyJson):
            view.preload(plan.maker, as_json=True)


def json_text(head: dict[str, object], candidates: Iterable[Candidate] | None, plan: Decided | None) -> Iterator[str]:
    """The pieces of `json.dumps({**head, "candidates": [...]}, ensure_ascii=False)`. The
    candidates are `candidates` when given, else those `plan` gives in runs."""
    return cast(Iterator[str], _parts(head, candidates, plan, utf8=False))


def json_utf8(head: dict[str, object], candidates: Iterable[Candidate] | None, plan: Decided | None) -> Iterator[bytes]:
    """`json_text` as UTF-8 (a lone surrogate as `surrogateescape` writes it); the records a
    layer keeps as UTF-8 are joined as bytes, never decoded."""
    return cast(Iterator[bytes], _parts(head, candidates, plan, utf8=True))


def _parts(head: dict[str, object], candidates: Iterable[Candidate] | None, plan: Decided | None,
           utf8: bool) -> Iterator[str | bytes]:
    """The pieces, each `str`, or (`utf8`) each `bytes`."""
    def text(piece: str) -> str | bytes:
        return piece.encode("utf-8", "surrogateescape") if utf8 else piece

    sep = text(", ")
    start = json.dumps(head, ensure_ascii=False)
    yield text(start[:-1] + ', "candidates": [')
    first = True
    if candidates is not None or plan is None:
        for c in candidates or ():
            if not first:
                yield sep
            first = False
            yield text(json.dumps(c.as_dict(), ensure_ascii=False))
        yield text("]}")
        return
    maker = plan.maker
    scores: dict[float, str] = {}  # few distinct scores: format each once
    ready_in: dict[int, bool] = {}  # id(view) -> whether it keeps JSON ready
    for view, run, score, status, parts in runs(plan):
        if not run:
            continue
        shown = scores.get(score)
        if shown is None:
            shown = scores[score] = json.dumps(score)
        if not first:
            yield sep
        first = False
        ready_here = ready_in.get(id(view))
        if ready_here is None:
            ready_here = ready_in[id(view)] = isinstance(view, ReadyJson)
        if not ready_here or status == OUT_OF_SCOPE:  # (an out-of-scope candidate has its reason too)
            yield text(_each(view, run, score, status, maker, parts))
            continue
        ready_view = cast(ReadyJson, view)  # (known above, without asking again)
        middle = shown + ', "status": "' + status
        if parts is None and utf8:  # each candidate's JSON around `middle`, as bytes
            ready_bytes = ready_view.candidate_json_bytes(run, maker, middle.encode())
            if ready_bytes is not None:
                yield from ready_bytes
                continue
        ready = ready_view.candidate_jsons(run, maker)
        if ready is None:
            yield text(_each(view, run, score, status, maker, parts))
        elif parts is None:  # each candidate: its JSON before the score, score and status, its JSON after
            yield text(", ".join(map(middle.join, ready)))
        else:  # hybrid retrieval: the two scores follow (`candidate_fields`)
            middle = f'{shown}, "keyword": {json.dumps(parts[0])}, "semantic": {json.dumps(parts[1])}, "status": "{status}'
            yield text(", ".join(map(middle.join, ready)))
    yield text("]}")


def _each(view: LayerCandidates, run: Sequence[int], score: float, status: CandidateStatus, maker: LineMaker,
          parts: tuple[float, float] | None) -> str:
    """A run's candidates made one by one, each `json.dumps`ed."""
    return ", ".join(json.dumps(Candidate(view, pos, score, status, maker, parts).as_dict(), ensure_ascii=False)
                     for pos in run)
