"""Shared fixtures: a real home and workspace in tmp_path, never the user's ~/.muse."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from memtui.core.paths import Paths

# Property tests: a fixed, derandomised profile by default and in CI, so a red build is a real
# regression; `HYPOTHESIS_PROFILE=explore python -m pytest tests/core/test_neighbours.py` searches
# far wider with fresh randomness (turn each failure it prints into an `@example`).
settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None, max_examples=200, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore", max_examples=20000, derandomize=False, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _temp_root_in_memory() -> None:
    """Every test's tmp_path on a RAM file system when the machine has one (Linux's /dev/shm):
    the same real files, directories, links and SQLite databases, but an `fsync` (every atomic
    write, the undo log and each SQLite commit make several) returns at once instead of waiting
    for a disk other jobs share, which was a third of a write-heavy test's time on a busy
    machine. `PYTEST_DEBUG_TEMPROOT` is pytest's own setting for where its temporary folders go
    (numbered, the last three kept); set it, or pass --basetemp, to put them elsewhere (a disk's
    own behaviour), and MEMTUI_TEST_TMP=disk keeps the system's temporary folder."""
    shm = "/dev/shm"
    if ("PYTEST_DEBUG_TEMPROOT" in os.environ or os.environ.get("MEMTUI_TEST_TMP") == "disk"
            or not os.path.isdir(shm) or not os.access(shm, os.W_OK | os.X_OK)):
        return
    os.environ["PYTEST_DEBUG_TEMPROOT"] = shm


_temp_root_in_memory()


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
