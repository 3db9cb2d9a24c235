"""The README's screenshots, made from the real app on the demo data.

    python -m memtui.tui.screenshots [OUT_DIR]     (default: screenshots/)

The same scenes drive the snapshot tests, so the pictures and the tests show one thing.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input

from memtui.core.demo import write_demo
from memtui.core.paths import Paths

from .app import MemtuiApp
from .screens import ConfirmScreen, SettingsScreen

SIZE = (140, 45)
QUERY = "数据库 slow query"


async def wait_until(pilot: Pilot, condition: Callable[[], bool], timeout: float = 10.0,
                     message: str = "the expected state") -> None:
    """Let the app run until `condition()` holds; raise after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError(f"timed out waiting for {message}")
        await pilot.pause(0.05)


def still(app) -> None:
    """No blinking cursors: the picture must not depend on when it is taken."""
    for screen in app.screen_stack:
        for widget in screen.query(Input):
            widget.cursor_blink = False


async def ready(pilot: Pilot) -> None:
    await wait_until(pilot, lambda: pilot.app.loaded and pilot.app.last_result is not None)
    still(pilot.app)
    await pilot.pause()


async def main_screen(pilot: Pilot) -> None:
    await ready(pilot)
    await pilot.press("down", "down", "down")


async def expanded_preview(pilot: Pilot) -> None:
    await ready(pilot)
    await pilot.press("p", *QUERY)
    await wait_until(pilot, lambda: pilot.app.last_result.query == QUERY)
    await pilot.press("escape", "f")
    await pilot.pause()


async def settings(pilot: Pilot) -> None:
    await ready(pilot)
    await pilot.press("s")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen))
    still(pilot.app)
    await pilot.pause()


async def delete_confirmation(pilot: Pilot) -> None:
    await ready(pilot)
    await pilot.press("2", "down", "d")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))
    await pilot.pause()


SCENES: dict[str, Callable[[Pilot], Awaitable[None]]] = {
    "main": main_screen,
    "preview": expanded_preview,
    "settings": settings,
    "delete": delete_confirmation,
}


def demo_at(base: Path) -> Paths:
    """The demo data at a fixed place (absolute paths appear in the settings screen)."""
    shutil.rmtree(base, ignore_errors=True)
    home, ws = base / "home", base / "shop-app"
    home.mkdir(parents=True)
    ws.mkdir()
    return write_demo(home, ws)


async def shoot(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, scene in SCENES.items():
        paths = demo_at(Path(tempfile.gettempdir()) / "memtui-demo")
        app = MemtuiApp(paths, demo=True, watch=False)
        async with app.run_test(size=SIZE) as pilot:
            await scene(pilot)
            svg = app.export_screenshot(title=f"memtui — {name}")
        target = out / f"{name}.svg"
        target.write_text(svg, encoding="utf-8", newline="\n")
        written.append(target)
    return written


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")
    for path in asyncio.run(shoot(out)):
        print(path)


if __name__ == "__main__":
    main()
