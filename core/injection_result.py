"""What `inject` answers (SPEC §5's fields, `preview --json`): the text, the flags, and every
candidate, produced when asked for. The rule that fills it is `core.injection`; the candidates
come from what it decided (`core.injection.Plan`, read as `injection_runs.Decided`), their
counts from `injection_runs`, the JSON from `injection_json`. The last two are loaded when
first asked for: the hook, which needs only the text, never pays for them."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .candidates import Candidate
from .model import RetrievalStatus
from .paths import Problem

if TYPE_CHECKING:
    from .injection_runs import Decided

@dataclass
class InjectionResult:
    workspace: str
    query: str
    enabled: bool
    text: str = ""
    count: int = 0
    truncated: bool = False
    tokens: int = 0
    chars: int = 0
    retrieval_ms: float = 0.0
    disabled_reason: str | None = None
    budget: dict[str, int] = field(default_factory=dict)
    redacted: int = 0
    errors: list[Problem] = field(default_factory=list)
    enabled_why: str = ""
    included: list[Candidate] = field(default_factory=list)
    layer_budget: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # layer: (used, allowance, carry in)
    retrieval: RetrievalStatus | None = None  # §13, shown only when hybrid retrieval was asked for
    now: str | None = None  # §13 decay: the time ages were measured at (ISO), shown only with decay on
    files: tuple[str, ...] | None = None  # §16: the files in context, shown when given or looked for
    # §18, with decay on: id -> (strength, level) of every candidate, added to each in `preview --json`
    strengths: dict[str, tuple[float, str]] | None = None
    _plan: Decided | None = field(default=None, repr=False)
    _candidates: list[Candidate] | None = field(default=None, repr=False)
    _lazy: Callable[[], list[Candidate]] | None = field(default=None, repr=False)  # makes `_candidates` when asked
    _status_counts: dict[str, int] | None = field(default=None, repr=False)

    @property
    def injected(self) -> bool:
        return self.count > 0

    def iter_candidates(self) -> Iterator[Candidate]:
        """Every candidate in layer order then sort order (archived last in their layer),
        produced as needed: the first few cost little even when there are tens of thousands."""
        if self._candidates is None and self._lazy is not None:
            self._candidates, self._lazy = self._lazy(), None
        if self._candidates is not None:
            yield from self._candidates
        elif self._plan is not None:
            maker = self._plan.maker
            for view, pos, score, status, parts in self._plan.decisions():
                yield Candidate(view, pos, score, status, maker, parts)

    def status_counts(self) -> dict[str, int]:
        """How many candidates got each status (only those with any), as counting
        `iter_candidates()` would give, without producing the candidates."""
        if self._status_counts is None:
            if self._candidates is not None or self._plan is None:
                self._status_counts = dict(Counter(c.status for c in self.iter_candidates()))
            else:
                from .injection_runs import status_counts  # loaded when first asked for (see above)

                self._status_counts = status_counts(self._plan, self.included)
        return dict(self._status_counts)

    @property
    def candidates(self) -> list[Candidate]:
        if self._candidates is None:
            self._candidates = list(self.iter_candidates())
        return self._candidates

    def summary(self) -> str:
        """The fold title: `3 memories injected · 412/2000 tokens · truncated`."""
        if self.disabled_reason == "switch_off":
            return "memory is off for this workspace · `memtui enable` turns it on"
        if self.disabled_reason == "private":
            return "private mode: nothing is injected or recorded · `memtui private off` ends it"
        noun = "memory" if self.count == 1 else "memories"
        parts = [f"{self.count} {noun} injected", f"{self.tokens}/{self.budget.get('total', 0)} tokens"]
        if self.truncated:
            parts.append("truncated")
        if self.count == 0 and self.disabled_reason:
            parts.append(self.disabled_reason.replace("_", " "))
        return " · ".join(parts)

    def as_dict(self, candidates: bool = True) -> dict[str, object]:
        data: dict[str, object] = {
            "workspace": self.workspace,
            "query": self.query,
            "enabled": self.enabled,
            "injected": self.injected,
            "disabled_reason": self.disabled_reason,
            "count": self.count,
            "truncated": self.truncated,
            "tokens": self.tokens,
            "chars": self.chars,
            "retrieval_ms": round(self.retrieval_ms, 3),
            "budget": dict(self.budget),
            "redacted": self.redacted,
            "text": self.text,
            "errors": [p.as_dict() for p in self.errors],
        }
        if self.retrieval is not None:
            data["retrieval"] = self.retrieval
        if self.now is not None:
            data["now"] = self.now
        if self.files is not None:
            data["files"] = list(self.files)
        if candidates:
            data["candidates"] = [self._with_strength(c.as_dict()) for c in self.iter_candidates()]
        return data

    def _with_strength(self, candidate: dict[str, object]) -> dict[str, object]:
        """SPEC §18: a candidate's strength and level, after its own fields, when decay is on."""
        if self.strengths is not None:
            found = self.strengths.get(str(candidate["id"]))
            if found is not None:
                candidate["strength"], candidate["level"] = round(found[0], 4), found[1]
        return candidate

    def to_json(self) -> str:
        """`json.dumps(self.as_dict(), ensure_ascii=False)`, byte for byte; each candidate
        from the JSON its layer keeps ready around the score and status, when it does."""
        return "".join(self.json_pieces())

    def json_pieces(self) -> list[str]:
        """`to_json()` in pieces, to be written one after the other: tens of thousands of
        candidates make tens of megabytes, which are then never joined into one string.
        Everything is read before the list is returned (a damaged section raises here)."""
        if self.strengths is not None:  # §18: every candidate made whole (decay read every entry anyway)
            return [json.dumps(self.as_dict(), ensure_ascii=False)]
        from . import injection_json  # loaded when first asked for (see above)

        if self._candidates is None and self._plan is not None:
            injection_json.preload(self._plan)
        return list(injection_json.json_text(self.as_dict(candidates=False), self._ready_candidates(), self._plan))

    def json_bytes(self) -> Iterator[bytes]:
        """`to_json()` as UTF-8 (a lone surrogate as `surrogateescape` writes it), in pieces
        made as they are written: a layer's candidates kept as UTF-8 records are joined as
        bytes, never decoded, and never all held at once. What is saved is read (and checked:
        a damaged section raises) before this returns."""
        if self.strengths is not None:
            return iter([json.dumps(self.as_dict(), ensure_ascii=False).encode("utf-8", "surrogateescape")])
        from . import injection_json  # loaded when first asked for (see above)

        if self._candidates is None and self._plan is not None:
            injection_json.preload(self._plan)
        return injection_json.json_utf8(self.as_dict(candidates=False), self._ready_candidates(), self._plan)

    def _ready_candidates(self) -> Iterator[Candidate] | None:
        """The candidates one by one when they are made already (or there is no plan), else None."""
        if self._candidates is not None or self._plan is None:
            return self.iter_candidates()
        return None
