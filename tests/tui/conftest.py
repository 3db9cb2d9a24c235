"""Fixtures for driving the real app with Pilot on real files."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memtui.core import semantic
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


def pinned_model() -> semantic.ModelFiles:
    """The semantic model as the optional extra pins it (pyproject), found or not."""
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    pin = next(spec for spec in project["project"]["optional-dependencies"]["semantic"]
               if spec.startswith(f"{semantic.MODEL_PACKAGE}=="))
    info = semantic.ModelInfo(f"{semantic.MODEL_PACKAGE}/{semantic.MODEL_CONFIG}_{semantic.MODEL_DIM}", pin.split("==")[1])
    return semantic.ModelFiles(info, Path(), Path())


@pytest.fixture
def snapshot_paths(tmp_path, monkeypatch) -> Paths:
    """The demo under a HOME of its own: the screen shows `~/home/…`, the same every run; the
    settings scene names the pinned semantic model whether the extra is installed or not (the
    scenes show memtui, not the machine's packages; tests/tui/test_hybrid_settings.py covers
    the model itself)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(semantic, "locate", pinned_model)
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
