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


def test_numbers_no_float_holds_are_written_back_as_they_were(paths):
    """`1e400` reads as infinity: writing it back as `Infinity` would leave a file that is no
    longer JSON for every other reader (Muse, node). Foreign keys keep their own text, and a
    memtui key holding one is reported, not used."""
    write(paths.workspace_settings, '{"memoryEnabled": true, "x": 1e400, "nested": [-1E999, {"q": 2.5}]}')
    write(paths.global_settings, '{"memory": {"budget": {"total": 1e309, "user": 700}}, "other": 1e400}')
    s = load_settings(paths)
    assert s.budget["total"] == 2000 and any("budget.total" in p.message and "1e309" in p.message for p in s.problems)
    set_workspace_enabled(paths, False)
    set_global(paths, {("memory", "budget", "user"): 650})
    ws, g = paths.workspace_settings.read_text(), paths.global_settings.read_text()
    assert "Infinity" not in ws + g
    assert '"x": 1e400' in ws and "-1E999" in ws and '"memoryEnabled": false' in ws
    assert '"total": 1e309' in g and '"other": 1e400' in g and '"user": 650' in g
    json.loads(ws.replace("1e400", "1").replace("-1E999", "1"))  # otherwise plain JSON


def test_invalid_json_is_reported_and_never_overwritten(paths):
    bad = write(paths.workspace_settings, "{not json")
    s = load_settings(paths)
    assert any(p.source == str(bad) and "invalid JSON" in p.message for p in s.problems)
    with pytest.raises(SettingsError):
        set_workspace_enabled(paths, True)
    assert bad.read_text() == "{not json"


def test_messages_quote_values_as_the_file_writes_them(paths):
    write(paths.global_settings, json.dumps({"memoryEnabled": "yes", "memory": {"maxItemChars": None}}))
    messages = " ".join(p.message for p in load_settings(paths).problems)
    assert 'not "yes"' in messages and "not null" in messages and "'yes'" not in messages and "None" not in messages
