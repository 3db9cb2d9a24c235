"""The README's screenshots, made from the real app on the demo data.

    python -m memtui.tui.screenshots [OUT_DIR]     (default: screenshots/)

Writes `<scene>-<theme>.svg` at 140×45 and `<scene>-<theme>-small.svg` at 80×24. The same
scenes, themes and sizes drive the snapshot tests, so the pictures and the tests show one thing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import cast

from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from memtui.core.demo import write_demo
from memtui.core.paths import Paths

from .app import MemtuiApp
from .screens import ConfirmScreen, EditScreen, SettingsScreen
from .screens.inbox import InboxScreen

SIZE = (140, 45)
SMALL = (80, 24)
THEMES = ("memtui-dark", "memtui-light")
QUERY = "数据库 slow query"


async def _wait_until(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 10.0,
                     message: str = "the expected state") -> None:
    """Let the app run until `condition()` holds; raise after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError(f"timed out waiting for {message}")
        await pilot.pause(0.05)


def _still(app: App[None]) -> None:
    """No blinking cursors: the picture must not depend on when it is taken."""
    for screen in app.screen_stack:
        for widget in screen.query(Input):
            widget.cursor_blink = False
        for area in screen.query(TextArea):
            area.cursor_blink = False


async def ready(pilot: Pilot[None]) -> None:
    app = cast(MemtuiApp, pilot.app)
    await _wait_until(pilot, lambda: app.loaded and app.last_result is not None and app.findings is not None
                      and app.inbox is not None)
    _still(pilot.app)
    await pilot.pause()


async def main_screen(pilot: Pilot[None]) -> None:
    await ready(pilot)
    await pilot.press("down", "down", "down")


async def expanded_preview(pilot: Pilot[None]) -> None:
    await ready(pilot)
    await pilot.press("p", *QUERY)
    app = cast(MemtuiApp, pilot.app)
    await _wait_until(pilot, lambda: app.last_result is not None and app.last_result.query == QUERY)
    await pilot.press("escape", "f")
    await pilot.pause()


async def settings(pilot: Pilot[None]) -> None:
    await ready(pilot)
    await pilot.press("s")
    await _wait_until(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen))
    _still(pilot.app)
    await pilot.pause()


async def delete_confirmation(pilot: Pilot[None]) -> None:
    await ready(pilot)
    await pilot.press("2", "down", "d")
    await _wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))
    await pilot.pause()


async def inbox(pilot: Pilot[None]) -> None:
    await ready(pilot)
    await pilot.press("i")
    await _wait_until(pilot, lambda: isinstance(pilot.app.screen, InboxScreen))


async def new_memory(pilot: Pilot[None]) -> None:
    await ready(pilot)
    await pilot.press("n", *"Webhooks are verified with the signing secret")
    await _wait_until(pilot, lambda: isinstance(pilot.app.screen, EditScreen))
    _still(pilot.app)
    await pilot.pause()


SCENES: dict[str, Callable[[Pilot[None]], Awaitable[None]]] = {
    "main": main_screen,
    "preview": expanded_preview,
    "settings": settings,
    "delete": delete_confirmation,
    "inbox": inbox,
    "new": new_memory,
}
# (scene, theme, size): every scene in both themes, at 140×45 and at 80×24.
SHOTS: list[tuple[str, str, tuple[int, int]]] = [
    *[(scene, theme, SIZE) for scene in SCENES for theme in THEMES],
    *[(scene, theme, SMALL) for scene in SCENES for theme in THEMES],
]


def shot_name(scene: str, theme: str, size: tuple[int, int]) -> str:
    return f"{scene}-{theme.removeprefix('memtui-')}{'-small' if size == SMALL else ''}"


def demo_at(base: Path) -> Paths:
    """The demo data under `base` (a fresh copy). The settings screen shows paths under the
    user's home as `~/…`, so with HOME at `base` the pictures do not depend on where it is."""
    shutil.rmtree(base / "home", ignore_errors=True)
    shutil.rmtree(base / "shop-app", ignore_errors=True)
    home, ws = base / "home", base / "shop-app"
    home.mkdir(parents=True)
    ws.mkdir()
    return write_demo(home, ws)


async def shoot(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    base = Path(tempfile.mkdtemp(prefix="memtui-shots-"))
    os.environ["HOME"] = str(base)  # this process only: paths on screen read ~/home/…
    try:
        for scene, theme, size in SHOTS:
            written.append(await shoot_one(out, base, scene, theme, size))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return written


async def shoot_one(out: Path, base: Path, scene: str, theme: str, size: tuple[int, int]) -> Path:
    app = MemtuiApp(demo_at(base), demo=True, watch=False, theme=theme)
    async with app.run_test(size=size) as pilot:
        await SCENES[scene](pilot)
        svg = app.export_screenshot(title=f"memtui — {scene}")
    target = out / f"{shot_name(scene, theme, size)}.svg"
    target.write_text(svg, encoding="utf-8", newline="\n")
    return target


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")
    for path in asyncio.run(shoot(out)):
        print(path)


if __name__ == "__main__":
    main()
