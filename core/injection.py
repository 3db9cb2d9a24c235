"""The injection (SPEC §5, exact): what Muse appends to its system prompt for a message.

One function decides it — `inject()` over a loaded store — and one result type carries it
to every face: `memtui preview`, the TUI's preview pane, and Muse itself.
"""

from __future__ import annotations

import logging
import math
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from .models import IMPORTANCE_RANK, Entry
from .paths import Paths, Problem
from .relevance import score as relevance_score
from .relevance import terms
from .secrets import redact
from .settings import Settings, load_settings

log = logging.getLogger("memtui.injection")

LAYER_ORDER = ("user", "project", "conversation")
HEADERS = {"user": "### User Preferences", "project": "### Project Knowledge", "conversation": "### Relevant Context"}
TITLE = "## Memory"
ELLIPSIS = "…"


def est(line: str) -> int:
    """Token estimate of one line: wide characters count 1, the rest 1 per 4 (rounded up)."""
    wide = 0
    for ch in line:
        if unicodedata.east_asian_width(ch) in ("W", "F"):
            wide += 1
    return wide + math.ceil((len(line) - wide) / 4)


def block_cost(text: str) -> int:
    return sum(est(line) for line in text.split("\n")) if text else 0


@dataclass
class Candidate:
    entry: Entry
    score: float
    status: str  # included | below_gate | max_items | budget | archived
    line: str
    clipped: bool
    tokens: int
    redacted: int

    @property
    def layer(self) -> str:
        return self.entry.layer

    def as_dict(self) -> dict:
        e = self.entry
        return {
            "id": e.id,
            "layer": e.layer,
            "source": e.source_ref,
            "score": self.score,
            "status": self.status,
            "clipped": self.clipped,
            "tokens": self.tokens,
            "line": self.line,
            "importance": e.importance,
            "updated_at": e.updated_iso,
        }


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
    candidates: list[Candidate] = field(default_factory=list)
    enabled_why: str = ""

    @property
    def injected(self) -> bool:
        return self.count > 0

    def summary(self) -> str:
        """The fold title: `3 memories injected · 412/2000 tokens · truncated`."""
        if self.disabled_reason == "switch_off":
            return "memory is off for this workspace · `memtui enable` turns it on"
        noun = "memory" if self.count == 1 else "memories"
        parts = [f"{self.count} {noun} injected", f"{self.tokens}/{self.budget.get('total', 0)} tokens"]
        if self.truncated:
            parts.append("truncated")
        if self.count == 0 and self.disabled_reason:
            parts.append(self.disabled_reason.replace("_", " "))
        if self.redacted:
            parts.append(f"{self.redacted} redacted")
        return " · ".join(parts)

    def as_dict(self) -> dict:
        return {
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
            "candidates": [c.as_dict() for c in self.candidates],
        }


def make_line(text: str, max_chars: int, redact_secrets: bool) -> tuple[str, bool, int]:
    """§5 step 8: one line, secrets redacted, clamped to max_chars code points."""
    one_line = " ".join(text.split())
    redacted = 0
    if redact_secrets:
        one_line, redacted = redact(one_line)
    clipped = len(one_line) > max_chars
    if clipped:
        one_line = one_line[: max_chars - 1] + ELLIPSIS
    return "- " + one_line, clipped, redacted


def sort_key(entry: Entry, score: float):
    """§5 step 6: importance, score desc, updated_at desc, then path + position (or id)."""
    if entry.layer == "conversation":
        place: tuple = (entry.id,)
    else:
        place = (entry.rel_path, entry.line_start)
    return (IMPORTANCE_RANK.get(entry.importance, 1), -score, -entry.updated_at, place)


def inject(layers: dict[str, list[Entry]], settings: Settings, query: str, workspace: str = "",
           failed_layers: frozenset[str] = frozenset(), errors: list[Problem] | None = None) -> InjectionResult:
    """The injection for `query` over already-loaded layers (SPEC §5 steps 1–12)."""
    started = time.perf_counter()
    result = InjectionResult(workspace=workspace, query=query, enabled=settings.enabled,
                             budget=dict(settings.budget), errors=list(errors or []),
                             enabled_why=settings.enabled_why)
    if not settings.enabled:
        result.disabled_reason = "switch_off"
        return _finish(result, started)

    q = terms(query)
    remaining = settings.budget["total"] - est(TITLE)
    carry = 0
    blocks: list[str] = [TITLE]
    any_candidates = False
    any_passing = False
    for layer in LAYER_ORDER:
        active: list[tuple[Entry, float]] = []
        archived: list[tuple[Entry, float]] = []
        for entry in layers.get(layer, ()):
            s = relevance_score(q, entry.terms)
            (archived if entry.archived else active).append((entry, s))
        active.sort(key=lambda pair: sort_key(pair[0], pair[1]))
        archived.sort(key=lambda pair: sort_key(pair[0], pair[1]))
        any_candidates |= bool(active)
        gate = settings.gate.get(layer, 0.0)
        limit = settings.max_items.get(layer)
        cap = settings.budget.get(layer, 0)
        allowance = min(cap + carry, remaining)
        used = 0
        passed = 0
        fits = True
        lines: list[str] = []
        for entry, s in active:
            line, clipped, redacted = make_line(entry.text, settings.max_item_chars, settings.redact_secrets)
            cost = est(line)
            if s < gate:
                status = "below_gate"
            else:
                any_passing = True
                passed += 1
                if limit is not None and passed > limit:
                    status = "max_items"
                elif fits:
                    extra = cost + (est(HEADERS[layer]) if not lines else 0)
                    if used + extra <= allowance:
                        used += extra
                        lines.append(line)
                        status = "included"
                        result.count += 1
                        result.redacted += redacted
                        result.truncated |= clipped
                    else:
                        fits = False
                        status = "budget"
                        result.truncated = True
                else:
                    status = "budget"
            result.candidates.append(Candidate(entry, s, status, line, clipped, cost, redacted))
        for entry, s in archived:
            line, clipped, redacted = make_line(entry.text, settings.max_item_chars, settings.redact_secrets)
            result.candidates.append(Candidate(entry, s, "archived", line, clipped, est(line), redacted))
        if lines:
            blocks += ["", HEADERS[layer], *lines]
        carry = allowance - used
        remaining -= used

    if result.count:
        result.text = "\n".join(blocks)
        result.tokens = block_cost(result.text)
        result.chars = len(result.text)
    elif failed_layers >= set(LAYER_ORDER):
        result.disabled_reason = "query_failed"
    elif not any_candidates:
        result.disabled_reason = "empty_result"
    elif not any_passing:
        result.disabled_reason = "low_relevance"
    else:
        result.disabled_reason = "over_budget"
    return _finish(result, started)


def _finish(result: InjectionResult, started: float) -> InjectionResult:
    result.retrieval_ms += (time.perf_counter() - started) * 1000
    log.info(
        "injection count=%d chars=%d tokens=%d retrieval_ms=%.2f disabled_reason=%s",
        result.count, result.chars, result.tokens, result.retrieval_ms, result.disabled_reason,
    )
    return result


def inject_from_store(store, settings: Settings, query: str) -> InjectionResult:
    """The injection over a loaded MemoryStore (the TUI and the CLI both call this)."""
    layers = {layer: store.entries(layer) for layer in LAYER_ORDER}
    errors = list(settings.problems) + store.problems
    return inject(layers, settings, query, workspace=str(store.paths.workspace),
                  failed_layers=frozenset(store.layer_errors), errors=errors)


def build_injection(workspace: str | Path | None, query: str, home: str | Path | None = None) -> InjectionResult:
    """What Muse appends to its system prompt for `query` in `workspace` (SPEC §5)."""
    from .store import MemoryStore

    started = time.perf_counter()
    paths = Paths.resolve(home=home, workspace=workspace)
    settings = load_settings(paths)
    if not settings.enabled:
        return inject({}, settings, query, workspace=str(paths.workspace), errors=settings.problems)
    store = MemoryStore(paths, index=False)
    try:
        store.load()
        result = inject_from_store(store, settings, query)
    finally:
        store.close()
    result.retrieval_ms = (time.perf_counter() - started) * 1000
    return result
