"""SPEC §18 from the command line, the hook and MCP: real processes, real files, a real muse.db,
and a fixed clock (`--now`) wherever a level or an expiry is judged."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memtui.core import history
from memtui.core.paths import Paths
from tests.cli.run import memtui
from tests.helpers import enable, write

NOTES = "---\nupdatedAt: 2026-11-01\n---\n\n- Use vitest, not jest\n- Prefer tabs over spaces\n"
TEMP = "---\nupdatedAt: 2026-11-20\nexpires: 2026-11-30\n---\n\n- the staging server is down this week\n"


@pytest.fixture
def ws(paths: Paths) -> Paths:
    write(paths.user_root / "notes.md", NOTES)
    write(paths.project_root / "temp.md", TEMP)
    enable(paths, {"memory": {"decay": {"halfLifeDays": 30}}})
    return paths


def listed(paths: Paths, *args: str) -> dict[str, dict]:
    r = memtui(paths, "list", "--json", *args)
    assert r.returncode == 0, r.stderr
    return {e["source"]: e for e in json.loads(r.stdout)["entries"]}


def test_list_json_shows_strength_and_level_and_now_moves_them(ws):
    early = listed(ws, "--now", "2026-11-03")
    late = listed(ws, "--now", "2027-03-01")
    assert early["notes.md:5"]["level"] == "active" and late["notes.md:5"]["level"] == "to_evict"
    assert early["notes.md:5"]["strength"] > late["notes.md:5"]["strength"]
    assert late["temp.md:6"]["expired"] is True and late["temp.md:6"]["expires"] == "2026-12-01T00:00:00+00:00"
    assert early["temp.md:6"]["expired"] is False
    plain = memtui(ws, "list", "--now", "2027-03-01")
    assert "(to evict)" in plain.stdout and "(expired)" in plain.stdout


def test_list_json_is_unchanged_without_decay_pins_or_expiry(paths: Paths):
    write(paths.user_root / "notes.md", NOTES)
    enable(paths)
    entry = next(iter(listed(paths).values()))
    assert set(entry) == {"id", "layer", "source", "category", "tags", "origin", "importance", "status", "section",
                          "text", "updated_at", "path", "line_start", "line_end"}


def test_pin_unpin_and_undo(ws):
    r = memtui(ws, "pin", "notes.md:6")
    assert r.returncode == 0 and "Pinned notes.md:6" in r.stdout, r.stderr
    pinned = listed(ws, "--now", "2027-03-01")["notes.md:6"]
    assert (pinned["pinned"], pinned["level"], pinned["strength"]) == (True, "active", 1.0)
    again = memtui(ws, "pin", "notes.md:6")
    assert again.returncode == 0 and "already pinned" in again.stderr
    assert memtui(ws, "undo").returncode == 0
    assert "pinned" not in listed(ws, "--now", "2027-03-01")["notes.md:6"]
    assert memtui(ws, "pin", "notes.md:6").returncode == 0
    r = memtui(ws, "unpin", "notes.md:6")
    assert r.returncode == 0 and "Unpinned" in r.stdout
    assert memtui(ws, "pin", "nothing.md:1").returncode == 1


def test_remember_expires_and_expire_never(ws):
    r = memtui(ws, "remember", "deploy freeze until friday", "--expires", "2026-11-28")
    assert r.returncode == 0 and "expires 2026-11-29T00:00:00+00:00" in r.stdout, r.stderr
    preview = memtui(ws, "preview", "deploy freeze", "--json", "--now", "2026-11-29T00:00:01")
    statuses = {c["source"]: c["status"] for c in json.loads(preview.stdout)["candidates"]}
    assert statuses["notes.md:7"] == "expired"
    assert memtui(ws, "expire", "notes.md:7", "never").returncode == 0
    preview = memtui(ws, "preview", "deploy freeze", "--json", "--now", "2026-11-29T00:00:01")
    assert {c["source"]: c["status"] for c in json.loads(preview.stdout)["candidates"]}["notes.md:7"] == "included"
    again = memtui(ws, "remember", "deploy freeze until friday", "--expires", "7d")  # a duplicate: said, not dropped
    assert again.returncode == 0 and "--expires not applied" in again.stderr
    bad = memtui(ws, "remember", "x y z", "--expires", "someday")
    assert bad.returncode == 2 and "neither a duration" in bad.stderr


def test_preview_json_carries_strength_and_level(ws):
    r = memtui(ws, "preview", "vitest", "--json", "--now", "2026-12-25")
    cands = {c["source"]: c for c in json.loads(r.stdout)["candidates"]}
    assert cands["notes.md:5"]["level"] == "to_compress" and cands["temp.md:6"]["status"] == "expired"
    r = memtui(ws, "preview", "vitest", "--json", "--now", "2026-11-02")
    assert {c["source"]: c["level"] for c in json.loads(r.stdout)["candidates"]}["notes.md:5"] == "active"


def test_forecast_json_and_text(ws):
    r = memtui(ws, "forecast", "--days", "7", "--now", "2026-11-27", "--json")
    data = json.loads(r.stdout)
    assert r.returncode == 0 and [(i["source"], i["then"]) for i in data["entries"]] == [("temp.md:6", "expired")]
    assert data["now"] == "2026-11-27T00:00:00+00:00" and data["decay"] == {"halfLifeDays": 30.0}
    week = memtui(ws, "forecast", "--days", "40", "--now", "2026-11-27")
    assert "temp.md:6" in week.stdout and "expired 2026-12-01" in week.stdout and "to_compress" in week.stdout


def test_doctor_reports_expired_and_to_evict(ws):
    write(ws.user_root / "old.md", "---\nupdatedAt: 2020-01-01\n---\n\n- an ancient habit\n")
    write(ws.project_root / "gone.md", "---\nexpires: 2020-01-01\n---\n\n- a past freeze\n")
    r = memtui(ws, "doctor", "--json")
    kinds = {(f["kind"], f["source"]) for f in json.loads(r.stdout)["findings"]}
    assert ("to_evict", "old.md:5") in kinds and ("expired", "gone.md:5") in kinds
    assert r.returncode == 1


def test_private_on_off_status(ws):
    r = memtui(ws, "private", "on", "--for", "2h")
    assert r.returncode == 0 and "Private until" in r.stdout
    status = memtui(ws, "private", "status", "--json")
    assert json.loads(status.stdout)["private"] is True
    assert "Private: until" in memtui(ws, "status").stdout
    shown = memtui(ws, "preview", "vitest")
    assert shown.stdout == "" and "private mode" in shown.stderr
    assert memtui(ws, "private", "on", "--for", "soon").returncode == 2
    assert memtui(ws, "private", "off").stdout.startswith("Private mode off")
    assert json.loads(memtui(ws, "private", "status", "--json").stdout) == {"private": False, "until": None}
    assert "vitest" in memtui(ws, "preview", "vitest").stdout


def test_the_hook_says_private_prints_nothing_and_records_nothing(ws):
    assert memtui(ws, "private", "on").returncode == 0
    stdin = json.dumps({"prompt": "vitest", "cwd": str(ws.workspace), "session_id": "s",
                        "hook_event_name": "UserPromptSubmit"}).encode()
    r = subprocess.run([sys.executable, "-m", "memtui.cli.hook"], input=stdin, capture_output=True, timeout=60,
                       env={**os.environ, "MUSE_HOME": str(ws.home)})
    assert (r.returncode, r.stdout) == (0, b"") and b"private until" in r.stderr
    assert history.records(ws.db_path) == []
    memtui(ws, "private", "off")
    r = subprocess.run([sys.executable, "-m", "memtui.cli.hook"], input=stdin, capture_output=True, timeout=60,
                       env={**os.environ, "MUSE_HOME": str(ws.home)})
    assert b"vitest" in r.stdout and len(history.records(ws.db_path)) == 1


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_mcp_answers_private_and_learns_nothing(ws, anyio_backend):
    from tests.cli.test_mcp import session_for

    assert memtui(ws, "private", "on").returncode == 0
    async with session_for(ws) as session:
        for name, arguments in (("preview_injection", {"message": "vitest"}), ("remember", {"text": "a new fact"})):
            result = await session.call_tool(name, arguments)
            assert result.is_error and result.content[0].text.startswith("memory is private until"), name
    assert "a new fact" not in (ws.user_root / "notes.md").read_text()


def test_a_memtui_pin_keeps_a_memory_present_in_focused_mode_and_unpin_lets_it_go(paths: Paths):
    """SPEC §15/§18: focused mode injects what the message needs, and always a pinned memory,
    whether the pin is the file's `pinned: true` or `memtui pin` on one entry."""
    write(paths.user_root / "notes.md", NOTES)
    enable(paths, {"memory": {"injection": "focused"}})

    def injected() -> list[str]:
        r = memtui(paths, "preview", "should I use vitest or jest", "--json")
        assert r.returncode == 0, r.stderr
        return [c["source"] for c in json.loads(r.stdout)["candidates"] if c["status"] == "included"]

    assert injected() == ["notes.md:5"]  # the message needs the vitest memory alone
    assert memtui(paths, "pin", "notes.md:6").returncode == 0
    assert injected() == ["notes.md:6", "notes.md:5"]  # the pinned one first, the needed one still there
    assert memtui(paths, "unpin", "notes.md:6").returncode == 0
    assert injected() == ["notes.md:5"]
