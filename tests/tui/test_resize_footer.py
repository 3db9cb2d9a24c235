"""The main screen's footer after a resize (issue 39 #8): at 80×24 the keys need the room the
command palette's `^p palette` takes, so it goes and `q Quit` stays in view; back at a large
size it comes back. Pilot on the demo's real files."""

from __future__ import annotations

from memtui.tui.app import MemtuiApp
from tests.tui.conftest import screen_text, wait_until


def footer_line(app) -> str:
    lines = screen_text(app).splitlines()
    return lines[-1] if lines else ""


async def test_a_resize_to_80x24_and_back_keeps_quit_in_the_footer(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: "q Quit" in footer_line(app) and "palette" in footer_line(app),
                         message="the footer with its keys and the palette")
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: "q Quit" in footer_line(app) and "palette" not in footer_line(app),
                         timeout=5, message=f"`q Quit` in the small footer, without the palette key (it shows "
                                            f"{footer_line(app)!r})")
        await pilot.resize_terminal(140, 45)
        await wait_until(pilot, lambda: "q Quit" in footer_line(app) and "palette" in footer_line(app),
                         timeout=5, message="the palette key back at a large size")
