"""settings.json (SPEC §4): merge rules, foreign keys kept, invalid files reported and untouched."""

from __future__ import annotations

import json

import pytest

from memtui.core.settings import SettingsError, load_settings, set_global, set_workspace_enabled
from tests.helpers import write


def test_defaults(paths):
    s = load_settings(paths)
    assert (s.enabled, s.enabled_source) == (False, "default")
    assert s.budget == {"total": 2000, "user": 600, "project": 800, "conversation": 600}
    assert s.gate == {"user": 0.0, "project": 0.0, "conversation": 0.2}
    assert s.max_items["conversation"] == 10 and s.max_item_chars == 200


def test_workspace_wins_and_cannot_change_budgets(paths):
    write(paths.global_settings, json.dumps({"memoryEnabled": False, "memory": {"budget": {"total": 900}}}))
    write(paths.workspace_settings, json.dumps({"memoryEnabled": True, "memory": {"budget": {"total": 99999}}}))
    s = load_settings(paths)
    assert (s.enabled, s.enabled_source) == (True, "workspace")
    assert s.budget["total"] == 900
    assert any(p.source == str(paths.workspace_settings) and "ignored" in p.message for p in s.problems)


def test_wrong_types_are_reported_and_ignored(paths):
    write(paths.global_settings, json.dumps({"memoryEnabled": "yes", "memory": {"gate": {"user": "high"}, "maxItemChars": 0}}))
    s = load_settings(paths)
    assert s.enabled is False and s.gate["user"] == 0.0 and s.max_item_chars == 200
    assert len(s.problems) == 3


def test_writes_keep_every_foreign_key(paths):
    original = {"theme": "solarized", "model": {"name": "x", "temp": 0.2}, "memory": {"budget": {"total": 1500}, "other": [1, 2]}}
    write(paths.global_settings, json.dumps(original))
    write(paths.workspace_settings, json.dumps({"editor": "vim"}))
    set_workspace_enabled(paths, True)
    set_global(paths, {("memory", "budget", "user"): 700})
    ws = json.loads(paths.workspace_settings.read_text())
    g = json.loads(paths.global_settings.read_text())
    assert ws == {"editor": "vim", "memoryEnabled": True}
    expected = json.loads(json.dumps(original))
    expected["memory"]["budget"]["user"] = 700
    assert g == expected


def test_invalid_json_is_reported_and_never_overwritten(paths):
    bad = write(paths.workspace_settings, "{not json")
    s = load_settings(paths)
    assert any(p.source == str(bad) and "invalid JSON" in p.message for p in s.problems)
    with pytest.raises(SettingsError):
        set_workspace_enabled(paths, True)
    assert bad.read_text() == "{not json"
