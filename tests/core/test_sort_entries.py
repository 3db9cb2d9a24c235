"""actions.sort_entries: panes sorted by injection history (SPEC §11)."""

from __future__ import annotations

import pytest

from memtui.core import actions
from memtui.core.model import Entry


def entries(*ids: str) -> list[Entry]:
    return [Entry(id=i, layer="user", text=f"memory {i}") for i in ids]


def test_orders():
    es = entries("a", "b", "c", "d")
    stats = {"b": (2, 500), "c": (5, 100), "d": (2, 900)}
    assert [e.id for e in actions.sort_entries(es, stats, "file")] == ["a", "b", "c", "d"]
    assert [e.id for e in actions.sort_entries(es, stats, "most")] == ["c", "b", "d", "a"]  # ties keep file order
    assert [e.id for e in actions.sort_entries(es, stats, "last")] == ["d", "b", "c", "a"]
    assert [e.id for e in actions.sort_entries(es, {}, "most")] == ["a", "b", "c", "d"]


def test_unknown_order_is_refused():
    with pytest.raises(ValueError, match="unknown order"):
        actions.sort_entries(entries("a"), {}, "size")
