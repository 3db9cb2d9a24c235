"""The vocabulary in the types: every entry carries its layer, importance and status as the
`Layer`, `Importance` and `Status` members, whichever way it was made (parsed from a file,
read from muse.db, rebuilt from the prepared index's saved rows), and every candidate its
`CandidateStatus`; a frontmatter's free text keeps SPEC §2's meaning."""

from __future__ import annotations

import json

import pytest

from memtui.core import actions, interop
from memtui.core.interop import jsonl
from memtui.core.model import (
    CandidateStatus,
    Importance,
    Layer,
    Status,
    importance_of,
    status_of,
)
from memtui.core.paths import Paths
from memtui.core.serve import build_injection
from memtui.core.store.conversations import Conversations
from tests.helpers import enable, write

FILES = {  # file -> (importance, status, raw_status) its entries have
    "high.md": ("---\nimportance: high\n---\n\n- deploy high one\n", Importance.HIGH, Status.ACTIVE, ""),
    "low.md": ("---\nimportance: low\nstatus: active\n---\n\n- deploy low one\n", Importance.LOW, Status.ACTIVE, "active"),
    "odd.md": ("---\nimportance: urgent\nstatus: someday\n---\n\n- deploy odd one\n", Importance.NORMAL, Status.ACTIVE,
               "someday"),
    "old.md": ("---\nstatus: superseded\n---\n\n- deploy old one\n", Importance.NORMAL, Status.ARCHIVED, "superseded"),
    "gone.md": ("---\nstatus: archived\nimportance: LOW\n---\n\n- deploy gone one\n", Importance.NORMAL, Status.ARCHIVED,
                "archived"),
    "plain.md": ("- deploy plain one\n", Importance.NORMAL, Status.ACTIVE, ""),
}


@pytest.fixture
def paths_with_memory(paths: Paths) -> Paths:
    for name, (text, *_) in FILES.items():
        write(paths.project_root / name, text)
    write(paths.user_root / "me.md", "- deploy as I like it\n")
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "Deploys", str(paths.workspace))
    db.add("deploy from the main branch", conversation_id="c1", memory_id="row-1", created_at=1, updated_at=2)
    db.close()
    enable(paths)
    return paths


def _typed(entry) -> bool:
    return type(entry.layer) is Layer and type(entry.importance) is Importance and type(entry.status) is Status


def _expected(entry) -> tuple[Importance, Status, str]:
    if entry.layer != Layer.PROJECT:
        return Importance.NORMAL, Status.ACTIVE, ""
    _, importance, status, raw = FILES[entry.rel_path]
    return importance, status, raw


def test_the_stores_entries_carry_the_enum_members_with_spec_2s_meaning(paths_with_memory):
    store = actions.open_store(paths_with_memory)
    entries = [e for layer in Layer for e in store.entries(layer)]
    assert {e.layer for e in entries} == set(Layer) and len(entries) == len(FILES) + 2
    for e in entries:
        assert _typed(e), e
        assert (e.importance, e.status, e.raw_status) == _expected(e), e.rel_path


def test_entries_made_again_from_the_saved_index_carry_the_enum_members(paths_with_memory):
    paths = paths_with_memory
    first = build_injection(paths.workspace, "deploy", home=paths.home)
    again = build_injection(paths.workspace, "deploy", home=paths.home)  # from the prepared index's saved rows
    assert again.text == first.text and "deploy high one" in again.text
    candidates = again.candidates
    assert len(candidates) == len(FILES) + 2
    for c in candidates:
        assert _typed(c.entry), c.entry
        assert (c.entry.importance, c.entry.status, c.entry.raw_status) == _expected(c.entry)
        assert type(c.status) is CandidateStatus
    # the JSON speaks the same words, plain
    data = json.loads(again.to_json())
    assert {c["layer"] for c in data["candidates"]} == {"user", "project", "conversation"}
    assert {c["importance"] for c in data["candidates"]} == {"high", "normal", "low"}


@pytest.mark.parametrize(("written", "importance", "status"), [
    ("high", Importance.HIGH, Status.ACTIVE), ("low", Importance.LOW, Status.ACTIVE),
    ("normal", Importance.NORMAL, Status.ACTIVE), ("archived", Importance.NORMAL, Status.ARCHIVED),
    ("superseded", Importance.NORMAL, Status.ARCHIVED), ("High", Importance.NORMAL, Status.ACTIVE),
    (None, Importance.NORMAL, Status.ACTIVE), (True, Importance.NORMAL, Status.ACTIVE),
    (["high"], Importance.NORMAL, Status.ACTIVE),
])
def test_a_written_value_means_what_spec_2_says(written, importance, status):
    assert importance_of(written) is importance
    assert status_of(written) is status


def test_a_backups_superseded_status_is_written_back_as_it_was(tmp_path):
    source = tmp_path / "old.jsonl"
    source.write_text(json.dumps({"text": "kept aside", "layer": "project", "status": "superseded",
                                  "importance": "high"}) + "\n", encoding="utf-8")
    result = interop.read("jsonl", source, tmp_path / "ws", tmp_path / "home")
    assert result.problems == []
    [memory] = result.memories
    assert (memory.layer, memory.importance, memory.status, memory.raw_status) == (
        Layer.PROJECT, Importance.HIGH, Status.ARCHIVED, "superseded")
    assert type(memory.layer) is Layer
    assert jsonl.to_record(memory)["status"] == "superseded"
