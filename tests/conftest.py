"""Shared fixtures: a real home and workspace in tmp_path, never the user's ~/.muse."""

from __future__ import annotations

import pytest

from memtui.core.paths import Paths


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    monkeypatch.setenv("MUSE_HOME", str(tmp_path / "no-home-set"))
    monkeypatch.setenv("HOME", str(tmp_path / "fake-user-home"))


@pytest.fixture
def paths(tmp_path) -> Paths:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    return Paths(home.resolve(), ws.resolve())
