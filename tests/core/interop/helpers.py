from __future__ import annotations

from memtui.core.interop import Memory


def view(m: Memory) -> tuple:
    """What a reader decides about a memory (not where or when the test copied the file)."""
    return (m.layer, m.category, m.tags, m.section, m.name, m.description, m.text, m.extra)


def by_text(memories: list[Memory]) -> dict[str, Memory]:
    return {m.text: m for m in memories}
