"""`memtui mcp` as a client sees it: a real subprocess spoken to with the `mcp` SDK's client
over stdio."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memtui.core.paths import Paths

from ..helpers import enable, write

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


@asynccontextmanager
async def session_for(paths: Paths):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace), "mcp"],
        env={"PATH": "/usr/bin:/bin", "HOME": str(paths.home.parent)},
    )
    async with stdio_client(params) as (read, write_stream), ClientSession(read, write_stream) as session:
        await session.initialize()
        yield session


def payload(result) -> dict:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


async def test_tools_are_listed_with_descriptions_and_schemas(paths):
    async with session_for(paths) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == {"search_memories", "list_memories", "preview_injection", "remember", "forget"}
    for tool in tools.values():
        assert len(tool.description or "") > 60
        assert tool.input_schema["type"] == "object"
    assert tools["remember"].input_schema["properties"]["layer"]["enum"] == ["user", "project"]
    assert tools["forget"].input_schema["required"] == ["id"]


async def test_preview_remember_search_forget(paths):
    enable(paths)
    write(paths.user_root / "preferences.md", "- Use vitest, not jest\n")
    async with session_for(paths) as session:
        preview = payload(await session.call_tool("preview_injection", {"message": "set up vitest"}))
        assert preview["text"].startswith("## Memory") and "Use vitest, not jest" in preview["text"]
        assert preview["injected"] == ["preferences.md:1"]

        added = payload(await session.call_tool("remember", {"text": "The API lives in api/server.py", "layer": "project"}))
        assert added["added"] is True and added["memory"]["layer"] == "project"
        again = payload(await session.call_tool("remember", {"text": "the API lives in api/server.py.", "layer": "project"}))
        assert again["added"] is False and again["memory"]["id"] == added["memory"]["id"]

        found = payload(await session.call_tool("search_memories", {"query": "where is the API server"}))
        assert found["memories"][0]["id"] == added["memory"]["id"]

        gone = payload(await session.call_tool("forget", {"id": added["memory"]["id"]}))
        assert gone["deleted"]["text"] == "The API lives in api/server.py"
        missing = await session.call_tool("forget", {"id": added["memory"]["id"]})
        assert missing.is_error and "no memory has the id" in missing.content[0].text
    assert "api/server.py" not in (paths.project_root / "context.md").read_text()


async def test_refused_while_memory_is_off(paths):
    write(paths.user_root / "notes.md", "- keep me\n")
    async with session_for(paths) as session:
        refused = await session.call_tool("remember", {"text": "something new"})
        assert refused.is_error and "Memory is off" in refused.content[0].text and "memtui enable" in refused.content[0].text
        listed = payload(await session.call_tool("list_memories", {}))
        entry_id = listed["memories"][0]["id"]
        no_forget = await session.call_tool("forget", {"id": entry_id})
        assert no_forget.is_error and "Memory is off" in no_forget.content[0].text
        preview = payload(await session.call_tool("preview_injection", {"message": "keep"}))
        assert preview["text"] == "" and preview["disabled_reason"] == "switch_off"
    assert (paths.user_root / "notes.md").read_text() == "- keep me\n"
