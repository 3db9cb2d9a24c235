"""The preview's per-reason lists: made when their fold is opened, and always those of the
query on screen (a fold left open follows each new query)."""

from __future__ import annotations

from textual.widgets import Collapsible

from memtui.core.serve import build_injection
from memtui.tui.app import MemtuiApp
from tests.tui.conftest import shown, wait_until


def below_gate_texts(paths, query: str) -> list[str]:
    result = build_injection(paths.workspace, query, home=paths.home)
    return [c.entry.text for c in result.candidates if c.status == "below_gate"]


async def test_a_reason_list_is_shown_when_opened_and_follows_the_query(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None, message="app loaded")
        await pilot.press("p", *"slow query")
        await wait_until(pilot, lambda: app.last_result.query == "slow query", message="the preview")
        listing = app.query_one("#left-below_gate-list")
        assert shown(listing).strip() == ""  # collapsed: not made
        app.query_one("#left-below_gate", Collapsible).collapsed = False
        await wait_until(pilot, lambda: shown(listing).strip() != "", message="the list made on opening")
        first = shown(listing, width=400)
        assert any(text[:30] in first for text in below_gate_texts(demo_paths, "slow query")[:5])
        await pilot.press(*" pnpm")
        await wait_until(pilot, lambda: app.last_result.query == "slow query pnpm", message="the next preview")
        await wait_until(pilot, lambda: shown(listing, width=400) != first, message="the open list follows")
        now = shown(listing, width=400)
        assert any(text[:30] in now for text in below_gate_texts(demo_paths, "slow query pnpm")[:5])


async def test_a_large_stores_near_misses_follow_once_the_typing_pauses(demo_paths):
    from memtui.tui.startup import Tuning

    app = MemtuiApp(demo_paths, watch=False, tuning=Tuning(left_out_at_once=0))  # the demo as if it were large
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None, message="app loaded")
        await pilot.press("p", *"slow query")
        await wait_until(pilot, lambda: app.last_result.query == "slow query", message="the preview")
        left = app.query_one("#left-out")
        expected = build_injection(demo_paths.workspace, "slow query", home=demo_paths.home)
        total = sum(1 for c in expected.candidates if c.status != "included")
        assert f"Left out ({total})" in shown(left)  # the count at once
        await wait_until(pilot, lambda: "nearest first…" not in shown(left) and len(shown(left).splitlines()) > 2,
                         message="the near misses, after the pause")
        near = max((c for c in expected.candidates if c.status != "included"), key=lambda c: c.score)
        assert near.entry.text[:25] in shown(left, width=400)


def test_a_folds_title_is_shortened_by_whole_words():
    """The injected fold's title drops `tokens` when the pane is narrow; a left-out fold that
    says "over the token budget" keeps every word (it once read "over theen budget")."""
    from rich.cells import cell_len

    from memtui.tui.widgets.preview import fit_title

    injected = "52 memories injected · 1400/2000 tokens · truncated · 1 clipped"
    assert fit_title(injected, 200) == injected
    assert fit_title(injected, 55) == "52 injected · 1400/2000 tokens · truncated · 1 clipped"
    assert fit_title(injected, 50) == "52 injected · 1400/2000 · truncated · 1 clipped"
    assert fit_title(injected, 45) == "52 injected · 1400/2000 · trunc. · 1 clipped"
    assert cell_len(fit_title(injected, 45)) <= 45
    left_out = "29092 more over the token budget (first 60; all: memtui preview --json)"
    for width in (80, 40, 20):
        assert "over the token budget" in fit_title(left_out, width)


async def test_a_superseded_memory_left_out_has_its_own_fold(tmp_path):
    """`Left out (1)` over an empty list: a superseded memory (SPEC §17) had no fold of its reason."""
    from memtui.core import actions
    from memtui.core.paths import Paths
    from memtui.core.store import MemoryStore
    from memtui.tui.app import MemtuiApp
    from tests.tui.conftest import screen_text, wait_until

    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    (ws / ".muse" / "settings.json").write_text('{"memoryEnabled": true}\n')
    (ws / ".muse" / "memory" / "context.md").write_text("- The API listens on port 8080\n- The API listens on port 9090\n")
    paths = Paths.resolve(home, ws)
    store = MemoryStore(paths)
    store.load()
    old, new = sorted(store.entries(), key=lambda e: e.line_start)
    actions.supersede(store, old, new)
    store.close()
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None
                         and "1 superseded" in screen_text(app), message="the superseded fold")
