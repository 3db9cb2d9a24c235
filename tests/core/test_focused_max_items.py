"""Focused injection with max items 0 (F9, `memory.maxItems`): candidates pass F7 and are all
`max_items`, so nothing is injected because of the cap, not because nothing was relevant
(SPEC §5 step 12: `low_relevance` only when all were below the gate). A narrowed layer (read
through its postings) says the same as one scored entry by entry."""

from __future__ import annotations

from memtui.core.injection import inject
from memtui.core.model import LAYERS, Entry
from memtui.core.relevance import entry_terms
from memtui.core.settings import Settings


def _entries() -> dict[str, list[Entry]]:
    texts = ["vitest runs the unit tests", "postgres pool size is small", "deploy with the cache warm"]
    return {"user": [], "conversation": [],
            "project": [Entry(id=f"p{i}", layer="project", text=t, rel_path="context.md", line_start=i + 1,
                              terms=entry_terms(t)) for i, t in enumerate(texts)]}


def test_a_cap_of_zero_is_over_budget_whether_the_layer_is_narrowed_or_not():
    s = Settings(enabled=True, injection="focused")
    s.max_items = {layer: 0 for layer in LAYERS}
    plain = inject(_entries(), s, "vitest unit tests")
    narrowed = inject(_entries(), s, "vitest unit tests", narrow_min=0)
    assert narrowed._lazy is not None  # read through the postings
    assert plain.count == narrowed.count == 0
    assert [c.status for c in plain.candidates][:1] == [c.status for c in narrowed.candidates][:1] == ["max_items"]
    assert plain.disabled_reason == "over_budget"
    assert narrowed.disabled_reason == plain.disabled_reason
