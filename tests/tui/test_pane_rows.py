"""A pane's rows looked up, not copied: each conversation's header before its entries, the
row of an entry by its id, and the headers told apart without making the entries."""

from __future__ import annotations

from memtui.core.model import Entry, Layer
from memtui.tui.widgets.entry_pane import PaneRows, pane_rows


def row(i: int, title: str) -> Entry:
    return Entry(id=f"e{i}", layer=Layer.CONVERSATION, text=f"memory {i}", conversation_title=title)


class Counted(list):
    """A list of entries that counts the ones asked for one by one."""

    asked: list[int]

    def __getitem__(self, i):
        self.asked.append(i)
        return super().__getitem__(i)


def test_headers_and_entries_in_their_rows():
    entries = Counted([row(0, "b"), row(1, "b"), row(2, "a\x1b[31mx"), row(3, ""), row(4, "")])
    entries.asked = []
    rows = PaneRows(entries, [("b", 2), ("a\x1b[31mx", 1), ("", 2)])
    assert len(rows) == 8
    assert [rows.is_header(r) for r in range(8)] == [True, False, False, True, False, True, False, False]
    assert entries.asked == []  # telling the headers apart makes no entry
    assert rows[0] == "▌b (2)" and rows[5] == "▌(no conversation) (2)"
    assert rows[3] == "▌a\\x1b[31mx (1)"  # the title escaped, as every name on screen
    assert [rows[r].id for r in (1, 2, 4, 6, 7)] == ["e0", "e1", "e2", "e3", "e4"]
    assert rows[-1] is entries[4] and rows[1:3] == [entries[0], entries[1]]
    assert [rows.row_of(f"e{i}") for i in range(5)] == [1, 2, 4, 6, 7] and rows.row_of("gone") is None


def test_a_conversation_pane_groups_a_list_by_title_in_order_of_first_appearance():
    """(A filtered list comes best match first: a conversation's header goes where its best
    memory is, its other memories after it.)"""
    entries = [row(0, "b"), row(1, "a"), row(2, "b"), row(3, "")]
    rows = pane_rows(Layer.CONVERSATION, entries)
    assert list(rows) == ["▌b (2)", entries[0], entries[2], "▌a (1)", entries[1], "▌(no conversation) (1)", entries[3]]
    assert rows.row_of("e2") == 2
    plain = pane_rows(Layer.USER, entries)
    assert list(plain) == entries and not any(plain.is_header(r) for r in range(4))
