"""Helpers for Pilot tests: wait on a condition with a timeout, and the real app with a
counter the tests read (the shipped App keeps none)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from memtui.tui import app as app_module
from memtui.tui.app import MemtuiApp
from memtui.tui.messages import StoreChanged


async def wait_until(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 30.0,
                     message: str = "the expected state") -> None:
    """Let the app run until `condition()` holds; fail after `timeout` seconds (a bound for
    a failure only: a loaded 2-core machine can take ten seconds where an idle one takes one)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError(f"timed out waiting for {message}")
        await pilot.pause(0.05)


async def press_for(pilot: Pilot[Any], key: str, screen: type) -> Any:
    """Press `key` and wait until the app shows a `screen` (a screen class); the screen."""
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, screen), message=f"the {screen.__name__}")
    return pilot.app.screen


def held_store(app: MemtuiApp) -> threading.Event:
    """The app's store loads only once the returned event is set."""
    release = threading.Event()
    load = app.store.load

    def held() -> None:
        assert release.wait(30), "the test never released the store"
        return load()

    app.store.load = held  # type: ignore[method-assign]
    return release


class CountingApp(MemtuiApp):
    """The real app, counting the store changes it refreshed the panes for."""

    CSS_PATH = Path(app_module.__file__).with_name("app.tcss")  # Textual reads it beside the subclass else

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.store_changes = 0

    def on_store_changed(self, _message: StoreChanged) -> None:
        # Textual runs this and then MemtuiApp's own handler (each class in the MRO has its turn),
        # which refreshes only once the store is loaded: count the same changes.
        if self.loaded:
            self.store_changes += 1
