"""The focused benchmark's labelled set is what it claims (tests/benchmarks/focused_set.py): its
size, its paraphrases sharing no content word with what they need, its seeded sameness. The
figures are the benchmark's (python -m tests.benchmarks.focused), never asserted here."""

from __future__ import annotations

from collections import Counter

from tests.benchmarks.focused_set import build, check


def test_the_set_is_as_realistic_as_it_says():
    data = build()
    assert check(data) == []  # every label has its memory; no paraphrase shares a content word
    conversations = {row.conversation for row in data.rows}
    here = {c for c in conversations if data.conversations[c][1]}
    assert len(data.rows) >= 1500 and len(here) >= 30 and conversations - here  # another project's too
    memories = [k for k in data.texts if not k.startswith("c-")]
    assert len(memories) >= 100 and len(data.user_files) + len(data.project_files) >= 15
    kinds = Counter(m.kind for m in data.messages)
    assert len(data.messages) >= 80 and kinds["paraphrase"] * 2 >= len(data.messages) - kinds["nothing"] - 2
    assert kinds["nothing"] >= 5
    assert {m.split for m in data.messages} == {"dev", "held"}
    again = build()
    assert [r.text for r in again.rows] == [r.text for r in data.rows]  # seeded: the same set every time
