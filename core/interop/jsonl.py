"""JSON Lines: one object per memory with every field of SPEC §2, UTF-8 (no \\u escapes).

Fields: id, layer, category, tags, source, importance, status, section, name, description,
text, updated_at (ISO 8601, UTC), path (relative to its layer root), conversation_id,
conversation_title, origin, and extra when it holds anything. Written and read back,
every field is the same (`updated_at` to the microsecond).

Also reads the earlier `memtui export` format, one conversation memory per line:
`{"memory": {id, type, category, content, tags (a JSON array in a string), source,
conversation_id, created_at, updated_at (ms)}, "conversation": {id, title,
workspace_path, created_at, updated_at} | null}`. Its conversation (and the memory's
created_at) is kept in `extra` so the caller can recreate the rows.

A bad line is a problem naming the file and line; the other lines still import.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import LAYERS, ImportProblem, Memory, ReadResult
from ._files import SourceError, missing_source, read_text, write_all

FILE = "memories.jsonl"
MAX_JSONL_BYTES = 256 * 1024 * 1024  # an export of a whole home; each memory is still capped below
MAX_LINE_CHARS = 1024 * 1024
FIELDS = ("id", "layer", "category", "tags", "source", "importance", "status", "section", "name", "description",
          "text", "updated_at", "path", "conversation_id", "conversation_title", "origin")
_STRINGS = ("id", "category", "source", "section", "name", "description", "path", "conversation_title", "origin")


def default_source(workspace: Path, user_home: Path) -> Path:
    return Path(workspace) / FILE


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat()


def _epoch(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise TypeError("updated_at is not a time")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        when = datetime.fromisoformat(value.strip())
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return when.timestamp()
    raise TypeError("updated_at is not a time")


def to_record(memory: Memory) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": memory.id, "layer": memory.layer, "category": memory.category, "tags": list(memory.tags),
        "source": memory.source, "importance": memory.importance, "status": memory.status,
        "section": memory.section, "name": memory.name, "description": memory.description, "text": memory.text,
        "updated_at": _iso(memory.updated_at), "path": memory.path, "conversation_id": memory.conversation_id,
        "conversation_title": memory.conversation_title, "origin": memory.origin,
    }
    if memory.extra:
        record["extra"] = memory.extra
    return record


def _tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            parsed = json.loads(value) if value.lstrip().startswith("[") else value.split(",")
        except ValueError:
            parsed = value.split(",")
        value = parsed
    if not isinstance(value, list) or not all(isinstance(t, (str, int, float)) for t in value):
        raise TypeError("tags must be a list of strings or a comma-separated string")
    return tuple(str(t).strip() for t in value if str(t).strip())


def _from_current(obj: dict[str, Any], origin: str) -> Memory:
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError('"text" must be a non-empty string')
    layer = obj.get("layer", "project")
    if layer not in LAYERS:
        raise ValueError(f'"layer" must be one of {", ".join(LAYERS)}')
    for key in _STRINGS:
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise ValueError(f'"{key}" must be a string')
    for key in ("importance", "status"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise ValueError(f'"{key}" must be a string')
    extra = obj.get("extra") or {}
    if not isinstance(extra, dict):
        raise TypeError('"extra" must be an object')
    conversation_id = obj.get("conversation_id")
    if conversation_id is not None and not isinstance(conversation_id, str):
        raise ValueError('"conversation_id" must be a string or null')
    return Memory(
        text=text, layer=layer, category=obj.get("category") or "", tags=_tags(obj.get("tags")),
        importance=obj.get("importance") or "normal", status=obj.get("status") or "active",
        section=obj.get("section") or "", name=obj.get("name") or "", description=obj.get("description") or "",
        updated_at=_epoch(obj.get("updated_at")), origin=obj.get("origin") or origin, extra=extra,
        conversation_id=conversation_id, conversation_title=obj.get("conversation_title") or "",
        id=obj.get("id") or "", source=obj.get("source") or "", path=obj.get("path") or "",
    )


def _from_conversation_export(obj: dict[str, Any], origin: str) -> Memory:
    row = obj["memory"]
    content = row.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError('"memory.content" must be a non-empty string')
    if not isinstance(row.get("id"), str):
        raise TypeError('"memory.id" must be a string')
    conversation = obj.get("conversation")
    if conversation is not None and not isinstance(conversation, dict):
        raise ValueError('"conversation" must be an object or null')
    layer = row.get("type") or "conversation"
    if layer not in LAYERS:
        raise ValueError(f'"memory.type" must be one of {", ".join(LAYERS)}')
    updated = row.get("updated_at")
    if updated is not None and (isinstance(updated, bool) or not isinstance(updated, (int, float))):
        raise ValueError('"memory.updated_at" must be milliseconds')
    extra: dict[str, Any] = {}
    if row.get("created_at") is not None:
        extra["created_at"] = row["created_at"]
    if conversation:
        extra["conversation"] = conversation
    return Memory(
        text=content, layer=layer, category=row.get("category") or "", tags=_tags(row.get("tags")),
        updated_at=None if updated is None else updated / 1000.0, origin=origin, extra=extra,
        conversation_id=row.get("conversation_id"),
        conversation_title=(conversation or {}).get("title") or "", id=row["id"], source=row.get("source") or "",
    )


def parse_line(line: str, origin: str) -> Memory:
    obj = json.loads(line)
    if not isinstance(obj, dict):
        raise TypeError("each line must be a JSON object")
    if isinstance(obj.get("memory"), dict):
        return _from_conversation_export(obj, origin)
    return _from_current(obj, origin)


def read(source: Path) -> ReadResult:
    result = ReadResult()
    problem = missing_source(source)
    if problem:
        result.problems.append(problem)
        return result
    if source.is_dir():
        source = source / FILE
    try:
        text = read_text(source, None, MAX_JSONL_BYTES)
    except SourceError as exc:
        result.problems.append(ImportProblem(str(source), str(exc)))
        return result
    # Only "\n" ends a record: str.splitlines would also split on U+2028 or U+0085, which
    # json.dumps leaves as they are inside strings.
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        where = f"{source}:{number}"
        if len(line) > MAX_LINE_CHARS:
            result.problems.append(ImportProblem(where, "line is over 1 MiB; skipped"))
            continue
        try:
            result.memories.append(parse_line(line, str(source)))
        except (ValueError, TypeError, KeyError, OverflowError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            result.problems.append(ImportProblem(where, f"not a memory: {reason or type(exc).__name__}"))
    return result


def render(memories: list[Memory]) -> str:
    return "".join(json.dumps(to_record(m), ensure_ascii=False, default=str) + "\n" for m in memories)


def write(memories: list[Memory], dest: Path) -> list[Path]:
    target = dest if dest.suffix.lower() in (".jsonl", ".ndjson", ".json") else dest / FILE
    return write_all({target: render(memories)})
