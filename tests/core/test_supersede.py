"""`supersede` (SPEC §17): the old memory stays in its file, byte for byte, is left out of the
injection as `superseded` and names the new one; undo, the merge driver and the jsonl backup
keep it; a pair kept as not contradicting is never reported again."""

from __future__ import annotations

import pytest

from memtui.core import actions, doctor
from memtui.core.gitmerge import merge_entries
from memtui.core.markdown import parse_text
from memtui.core.model import CandidateStatus
from memtui.core.serve import build_injection
from memtui.core.supersede import superseding
from memtui.core.supersession import KEY, listed

from ..helpers import enable, write

BODY = "## Server\n\n- The API server listens on port 8080\n- Use vitest, not jest\n- The API server listens on port 9090\n"


def _store(paths):
    return actions.open_store(paths)


def _by_text(store, text):
    return next(e for e in store.entries() if e.text == text)


@pytest.mark.parametrize("head", ["", "---\ntype: knowledge\ntags: [api]\nupdatedAt: 2026-01-01\n---\n\n",
                                  "\ufeff", "---\r\ntype: knowledge\r\n---\r\n"])
def test_the_old_entry_stays_and_leaves_the_injection(paths, head):
    enable(paths)
    body = BODY.replace("\n", "\r\n") if head.endswith("\r\n") else BODY
    path = write(paths.project_root / "context.md", head + body)
    before = parse_text(path.read_bytes().decode("utf-8"))
    store = _store(paths)
    old, new = _by_text(store, "The API server listens on port 8080"), _by_text(store, "The API server listens on port 9090")
    change = actions.supersede(store, old.source_ref, new.source_ref)
    assert change.action == "supersede"

    data = path.read_bytes().decode("utf-8")
    after = parse_text(data)
    assert data.endswith(body)  # the body, byte for byte
    assert [(e.text, e.section) for e in after.entries] == [(e.text, e.section) for e in before.entries]
    assert listed(after.meta) == [("The API server listens on port 8080", "project:context.md",
                                   "The API server listens on port 9090")]
    if "tags: [api]" in head:
        assert "tags: [api]\n" in data and "type: knowledge\n" in data  # other keys untouched

    store.reload()
    old_now = _by_text(store, old.text)
    assert old_now.id == old.id  # its text did not change: neither did its id
    assert old_now.superseded_by == new.id and superseding(store, old_now) == _by_text(store, new.text)
    assert old_now.as_dict()["status"] == "superseded" and old_now.as_dict()["superseded_by"] == new.id
    result = build_injection(paths.workspace, "api server port", home=paths.home)
    status = {c.entry.text: c.status for c in result.candidates}
    assert status[old.text] == CandidateStatus.SUPERSEDED
    assert status[new.text] == CandidateStatus.INCLUDED
    assert old.text not in result.text
    assert result.status_counts()[CandidateStatus.SUPERSEDED] == 1
    assert '"status": "superseded"' in result.to_json()


def test_undo_gives_the_file_back_byte_for_byte(paths):
    enable(paths)
    path = write(paths.project_root / "context.md", BODY)
    store = _store(paths)
    actions.supersede(store, "context.md:3", "context.md:5")
    assert path.read_bytes().decode("utf-8") != BODY
    actions.undo(store)
    assert path.read_bytes().decode("utf-8") == BODY
    store.reload()
    assert not _by_text(store, "The API server listens on port 8080").superseded_by


def test_a_second_supersession_extends_the_list(paths):
    enable(paths)
    path = write(paths.project_root / "context.md",
                 "---\nsuperseded:\n- entry: Release day is Monday\n  by: project:context.md\n  by_text: Release day is Thursday\n"
                 "type: knowledge\n---\n- Release day is Monday\n- Release day is Thursday\n- Node 18\n- Node 20\n")
    store = _store(paths)
    actions.supersede(store, _by_text(store, "Node 18"), _by_text(store, "Node 20"))
    meta = parse_text(path.read_bytes().decode("utf-8")).meta
    assert [item[0] for item in listed(meta)] == ["Release day is Monday", "Node 18"]
    assert meta["type"] == "knowledge"
    store.reload()
    assert {e.text for e in store.entries() if e.superseded_by} == {"Release day is Monday", "Node 18"}


def test_a_new_memory_in_another_layer_is_named_by_its_id(paths):
    enable(paths)
    write(paths.user_root / "notes.md", "- Release day is Thursday\n")
    write(paths.project_root / "context.md", "- Release day is Tuesday\n")
    store = _store(paths)
    new = _by_text(store, "Release day is Thursday")
    actions.supersede(store, "context.md:1", new.id)
    store.reload()
    assert _by_text(store, "Release day is Tuesday").superseded_by == new.id


@pytest.mark.parametrize(("ask", "why"), [
    (("context.md:1", "context.md:1"), "itself"),
    (("context.md:2", "context.md:1"), "archived or superseded"),
])
def test_refused_supersessions_change_nothing(paths, ask, why):
    enable(paths)
    write(paths.project_root / "context.md", "- A fact of 8080\n")
    write(paths.project_root / "old.md", "---\nstatus: archived\n---\n- A fact of 9090\n")
    path = write(paths.project_root / "context.md", "- A fact of 8080\n- A fact of 7070\n")
    store = _store(paths)
    if ask[0] == "context.md:2":
        ask = ("context.md:2", "old.md:4")
    before = path.read_bytes()
    with pytest.raises(actions.Refused, match=why):
        actions.supersede(store, *ask)
    assert path.read_bytes() == before


def test_a_superseded_entry_is_not_reported_as_a_contradiction(paths):
    enable(paths)
    write(paths.project_root / "context.md", BODY)
    assert len([f for f in doctor.findings(paths) if f.kind == "contradiction"]) == 2
    store = _store(paths)
    actions.supersede(store, "context.md:3", "context.md:5")
    assert [f for f in doctor.findings(paths) if f.kind == "contradiction"] == []


def test_a_pair_kept_as_not_contradicting_is_never_reported_again(paths):
    enable(paths)
    write(paths.project_root / "context.md", BODY)
    store = _store(paths)
    a, b = _by_text(store, "The API server listens on port 8080"), _by_text(store, "The API server listens on port 9090")
    change = actions.keep_both(store, b, a)
    assert change.action == "keep_both"
    assert [f for f in doctor.findings(paths) if f.kind == "contradiction"] == []
    actions.undo(store)
    assert len([f for f in doctor.findings(paths) if f.kind == "contradiction"]) == 2  # undone: reported again
    actions.keep_both(store, a, b)
    assert [f for f in doctor.findings(paths) if f.kind == "contradiction"] == []
    write(paths.project_root / "other.md", "- The API server listens on port 7070\n")
    found = [f for f in doctor.findings(paths) if f.kind == "contradiction"]
    pairs = {frozenset((f.source, f.other_source)) for f in found}
    assert pairs == {frozenset(("context.md:3", "other.md:1")), frozenset(("context.md:5", "other.md:1"))}  # new pairs


def test_the_merge_driver_keeps_supersessions_made_on_both_sides():
    base = "---\ntype: knowledge\n---\n- a 8080\n- a 9090\n- b 1\n- b 2\n"
    ours = ("---\ntype: knowledge\nsuperseded:\n- entry: a 8080\n  by: project:context.md\n  by_text: a 9090\n---\n"
            "- a 8080\n- a 9090\n- b 1\n- b 2\n")
    theirs = ("---\ntype: knowledge\nsuperseded:\n- entry: b 1\n  by: project:context.md\n  by_text: b 2\n---\n"
              "- a 8080\n- a 9090\n- b 1\n- b 2\n- c\n")
    result = merge_entries(base.encode(), ours.encode(), theirs.encode())
    assert result.conflicts == 0
    merged = parse_text(result.data.decode("utf-8"))
    assert [item[0] for item in listed(merged.meta)] == ["a 8080", "b 1"]
    assert [e.text for e in merged.entries] == ["a 8080", "a 9090", "b 1", "b 2", "c"]


def test_the_jsonl_backup_keeps_supersessions(paths, tmp_path):
    from memtui.core.paths import Paths

    enable(paths)
    write(paths.project_root / "context.md", BODY)
    store = _store(paths)
    actions.supersede(store, "context.md:3", "context.md:5")
    backup = tmp_path / "backup"
    actions.export_memories(store, "jsonl", backup)
    fresh = Paths((tmp_path / "h2").resolve(), (tmp_path / "w2").resolve())
    fresh.workspace.mkdir(parents=True)
    fresh.home.mkdir(parents=True)
    enable(fresh)
    other = actions.open_store(fresh)
    actions.import_memories(other, "jsonl", next(backup.glob("*.jsonl")) if backup.is_dir() else backup)
    other.reload()
    superseded = [e for e in other.entries() if e.superseded_by]
    assert [e.text for e in superseded] == ["The API server listens on port 8080"]
    assert other.get(superseded[0].superseded_by).text == "The API server listens on port 9090"
    assert KEY in (fresh.project_root / "context.md").read_text(encoding="utf-8")
