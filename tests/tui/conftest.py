"""Fixtures for driving the real app with Pilot on real files."""

from __future__ import annotations

import pytest

from memtui.core.demo import write_demo
from memtui.core.paths import Paths
from memtui.tui.screenshots import demo_at
from tests.tui.helpers import press_for, wait_until  # noqa: F401  (used by the tests)


@pytest.fixture
def demo_paths(tmp_path) -> Paths:
    home, ws = tmp_path / "home", tmp_path / "shop-app"
    home.mkdir()
    ws.mkdir()
    return write_demo(home, ws)


@pytest.fixture
def snapshot_paths(tmp_path, monkeypatch) -> Paths:
    """The demo under a HOME of its own: the screen shows `~/home/…`, the same every run."""
    monkeypatch.setenv("HOME", str(tmp_path))
    return demo_at(tmp_path)


def shown(widget, width: int = 200) -> str:
    """The plain text a Static shows (its content rendered as the screen would, markup and all)."""
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    content = widget.content
    console.print(content if not isinstance(content, str) else content)
    return console.file.getvalue()


def screen_text(app) -> str:
    """What the terminal shows now, as plain lines."""
    return "\n".join("".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips())
