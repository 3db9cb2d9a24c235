"""JSON Lines, the lossless backup (SPEC §9): one JSON object per line, UTF-8 (no \\u escapes).

A backup made by `memtui export jsonl` holds three kinds of line:

    {"kind": "file", "layer": "user"|"project", "path": "<relative to the layer root>", "text": "<the file>"}
    {"kind": "conversation", <every column of the conversations row>}
    {"kind": "row", <every column of the memories row of type 'conversation'>}
    {"kind": "reviewed", "layer": "user"|"project", "path": "<file>", "occurrence": <n>, "sha256": "<text>"}
    {"kind": "reviewed", "layer": "conversation", "id": "<row id>", "sha256": "<text>"}

A `reviewed` line carries the review state (SPEC §12) of one entry the person had accepted:
where it is (a file's path and which entry of that text it is, counting from 0, or a row's
id) and the sha256 of its exact text; never the text itself. Markdown entry ids name the
file's absolute path, so they do not travel: a restore finds the entry again by place and
text, and marks reviewed only an entry it brings back exactly as it was.

A file's `text` is the whole file exactly (memory files are UTF-8, so the bytes are the
text's UTF-8 encoding: BOM, CRLF and frontmatter as they were). Rows and conversations keep
every column as stored (`tags` the JSON string it is in the database, times in ms), so an
import into an empty home and workspace gives back every file byte for byte and every row
field for field.

Two older shapes are still read, one memory per line: memtui's earlier entry records
(id, layer, category, tags, source, importance, status, section, name, description, text,
updated_at in ISO 8601, path, conversation_id, conversation_title, origin, extra), and
`{"memory": {...row...}, "conversation": {...} | null}`.

A bad line is a problem naming the file and line; the other lines still import.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import jsondata
from .. import markdown as md
from ..model import FILE_LAYERS, LAYER_OF, LAYERS, STATUS_OF, Layer, importance_of, status_of
from . import BackupFile, ImportProblem, Memory, ReadResult
from ._files import SourceError, read_text, reader, write_all

ONE_FILE = True  # an export writes one file
FILE = "memories.jsonl"
MAX_JSONL_BYTES = 256 * 1024 * 1024  # an export of a whole home; each memory is still capped below
MAX_LINE_CHARS = 1024 * 1024
ROW_COLUMNS = ("id", "type", "category", "content", "tags", "source", "conversation_id", "file_path", "created_at",
               "updated_at")
CONVERSATION_COLUMNS = ("id", "title", "workspace_path", "created_at", "updated_at")
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
        "source": memory.source, "importance": memory.importance, "status": memory.raw_status or memory.status,
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


def _raw_status(value: str | None) -> str:
    """A status other than `active` or `archived` as written (`superseded`, free text), kept
    beside what it means (`status_of`), so it is written back as it was."""
    return "" if not value or value in STATUS_OF else value


def _from_current(obj: dict[str, Any], origin: str) -> Memory:
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError('"text" must be a non-empty string')
    layer = obj.get("layer", Layer.PROJECT)
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
        text=text, layer=LAYER_OF[layer], category=obj.get("category") or "", tags=_tags(obj.get("tags")),
        importance=importance_of(obj.get("importance")), status=status_of(obj.get("status")),
        raw_status=_raw_status(obj.get("status")),
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
    layer = row.get("type") or Layer.CONVERSATION
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
        text=content, layer=LAYER_OF[layer], category=row.get("category") or "", tags=_tags(row.get("tags")),
        updated_at=None if updated is None else updated / 1000.0, origin=origin, extra=extra,
        conversation_id=row.get("conversation_id"),
        conversation_title=(conversation or {}).get("title") or "", id=row["id"], source=row.get("source") or "",
    )


def parse_line(line: str, origin: str) -> Memory:
    obj = jsondata.loads(line)
    if not isinstance(obj, dict):
        raise TypeError("each line must be a JSON object")
    if isinstance(obj.get("memory"), dict):
        return _from_conversation_export(obj, origin)
    return _from_current(obj, origin)


def _safe_rel(path: object) -> str:
    """A backup file's path: relative, POSIX, a `.md` file, no hidden or `..` part."""
    if not isinstance(path, str) or not path.endswith(".md"):
        raise ValueError('"path" must be a relative path of a .md file')
    parts = path.split("/")
    if path.startswith("/") or "\\" in path or "\x00" in path or any(
            not p or p in (".", "..") or p.startswith(".") for p in parts):
        raise ValueError('"path" must stay inside its memory root (no absolute, hidden or ".." part)')
    return path


def _file_line(obj: dict[str, Any], origin: str, result: ReadResult) -> None:
    layer = obj.get("layer")
    if layer not in FILE_LAYERS:
        raise ValueError('"layer" of a file must be user or project')
    rel = _safe_rel(obj.get("path"))
    text = obj.get("text")
    if not isinstance(text, str):
        raise ValueError('"text" must be a string')
    try:
        parsed = md.parse_text(text)
    except md.MemoryFileError as exc:
        raise ValueError(f"the file would not load: {exc}") from None
    result.files.append(BackupFile(layer, rel, text))
    name = md.text_field(parsed.meta, "name")
    result.memories += [Memory(text=e.text, layer=LAYER_OF[layer], section=e.section, name=name, origin=origin, path=rel,
                               source=md.text_field(parsed.meta, "source"), extra={"backup": "file"})
                        for e in parsed.entries]


def _columns(obj: dict[str, Any], columns: tuple[str, ...]) -> dict[str, Any]:
    unknown = sorted(set(obj) - set(columns) - {"kind"})
    if unknown:
        raise ValueError(f"unknown column {unknown[0]!r}")
    row = {k: obj.get(k) for k in columns}
    if not isinstance(row["id"], str) or not row["id"]:
        raise ValueError('"id" must be a non-empty string')
    for key in ("created_at", "updated_at"):
        if isinstance(row[key], bool) or not isinstance(row[key], int):
            raise ValueError(f'"{key}" must be milliseconds (an integer)')
    for key, value in row.items():
        if value is not None and not isinstance(value, (str, int)):
            raise ValueError(f'"{key}" must be a string, an integer or null')
    return row


def _row_line(obj: dict[str, Any], origin: str, result: ReadResult) -> None:
    row = _columns(obj, ROW_COLUMNS)
    if row["type"] != Layer.CONVERSATION:
        raise ValueError('a row must be of type "conversation" (file memories travel as files)')
    if not isinstance(row["content"], str) or not row["content"].strip():
        raise ValueError('"content" must be a non-empty string')
    for key in ("category", "source"):
        if not isinstance(row[key], str):
            raise ValueError(f'"{key}" must be a string')
    result.rows.append(row)
    result.memories.append(Memory(
        text=row["content"], layer=Layer.CONVERSATION, category=row["category"], tags=_tags(row["tags"]),
        updated_at=row["updated_at"] / 1000.0, origin=origin, conversation_id=row["conversation_id"],
        id=row["id"], source=row["source"], extra={"backup": "row"}))


def _conversation_line(obj: dict[str, Any], result: ReadResult) -> None:
    result.conversations.append(_columns(obj, CONVERSATION_COLUMNS))


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _reviewed_line(obj: dict[str, Any], result: ReadResult) -> None:
    layer, digest = obj.get("layer"), obj.get("sha256")
    if layer not in LAYERS:
        raise ValueError(f'"layer" must be one of {", ".join(LAYERS)}')
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        raise ValueError('"sha256" must be 64 lowercase hex digits')
    if layer == Layer.CONVERSATION:
        columns, where, occurrence = {"kind", "layer", "id", "sha256"}, obj.get("id"), 0
        if not isinstance(where, str) or not where:
            raise ValueError('"id" must be a non-empty string')
    else:
        columns, where, n = {"kind", "layer", "path", "occurrence", "sha256"}, _safe_rel(obj.get("path")), \
            obj.get("occurrence")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError('"occurrence" must be a whole number from 0')
        occurrence = n
    unknown = sorted(set(obj) - columns)
    if unknown:
        raise ValueError(f"unknown column {unknown[0]!r}")
    result.reviewed.append((layer, where, digest, occurrence))


def _parse_into(line: str, origin: str, result: ReadResult) -> None:
    obj = jsondata.loads(line)  # depth-limited, no lone surrogate: this record's error alone
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if kind is None:
        result.memories.append(parse_line(line, origin))
    elif kind == "file":
        _file_line(obj, origin, result)
    elif kind == "row":
        _row_line(obj, origin, result)
    elif kind == "conversation":
        _conversation_line(obj, result)
    elif kind == "reviewed":
        _reviewed_line(obj, result)
    else:
        raise ValueError(f"unknown kind {kind!r}")


@reader
def read(source: Path, result: ReadResult) -> None:
    if source.is_dir():
        source = source / FILE
    try:
        text = read_text(source, None, MAX_JSONL_BYTES)
    except SourceError as exc:
        result.problems.append(ImportProblem(str(source), str(exc)))
        return
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
            _parse_into(line, str(source), result)
        except (ValueError, TypeError, KeyError, OverflowError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            result.problems.append(ImportProblem(where, f"not a memory: {reason or type(exc).__name__}"))


def render(memories: list[Memory]) -> str:
    return "".join(json.dumps(to_record(m), ensure_ascii=False, default=str) + "\n" for m in memories)


def _dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


def render_backup(files: list[BackupFile], conversations: list[dict[str, Any]], rows: list[dict[str, Any]],
                  reviewed: list[tuple[str, str, str, int]] | None = None) -> str:
    """The backup: every file whole, then every conversation, then every conversation row,
    then the review state of the accepted entries."""
    out = [_dumps({"kind": "file", "layer": f.layer, "path": f.path, "text": f.text}) for f in files]
    out += [_dumps({"kind": "conversation", **{k: c.get(k) for k in CONVERSATION_COLUMNS}}) for c in conversations]
    out += [_dumps({"kind": "row", **{k: r.get(k) for k in ROW_COLUMNS}}) for r in rows]
    for layer, where, digest, occurrence in reviewed or ():
        place = {"id": where} if layer == Layer.CONVERSATION else {"path": where, "occurrence": occurrence}
        out.append(_dumps({"kind": "reviewed", "layer": layer, **place, "sha256": digest}))
    return "".join(out)


def target(dest: Path) -> Path:
    return dest if dest.suffix.lower() in (".jsonl", ".ndjson", ".json") else dest / FILE


def layout(memories: list[Memory], dest: Path, name: Callable[[str], str] = str) -> dict[Path, str]:
    """Memory records (the older entry shape) in one file; the backup is `render_backup`."""
    where = target(dest)
    return {where.with_name(name(where.name)): render(memories)}


def write(memories: list[Memory], dest: Path) -> list[Path]:
    return write_all(layout(memories, dest))
