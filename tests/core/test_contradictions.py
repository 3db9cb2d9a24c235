"""Contradictions (SPEC §17): the doctor's `contradiction` finding on a labelled set, the
near-duplicate rule that no longer takes labels, templates and differing values for repeats,
and the blocking that keeps the search linear."""

from __future__ import annotations

import json
import random

import pytest

from memtui.core import doctor
from memtui.core.contradictions import contradiction, contradiction_pairs, is_label, same_statement
from memtui.core.model import Entry
from memtui.core.similarity import near_duplicate

from ..helpers import enable, write
from .contradiction_set import CONTRADICTS, LOOK_ALIKES


def scores(pairs_found: set[frozenset[str]]) -> tuple[float, float]:
    true = {frozenset((a, b)) for _, a, b in CONTRADICTS}
    false = {frozenset((a, b)) for _, a, b in LOOK_ALIKES}
    tp = len(pairs_found & true)
    fp = len(pairs_found & false)
    return tp / max(tp + fp, 1), tp / len(true)


def test_the_labelled_set_is_large_enough_and_consistent():
    assert len(CONTRADICTS) >= 40 and len(LOOK_ALIKES) >= 80
    assert {kind for kind, _, _ in CONTRADICTS} >= {"port", "version", "tool", "day", "person", "duration", "path",
                                                     "command"}
    assert {shape for shape, _, _ in LOOK_ALIKES} >= {"facet", "template", "label"}
    # no pair is labelled both ways
    assert not {frozenset((a, b)) for _, a, b in CONTRADICTS} & {frozenset((a, b)) for _, a, b in LOOK_ALIKES}


def test_precision_and_recall_pair_by_pair():
    found = {frozenset((a, b)) for _, a, b in CONTRADICTS + LOOK_ALIKES if contradiction(a, b)}
    precision, recall = scores(found)
    assert precision >= 0.9 and recall >= 0.8, (precision, recall)


def test_precision_and_recall_with_every_memory_of_the_set_at_once():
    """The doctor's search over the whole set (blocked) finds the labelled pairs, and no
    look-alike pair."""
    texts = list(dict.fromkeys(t for _, a, b in CONTRADICTS + LOOK_ALIKES for t in (a, b)))
    found = {frozenset((texts[i], texts[j])) for i, j, _ in contradiction_pairs(texts)}
    precision, recall = scores(found)
    assert precision >= 0.9 and recall >= 0.8, (precision, recall)


@pytest.mark.parametrize(("a", "b", "kind", "mine", "theirs"), [
    ("The API server listens on port 8080", "The API server listens on port 9090", "port", "8080", "9090"),
    ("We use Node 18 for the frontend build", "We use Node 20 for the frontend build", "version", "18", "20"),
    ("Use pnpm for installing dependencies", "Use yarn for installing dependencies", "tool", "pnpm", "yarn"),
    ("Release day is Thursday", "Release day is Tuesday", "day", "Thursday", "Tuesday"),
    ("Alice owns the billing service", "Bob owns the billing service", "person", "Alice", "Bob"),
    ("Sessions expire after 30 minutes", "Sessions expire after 2 hours", "duration", "30 minutes", "2 hours"),
    ("Migrations live in db/migrations/", "Migrations live in backend/migrations/", "path", "db/migrations/",
     "backend/migrations/"),
    ("Run tests locally with `uv run pytest`", "Run tests locally with `pnpm test`", "command", "`uv run pytest`",
     "`pnpm test`"),
])
def test_each_kind_names_its_values(a, b, kind, mine, theirs):
    found = contradiction(a, b)
    assert found is not None
    assert (found.kind, found.mine.shown, found.theirs.shown) == (kind, mine, theirs)


def test_the_same_value_in_other_words_is_no_contradiction():
    assert contradiction("Access tokens are valid for 1 hour", "Access tokens are valid for 60 minutes") is None
    assert contradiction("The API server listens on port 8080", "The API server now listens on port 8080") is None


def test_the_search_is_linear_in_groups_and_agrees_with_the_pair_rule():
    """Seeded templates with many values: every pair the search reports contradicts by the
    pair rule, and every text that contradicts the first of its group is reported against it."""
    rnd = random.Random(5)
    subjects = ["The API server listens on port {}", "The {} team owns billing", "Logs are kept for {} days",
                "Run the {} tests with pytest", "Cache pages for {} minutes"]
    texts = [rnd.choice(subjects).format(rnd.choice(["8080", "9090", "7070", "web", "data", "14", "30"]))
             for _ in range(400)]
    found = contradiction_pairs(texts)
    assert found
    for i, j, _ in found:
        assert i < j and contradiction(texts[i], texts[j]) is not None
    first_of: dict[str, int] = {}
    reported = {(i, j) for i, j, _ in found}
    for j, text in enumerate(texts):
        template = next(s for s in subjects if text.startswith(s.split("{}")[0]) and text.endswith(s.split("{}")[1]))
        i = first_of.setdefault(template, j)
        if contradiction(texts[i], text) is not None:
            assert (i, j) in reported


# ---------------------------------------------------------------------- near-duplicates
LABELS = ["**NEVER**:", "**ALWAYS**:", "Rules:", "### Testing:", "IMPORTANT:"]


@pytest.mark.parametrize("label", LABELS)
def test_a_bare_label_is_no_duplicate_finding_but_is_not_written_twice(label):
    """The doctor leaves labels out of its duplicates; `remember` and import still skip the
    very same label (running an import twice adds nothing), and a near one is not taken for it."""
    assert is_label(label)
    entries = [Entry(id="a", layer="user", text=label, rel_path="a.md"),
               Entry(id="b", layer="user", text=label, rel_path="b.md")]
    assert doctor.duplicates(entries) == []
    assert near_duplicate(entries[:1], label) == entries[0]
    assert near_duplicate(entries[:1], label.rstrip(":") + "S:") is None


@pytest.mark.parametrize(("a", "b"), [
    ("Run tests locally with `uv run pytest`", "Run tests locally with `pnpm test`"),
    ("Run backend tests with `uv run pytest`", "Run frontend tests with `uv run pytest`"),
    ("The API server listens on port 8080", "The API server listens on port 9090"),
    ("**NEVER**: use `any` in TypeScript", "**NEVER**: use `var` in TypeScript"),
    ("Always deploy on Fridays", "Never deploy on Fridays"),
    ("The connection pool size is 20", "The connection pool size is 50"),
    ("Postgres in docker-compose is exposed on port 5432", "Postgres in docker-compose is exposed on port 5433"),
])
def test_one_template_over_different_values_or_subjects_is_not_a_duplicate(a, b):
    assert not same_statement(a, b)
    assert near_duplicate([Entry(id="a", layer="user", text=a)], b) is None


@pytest.mark.parametrize(("a", "b"), [
    ("Use vitest, not jest", "use vitest,  not JEST"),
    ("Use pnpm for installing dependencies", "Always use pnpm for installing dependencies"),
    ("Sessions expire after 30 minutes", "Sessions expire after 30 min"),
    ("Prefer describe/it style", "Prefer describe/it styles"),
    ("Run tests locally with `uv run pytest`", "Run the tests locally with `uv run pytest`"),
    ("Keep pull requests small and focused", "Keep pull requets small and focused"),
    ("The API lives in api/server.py", "the API lives in api/server.py."),
])
def test_the_same_statement_is_still_a_duplicate(a, b):
    assert near_duplicate([Entry(id="a", layer="user", text=a)], b) is not None


def test_the_doctor_reports_the_issues_shapes_as_contradictions_not_duplicates(paths):
    """The shapes of the issue: labels over different lists, one template with different
    commands, a fact with two values."""
    enable(paths)
    write(paths.project_root / "rules.md",
          "## Backend\n\n**NEVER**:\n\n- commit `.env` files\n\n**ALWAYS**:\n\n- run `ruff check .`\n\n"
          "## Frontend\n\n**NEVER**:\n\n- use `any`\n\n**ALWAYS**:\n\n- run `pnpm lint`\n")
    write(paths.project_root / "context.md",
          "- Run tests locally with `uv run pytest`\n- Run tests locally with `pnpm test`\n"
          "- The API server listens on port 8080\n- The API server listens on port 9090\n")
    found = doctor.findings(paths, ("duplicate", "contradiction"))
    assert [f for f in found if f.kind == "duplicate"] == []
    pairs = {(f.source, f.other_source) for f in found if f.kind == "contradiction"}
    assert pairs == {("context.md:1", "context.md:2"), ("context.md:2", "context.md:1"),
                     ("context.md:3", "context.md:4"), ("context.md:4", "context.md:3")}


def test_each_side_of_a_contradiction_names_the_other_across_layers(paths):
    enable(paths)
    write(paths.user_root / "notes.md", "- Release day is Thursday\n")
    write(paths.project_root / "context.md", "- Unrelated note\n- Release day is Tuesday\n")
    found = [f for f in doctor.findings(paths) if f.kind == "contradiction"]
    by_source = {f.source: f for f in found}
    assert set(by_source) == {"notes.md:1", "context.md:2"}
    assert by_source["notes.md:1"].other_source == "context.md:2"
    assert by_source["context.md:2"].other_source == "notes.md:1"
    assert by_source["context.md:2"].reason == "day: says Tuesday where notes.md:1 says Thursday"
    data = by_source["notes.md:1"].as_dict()
    assert data["other"] == {"id": by_source["context.md:2"].entry_id, "source": "context.md:2"}
    json.dumps(data)


def test_archived_memories_contradict_nothing(paths):
    enable(paths)
    write(paths.user_root / "old.md", "---\nstatus: archived\n---\n- Release day is Thursday\n")
    write(paths.project_root / "context.md", "- Release day is Tuesday\n")
    assert [f for f in doctor.findings(paths) if f.kind == "contradiction"] == []
