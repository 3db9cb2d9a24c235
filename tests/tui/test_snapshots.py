"""How the app looks: the README's scenes, from fixed demo data at a fixed size."""

from __future__ import annotations

import pytest

from memtui.tui import screenshots
from memtui.tui.app import MemtuiApp


@pytest.mark.parametrize("scene", list(screenshots.SCENES))
def test_scene(snap_compare, snapshot_paths, scene):
    app = MemtuiApp(snapshot_paths, watch=False)
    assert snap_compare(app, terminal_size=screenshots.SIZE, run_before=screenshots.SCENES[scene])


def test_main_screen_small_terminal(snap_compare, snapshot_paths):
    assert snap_compare(MemtuiApp(snapshot_paths, watch=False), terminal_size=(80, 24), run_before=screenshots.ready)
