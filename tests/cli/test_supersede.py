"""`memtui supersede OLD --by NEW` and the doctor's `contradiction` finding, run as a person
runs them (SPEC §17)."""

from __future__ import annotations

import json

from memtui.core.paths import Paths
from tests.cli.run import assert_no_traceback, entries, entry_id, memtui, ok, undo_log
from tests.helpers import enable, write

CONTEXT = "- The API server listens on port 8080\n- Use vitest, not jest\n- The API server listens on port 9090\n"


def planted(paths: Paths):
    enable(paths)
    return write(paths.project_root / "context.md", CONTEXT)


def test_doctor_reports_both_sides_and_exits_1(paths):
    planted(paths)
    r = memtui(paths, "doctor", "--json")
    assert r.returncode == 1, r.stderr
    found = [f for f in json.loads(r.stdout)["findings"] if f["kind"] == "contradiction"]
    assert {(f["source"], f["other"]["source"]) for f in found} == {("context.md:1", "context.md:3"),
                                                                   ("context.md:3", "context.md:1")}
    assert all(f["reason"].startswith("port: ") for f in found)


def test_supersede_then_list_preview_and_undo(paths):
    path = planted(paths)
    new = entry_id(paths, "The API server listens on port 9090")
    r = ok(memtui(paths, "supersede", "context.md:1", "--by", new))
    assert "superseded by [project] context.md:3" in r.stdout and "memtui undo" in r.stdout
    assert path.read_text().endswith(CONTEXT)

    by_text = {e["text"]: e for e in entries(paths)}
    old = by_text["The API server listens on port 8080"]
    assert old["status"] == "superseded" and old["superseded_by"] == new
    assert by_text["The API server listens on port 9090"]["status"] == "active"

    preview = json.loads(ok(memtui(paths, "preview", "api server port", "--json")).stdout)
    assert "port 8080" not in preview["text"] and "port 9090" in preview["text"]
    assert {c["id"]: c["status"] for c in preview["candidates"]}[old["id"]] == "superseded"

    r = memtui(paths, "doctor", "--json")
    assert not [f for f in json.loads(r.stdout)["findings"] if f["kind"] == "contradiction"]

    assert undo_log(paths)[0]["action"] == "supersede"
    ok(memtui(paths, "undo"))
    assert path.read_text() == CONTEXT
    assert {e["text"]: e["status"] for e in entries(paths)}["The API server listens on port 8080"] == "active"


def test_supersede_refusals_are_clear_and_change_nothing(paths):
    path = planted(paths)
    r = memtui(paths, "supersede", "context.md:1", "--by", "context.md:1")
    assert r.returncode == 1 and "cannot supersede itself" in r.stderr
    assert_no_traceback(r)
    r = memtui(paths, "supersede", "context.md:1", "--by", "nope.md:4")
    assert r.returncode == 1 and "nope.md:4" in r.stderr
    r = memtui(paths, "supersede", "context.md:1")
    assert r.returncode == 2 and "--by" in r.stderr
    assert path.read_text() == CONTEXT
