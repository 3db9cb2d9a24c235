"""How the app looks: the README's scenes, from fixed demo data, in both themes, at 140×45
and 80×24 (the same list the screenshots command uses)."""

from __future__ import annotations

import pytest

from memtui.tui import screenshots
from memtui.tui.app import MemtuiApp


@pytest.mark.parametrize("scene,theme,size", screenshots.SHOTS,
                         ids=[screenshots.shot_name(*shot) for shot in screenshots.SHOTS])
def test_scene(snap_compare, snapshot_paths, scene, theme, size):
    app = MemtuiApp(snapshot_paths, watch=False, theme=theme)
    assert snap_compare(app, terminal_size=size, run_before=screenshots.SCENES[scene])
