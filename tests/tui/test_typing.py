"""Typing into the preview's query: a cheap preview is made as its key comes (on the event
loop, so it is painted in the key's own frame), exactly what `memtui preview` answers; a
costly one, or one whose prepared index must first be opened again after a change, is made
in the worker while the keys still echo; an outside edit made while typing is in the
preview that follows; the query box does not lay the screen out per key."""

from __future__ import annotations

import json

from textual import events
from textual.app import App, ComposeResult

from memtui.core.serve import build_injection
from memtui.tui import main_screen
from memtui.tui.app import MemtuiApp
from memtui.tui.widgets.line_input import LineInput
from tests.tui.conftest import screen_text, wait_until


def as_json(result) -> dict:
    """The result as `memtui preview --json` prints it (every candidate), but its timing."""
    data = json.loads(result.to_json())
    data.pop("retrieval_ms")
    return data


class CostClock:
    """The preview's clock in these tests: a preview costs what the test says (nothing, unless
    it spends some), so where the next one is made does not hang on the machine's load."""

    def __init__(self) -> None:
        self.now = 0.0

    def thread_time(self) -> float:
        return self.now


def cost_clock(monkeypatch) -> CostClock:
    clock = CostClock()
    monkeypatch.setattr(main_screen, "time", clock)
    return clock


def cli_json(paths, query: str) -> dict:
    return as_json(build_injection(paths.workspace, query, home=paths.home))


async def settled(pilot, app: MemtuiApp) -> None:
    """The first preview shown (the worker's: its cost is not known before) and its cost known."""
    await wait_until(pilot, lambda: app.ready.is_set() and app.last_result is not None
                     and app.main._preview_cost < main_screen.INLINE_COST, message="first preview")


async def test_a_cheap_preview_is_shown_with_its_key_as_memtui_preview_answers_it(demo_paths, monkeypatch):
    build_injection(demo_paths.workspace, "", home=demo_paths.home)  # `memtui preview` saves the index
    cost_clock(monkeypatch)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await settled(pilot, app)
        query = app.main.query_one("#query")
        for typed in ("p", "po", "postgres", "postgres dashboard"):
            query.value = typed  # as a key sets it: the preview is there before anything else runs
            assert app.last_result is not None and app.last_result.query == typed
            assert as_json(app.last_result) == cli_json(demo_paths, typed)
        await pilot.pause()
        assert f"{app.last_result.count} memor" in screen_text(app)  # painted


async def test_a_costly_preview_is_made_in_the_worker_and_the_keys_still_echo(demo_paths, monkeypatch):
    build_injection(demo_paths.workspace, "", home=demo_paths.home)
    inject = main_screen.inject_prepared
    clock = cost_clock(monkeypatch)

    def costly(*args, **kwargs):
        if "slow" in args[3]:  # the query: 300 ms of CPU, far past INLINE_COST; others cost nothing
            clock.now += 0.3
        return inject(*args, **kwargs)

    monkeypatch.setattr(main_screen, "inject_prepared", costly)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await settled(pilot, app)
        query = app.main.query_one("#query")
        query.value = "slow"  # its cost is learnt here, on the event loop, once
        assert app.last_result.query == "slow" and app.main._preview_cost >= main_screen.INLINE_COST
        query.value = "slow deploy"  # now the worker's: the key is echoed, its preview follows
        assert query.value == "slow deploy" and app.last_result.query == "slow"
        await wait_until(pilot, lambda: app.last_result.query == "slow deploy", message="the worker's preview")
        assert as_json(app.last_result) == cli_json(demo_paths, "slow deploy")
        query.value = "deploy"  # cheap again, but the last one cost: the worker measures it
        assert app.last_result.query == "slow deploy"
        await wait_until(pilot, lambda: app.last_result.query == "deploy", message="the worker's preview")
        query.value = "deploy preview"  # …and the next is made with its key again
        assert app.last_result.query == "deploy preview"
        assert as_json(app.last_result) == cli_json(demo_paths, "deploy preview")


async def test_a_preview_that_fails_on_the_event_loop_is_the_workers_and_its_error_is_said(demo_paths, monkeypatch):
    build_injection(demo_paths.workspace, "", home=demo_paths.home)
    inject = main_screen.inject_prepared
    cost_clock(monkeypatch)

    def failing(*args, **kwargs):
        if args[3] == "boom":  # the query
            raise RuntimeError("disk on fire")
        return inject(*args, **kwargs)

    monkeypatch.setattr(main_screen, "inject_prepared", failing)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await settled(pilot, app)
        query = app.main.query_one("#query")
        query.value = "boom"  # the key is handled; the worker tries again and fails as workers do
        assert query.value == "boom" and app.last_result.query != "boom"
        await wait_until(pilot, lambda: any("disk on fire" in str(n.message) for n in app._notifications),
                         message="the error said")
        query.value = "deploy"  # the worker's again (the last one failed), then made with its key
        await wait_until(pilot, lambda: app.last_result.query == "deploy", message="the worker's preview")
        query.value = "deploy preview"
        assert app.last_result.query == "deploy preview"
        assert as_json(app.last_result) == cli_json(demo_paths, "deploy preview")


async def test_an_outside_edit_while_typing_is_in_the_preview_that_follows(demo_paths):
    build_injection(demo_paths.workspace, "", home=demo_paths.home)
    app = MemtuiApp(demo_paths, watch=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.startup.watcher is not None, timeout=20, message="store loaded")
        await settled(pilot, app)
        app.main.query_one("#query").focus()
        for key in "zanz":
            await pilot.press(key)
        notes = demo_paths.home / "memory" / "tools.md"  # another assistant adds a memory meanwhile
        notes.write_text(notes.read_text(encoding="utf-8") + "\n- zanzibar tariffs are recomputed nightly\n",
                         encoding="utf-8")
        for key in "ibar":
            await pilot.press(key)
        assert app.main.query_one("#query").value == "zanzibar"
        await wait_until(pilot, lambda: app.last_result.query == "zanzibar"
                         and any("zanzibar tariffs" in c.line for c in app.last_result.included),
                         timeout=20, message="the new memory in the preview")
        assert as_json(app.last_result) == cli_json(demo_paths, "zanzibar")
        await pilot.press("s")  # the index opened again is current: made with the key once more
        await wait_until(pilot, lambda: app.last_result.query == "zanzibars", message="the next preview")
        assert as_json(app.last_result) == cli_json(demo_paths, "zanzibars")


class OneInput(App[None]):
    def compose(self) -> ComposeResult:
        yield LineInput(id="box", compact=True)


async def test_a_key_typed_into_a_line_input_lays_nothing_out_and_long_text_still_scrolls():
    app = OneInput()
    async with app.run_test(size=(30, 5)) as pilot:
        box = app.query_one("#box", LineInput)
        box.focus()
        await pilot.pause()
        layouts = []
        refresh_layout = app.screen._refresh_layout

        def counted(*args, **kwargs):
            layouts.append(1)
            return refresh_layout(*args, **kwargs)

        app.screen._refresh_layout = counted
        text = "the quick brown fox jumps over the lazy dog"  # longer than the 30 columns
        for ch in text:
            await pilot.press("space" if ch == " " else ch)
        await pilot.pause()
        assert box.value == text and not layouts
        assert box.scroll_x > 0 and screen_text(app).splitlines()[0].rstrip().endswith("lazy dog")
        await pilot.press("home")
        await pilot.pause()
        assert box.scroll_x == 0 and screen_text(app).splitlines()[0].startswith("the quick")


def send_burst(app: MemtuiApp, keys: str) -> None:
    """Keys as a paste or a fast typist sends them through a terminal: every one queued at once,
    the app handling none before the next arrives."""
    for ch in keys:
        key = "slash" if ch == "/" else ch
        app._driver.send_message(events.Key(key, ch))


async def test_keys_sent_in_one_burst_after_slash_or_p_are_typed_into_the_input(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await settled(pilot, app)
        app.main.current_pane().focus()
        await pilot.pause()
        entries = len(app.store.entries())
        send_burst(app, "pdeploy")  # "d" is delete and "y" its yes, were they the panes'
        query = app.main.query_one("#query")
        await wait_until(pilot, lambda: query.value == "deploy", message="the burst in the query")
        await wait_until(pilot, lambda: app.last_result.query == "deploy", message="its preview")
        assert app.screen is app.main and len(app.store.entries()) == entries
        app.main.current_pane().focus()
        await pilot.pause()
        send_burst(app, "/postgres")  # "o" would cycle the order, "s" open the settings
        box = app.main.query_one("#filter")
        await wait_until(pilot, lambda: box.value == "postgres", message="the burst in the filter")
        assert app.screen is app.main and app.focused is box


async def test_pane_keys_sent_before_slash_or_p_in_the_same_burst_move_the_pane(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await settled(pilot, app)
        for burst, box_id in (("jj/", "#filter"), ("jjp", "#query")):
            pane = app.main.current_pane()
            pane.focus()
            await pilot.pause()
            start = pane.cursor or 0
            send_burst(app, burst)  # j, j for the pane (sent while it has the focus), then the input
            box = app.main.query_one(box_id)
            await wait_until(pilot, lambda box=box: app.focused is box, message="the input focused")
            await wait_until(pilot, lambda pane=pane, start=start: pane.cursor == start + 2, message="both moves made")
