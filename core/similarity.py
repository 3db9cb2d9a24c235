"""The one near-duplicate rule (`remember`, `n` in the TUI, import, the MCP tool, the
doctor): rapidfuzz's ratio of the casefolded, whitespace-collapsed texts, at or above
DUPLICATE_SCORE."""

from __future__ import annotations

from collections.abc import Iterable

from .model import Entry

DUPLICATE_SCORE = 90.0


def normalise_for_duplicates(text: str) -> str:
    return " ".join(text.casefold().split())


def near_duplicate(entries: Iterable[Entry], text: str) -> Entry | None:
    """The first of `entries` whose text is a near-duplicate of `text` (rapidfuzz ratio of the
    casefolded, whitespace-collapsed texts >= DUPLICATE_SCORE), or None. The one rule for
    `remember`, `n` in the TUI, import, the MCP tool and the doctor."""
    from rapidfuzz import fuzz, process

    pool = list(entries)
    if not pool:
        return None
    choices = [normalise_for_duplicates(e.text) for e in pool]
    best = process.extractOne(normalise_for_duplicates(text), choices, scorer=fuzz.ratio,
                              score_cutoff=DUPLICATE_SCORE)
    return pool[best[2]] if best else None
