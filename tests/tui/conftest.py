"""Fixtures for driving the real app with Pilot on real files."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from memtui.core.demo import write_demo
from memtui.core.paths import Paths

SNAPSHOT_BASE = Path("/tmp/memtui-snapshot-data")


@pytest.fixture
def demo_paths(tmp_path) -> Paths:
    home, ws = tmp_path / "home", tmp_path / "shop-app"
    home.mkdir()
    ws.mkdir()
    return write_demo(home, ws)


@pytest.fixture
def snapshot_paths() -> Paths:
    """The demo at a fixed place, so absolute paths shown on screen are the same every run."""
    shutil.rmtree(SNAPSHOT_BASE, ignore_errors=True)
    home, ws = SNAPSHOT_BASE / "home", SNAPSHOT_BASE / "shop-app"
    home.mkdir(parents=True)
    ws.mkdir()
    return write_demo(home, ws)


async def wait_until(pilot, condition, timeout: float = 10.0, message: str = "condition") -> None:
    """Let the app run until `condition()` holds; fail after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        await pilot.pause(0.05)
