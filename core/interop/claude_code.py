"""Claude Code's auto memory: `~/.claude/projects/<sanitised git root>/memory/`.

The folder holds `MEMORY.md`, an index without frontmatter (`- [Title](file.md) — hook`, of
which Claude Code loads at most 200 lines and 25,000 bytes), and one topic file per memory
with `name`, `description` and `type` frontmatter (`user`, `feedback`, `project`,
`reference`). Newer versions put `type` under `metadata:`, use kebab-case names and link
memories with `[[wikilinks]]`; both shapes are read. Feedback and project memories carry
`**Why:**` and `**How to apply:**` lines, which stay in the text.

`user`/`feedback` memories go to the user layer, `project`/`reference` ones to the project
layer. Anything in `MEMORY.md` that is not an index line or a truncation warning (older
versions kept notes there) is read as SPEC §2 entries of the project layer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NotRequired, TypedDict
from urllib.parse import unquote

from .. import markdown as md
from ..bounded_reader import read_regular
from ..model import Layer, importance_of, status_of
from . import ImportProblem, Memory, ReadResult, SourceText
from ._files import (
    SourceError,
    by_file,
    clean_rel,
    dump_yaml,
    first_heading,
    first_line,
    frontmatter,
    guarded,
    iter_files,
    kept_body,
    markdown_entries,
    mtime,
    one_line,
    read_text,
    reader,
    safe_rel,
    slug,
    source_text,
)
from .agents_md import render as render_sections

INDEX = "MEMORY.md"
MAX_INDEX_LINES = 200
MAX_INDEX_BYTES = 25_000
MAX_SANITISED = 200
TYPES = ("user", "feedback", "project", "reference")
USER_TYPES = ("user", "feedback")
CATEGORY = {"user": "preference", "feedback": "preference", "project": "knowledge", "reference": "knowledge"}
WARNING_PREFIX = "> WARNING: MEMORY.md is"

_INDEX_LINE = re.compile(
    r"\[(?P<title>(?:\\.|[^\]\\])*)\]\((?P<target><[^>\n]*>|[^)\s]+)(?:[ \t]+\"[^\"\n]*\")?\)"
    r"[ \t]*(?:(?:—|–|-|:)[ \t]*(?P<hook>.*))?"
)
_MARKER = re.compile(r"[ \t]*[-*+][ \t]+")
_WIKILINK = re.compile(r"\[\[([^\[\]\n|#]+)(?:[#|][^\[\]\n]*)?\]\]")
_ESCAPED = re.compile(r"\\(.)")
_HEADING = re.compile(r" {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*")


# ----------------------------------------------------------------------------- where


def git_root(workspace: Path) -> Path:
    """The canonical git root of `workspace`: a linked worktree maps to its main repository."""
    workspace = Path(workspace)
    for directory in (workspace, *workspace.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return directory
        if dot_git.is_file():
            return _main_worktree(directory, dot_git)
    return workspace


def _main_worktree(directory: Path, dot_git: Path) -> Path:
    try:  # a cloned repository ships these files: a FIFO or a huge file must not stall us
        text = read_regular(dot_git, 4096).decode("utf-8", errors="replace")
    except OSError:
        return directory
    match = re.match(r"gitdir:[ \t]*(.+)", text.strip())
    if not match:
        return directory
    gitdir = (directory / match.group(1).strip()).resolve()
    try:
        common = (gitdir / read_regular(gitdir / "commondir", 4096).decode("utf-8").strip()).resolve()
    except (OSError, UnicodeDecodeError):
        return directory  # a submodule: its own root
    return common.parent if common.name == ".git" else directory


def _java_hash(text: str) -> int:
    """JavaScript's `h = (h << 5) - h + s.charCodeAt(i) | 0` over UTF-16 code units."""
    data = text.encode("utf-16-le", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (h * 31 + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def _dashes(path: str) -> str:
    # The replacement works on UTF-16 code units: a character outside the BMP is two dashes.
    return "".join(ch if ch.isascii() and ch.isalnum() else "-" * (2 if ord(ch) > 0xFFFF else 1) for ch in path)


def sanitise(path: str) -> str:
    """Claude Code's project folder name for an absolute path.

    Every character other than ASCII letters and digits becomes `-`; a name over 200
    characters is cut to 200 and given `-<hash>` (base 36 of the path's 32-bit string hash).
    """
    name = _dashes(path)
    if len(name) <= MAX_SANITISED:
        return name
    return f"{name[:MAX_SANITISED]}-{_base36(abs(_java_hash(path)))}"


def project_folder(projects: Path, root: Path) -> Path:
    """The folder under `projects` for git root `root`.

    For a long name the hash suffix has changed between Claude Code versions, so an existing
    folder with the same 200-character prefix is preferred over the computed name.
    """
    name = sanitise(str(root))
    if len(name) <= MAX_SANITISED:
        return projects / name
    prefix = _dashes(str(root))[:MAX_SANITISED] + "-"
    try:
        found = sorted(p.name for p in projects.iterdir() if p.name.startswith(prefix) and p.is_dir())
    except OSError:
        found = []
    if name in found or not found:
        return projects / name
    with_memory = [n for n in found if (projects / n / "memory").is_dir()]
    return projects / (with_memory or found)[0]


def default_source(workspace: Path, user_home: Path) -> Path:
    return project_folder(Path(user_home) / ".claude" / "projects", git_root(Path(workspace))) / "memory"


# ----------------------------------------------------------------------------- reading


class _IndexLink(TypedDict):
    """A `- [Title](file.md) — hook` line of the index, kept with the topic file it links to."""

    title: str
    hook: str
    line: int  # 1-based
    raw: str  # the line as written
    section: str  # the heading it is under
    index: NotRequired[str]  # the whole index, kept with its first topic (see `read`)


def _index_links(text: str, folder: Path, problems: list[ImportProblem], index_path: Path) -> dict[str, _IndexLink]:
    """`- [Title](file.md) — hook` lines -> {relative file: its `_IndexLink`}."""
    links: dict[str, _IndexLink] = {}
    section = ""
    for number, line in enumerate(text.splitlines(), start=1):
        heading = _HEADING.fullmatch(line)
        if heading:
            section = heading.group(1).strip()
            continue
        marker = _MARKER.match(line)
        if not marker:
            continue
        match = _INDEX_LINE.fullmatch(line[marker.end():].rstrip())
        if not match:
            continue
        target = match.group("target").strip("<>")
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # a web link, not a topic file
        rel = os.path.normpath(unquote(target.split("#", 1)[0])).replace(os.sep, "/")
        if rel.startswith("../") or rel == ".." or os.path.isabs(rel):
            problems.append(ImportProblem(str(index_path), f"line {number} links outside the memory folder; ignored"))
            continue
        if not (folder / rel).is_file():
            problems.append(ImportProblem(str(index_path), f"line {number} links to {rel}, which is not in the folder"))
            continue
        links[rel] = {"title": _ESCAPED.sub(r"\1", match.group("title")), "hook": (match.group("hook") or "").strip(),
                      "line": number, "raw": line, "section": section}
    return links


def _is_index_or_warning(text: str) -> bool:
    if text.startswith((WARNING_PREFIX, WARNING_PREFIX[2:])):
        return True
    return "\n" not in text and _INDEX_LINE.fullmatch(text.strip()) is not None


def _index_notes(path: Path, text: str, result: ReadResult) -> list[Memory]:
    _, entries = markdown_entries(text)
    when = mtime(path)
    notes = [Memory(text=e.text, layer=Layer.PROJECT, section=e.section, updated_at=when, origin=str(path),
                    extra={"file": INDEX})
             for e in entries if not _is_index_or_warning(e.text)]
    if notes:  # the index as it was, so an export can give it back when nothing changed
        result.sources[str(path)] = SourceText("", text, INDEX, {"index": text})
    return notes


def _topic(path: Path, rel: str, folder: Path, link: _IndexLink | None, result: ReadResult) -> Memory | None:
    text = read_text(path, folder)
    result.sources[str(path)] = source_text(text, rel)
    meta, body = frontmatter(text)
    body_text = body.strip()
    if not body_text:
        raise SourceError("no memory text after the frontmatter")
    kind = meta.get("type")
    nested = meta.get("metadata")
    if kind is None and isinstance(nested, dict):
        kind = nested.get("type")
    kind = str(kind).strip().lower() if kind is not None else ""
    extra: dict[str, Any] = {"file": rel}
    if kind:
        extra["type"] = kind
    links = sorted({m.group(1).strip() for m in _WIKILINK.finditer(body_text)})
    if links:
        extra["links"] = links
    if link:
        extra["index_title"] = link["title"]
        if link["hook"]:
            extra["index_hook"] = link["hook"]
        extra["index_line"] = link["raw"]
        if "index" in link:
            extra["index"] = link["index"]
        if link["section"]:
            extra["index_section"] = link["section"]
    importance = md.text_field(meta, "importance")
    status = md.text_field(meta, "status")
    return Memory(
        text=body_text,
        layer=Layer.USER if kind in USER_TYPES else Layer.PROJECT,
        category=CATEGORY.get(kind, md.text_field(meta, "category")),
        tags=md.tags_of(meta),
        importance=importance_of(importance),
        status=status_of(status),
        section=first_heading(body),
        name=md.text_field(meta, "name") or Path(rel).stem,
        description=one_line(md.text_field(meta, "description")),
        updated_at=md.frontmatter_updated_at(meta) or mtime(path),
        origin=str(path),
        extra=extra,
    )


@reader
def read(source: Path, result: ReadResult) -> None:
    if source.is_file():
        if source.name != INDEX:
            memory = guarded(source, result.problems, _topic, source, source.name, source.parent, None, result)
            if memory:
                result.memories.append(memory)
            return
        source = source.parent
    if not (source / INDEX).exists() and (source / "memory").is_dir():
        source = source / "memory"  # given the project folder rather than its memory folder
    folder = source
    links: dict[str, _IndexLink] = {}
    index_path = folder / INDEX
    notes: list[Memory] = []
    raw: list[str] = []
    if os.path.lexists(index_path):
        def read_index() -> None:
            text = read_text(index_path, folder)
            links.update(_index_links(text, folder, result.problems, index_path))
            notes.extend(_index_notes(index_path, text, result))
            raw.append(text)
        guarded(index_path, result.problems, read_index)
    if raw and not notes and links:
        # the index as it was (headings, blank lines, its title), kept with its first topic,
        # so an export can give MEMORY.md back as it was while nothing changed
        links[next(iter(links))]["index"] = raw[0]
    for path in iter_files(folder, ".md", result.problems):
        rel = path.relative_to(folder).as_posix()
        if rel == INDEX:
            continue
        memory = guarded(path, result.problems, _topic, path, rel, folder, links.get(rel), result)
        if memory:
            result.memories.append(memory)
    result.memories.extend(notes)


# ----------------------------------------------------------------------------- writing


def _type_for(memory: Memory) -> str:
    kind = str(memory.extra.get("type", "")).lower()
    if kind in TYPES:
        return kind
    if memory.layer == Layer.USER:
        return "feedback"
    return "reference" if memory.category == "reference" else "project"


def _escape_title(title: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", one_line(title))


def _link_target(file: str) -> str:
    return f"<{file}>" if re.search(r"[\s()<>]", file) else file


def _index_line(title: str, file: str, hook: str) -> str:
    line = f"- [{_escape_title(title)}]({_link_target(file)})"
    if hook:
        line += f" — {one_line(hook)}"
    if len(line) > 200:  # Claude Code asks for index lines under ~200 characters
        line = line[:199].rstrip() + "…"
    return line


def index_text(lines: list[str]) -> str:
    """MEMORY.md within 200 lines and 25,000 bytes; when they do not all fit, as many as do
    and a warning line saying how many were left out."""
    text = "".join(line + "\n" for line in lines)
    if len(lines) <= MAX_INDEX_LINES and len(text.encode("utf-8")) <= MAX_INDEX_BYTES:
        return text
    total = len(lines)
    keep = min(total, MAX_INDEX_LINES - 2)
    while True:
        warning = (f"{WARNING_PREFIX} truncated: {keep} of {total} memories are listed (limit: "
                   f"{MAX_INDEX_LINES} lines, {MAX_INDEX_BYTES:,} bytes); the rest are topic files in this folder.")
        out = "".join(line + "\n" for line in lines[:keep]) + "\n" + warning + "\n"
        if len(out.encode("utf-8")) <= MAX_INDEX_BYTES or keep == 0:
            return out
        keep -= 1


def _head_meta(head: object) -> dict[str, Any] | None:
    if not isinstance(head, str):
        return None
    try:
        meta, _ = frontmatter(head)
    except SourceError:
        return None
    return meta


def _topic_text(group: list[Memory], rel: str) -> str:
    """A topic file: its own frontmatter kept as it was (exactly, while its name and description
    are what memtui holds; else with those two updated and every other key, `metadata:`
    nesting included, kept), then the memtui file's body as it is, or its entries."""
    first = group[0]
    body = kept_body(group)
    if body is None:
        body = "\n" + (first.text.strip() + "\n" if len(group) == 1 else render_sections(group))
    head = first.extra.get("head")
    meta = _head_meta(head)
    name = one_line(first.name) or Path(rel).stem
    if head is None and first.extra.get("file") == rel and kept_body(group) is not None \
            and name == Path(rel).stem and not one_line(first.description):
        return body  # a topic file that had no frontmatter gets none (issue 40): its text as it was
    description = one_line(first.description) or first_line(first.text)
    if meta is not None and isinstance(head, str):
        if (one_line(md.text_field(meta, "name")) or Path(rel).stem) == name and one_line(
                md.text_field(meta, "description")) == description:
            return head + body
        meta = {**meta, "name": name, "description": description}
    else:
        meta = {"name": name, "description": description, "type": _type_for(first)}
    return "---\n" + dump_yaml(meta) + "---\n" + ("" if body.startswith(("\n", "\r\n")) else "\n") + body


def _index_entries(text: str) -> list[str]:
    _, entries = markdown_entries(text)
    return [e.text for e in entries if not _is_index_or_warning(e.text)]


def _line_target(line: str) -> str | None:
    marker = _MARKER.match(line)
    match = _INDEX_LINE.fullmatch(line[marker.end():].rstrip()) if marker else None
    return match.group("target").strip("<>") if match else None


def _index(topics: list[tuple[Memory, str]], notes: list[Memory], raw: str | None, there: Sequence[str] = ()) -> str:
    """MEMORY.md: the index as it was when it came with notes that are unchanged (its lines
    for topics still here, new ones after them, in the order the index at the destination
    (`there`: the topic files it links) already lists them, so a topic added later comes
    last); else the topics' lines grouped under the `## ` headings they stood under, with
    the notes, within Claude Code's limits."""
    lines: dict[str, str] = {}
    for memory, rel in topics:
        kept = memory.extra.get("index_line")
        if isinstance(kept, str) and memory.extra.get("file") == rel and _line_target(kept) is not None:
            lines[rel] = kept
        else:
            title = str(memory.extra.get("index_title") or one_line(memory.name) or Path(rel).stem)
            hook = str(memory.extra.get("index_hook") or one_line(memory.description) or first_line(memory.text))
            lines[rel] = _index_line(title, rel, hook)
    if raw is not None and _index_entries(raw) == [m.text.strip() for m in notes]:
        out: list[str] = []
        seen: set[str] = set()
        for line in raw.splitlines(keepends=True):
            target = _line_target(line)
            linked = os.path.normpath(unquote(target.split("#", 1)[0])).replace(os.sep, "/") if target else None
            if linked is None or re.match(r"[a-z][a-z0-9+.-]*:", target or "", re.IGNORECASE) \
                    or linked == ".." or linked.startswith("../") or os.path.isabs(linked):
                out.append(line)  # a web link, or a file outside this folder: memtui holds neither, kept as it is
            elif linked in lines and linked not in seen:
                seen.add(linked)
                out.append(lines[linked] + line[len(line.rstrip("\r\n")):])
        placed = {rel: i for i, rel in enumerate(dict.fromkeys(there))}
        fresh = sorted((rel for rel in lines if rel not in seen), key=lambda rel: placed.get(rel, len(placed)))
        new = [lines[rel] + "\n" for rel in fresh]
        if new and out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        return "".join(out + new)
    sections: dict[str, list[str]] = {"": []}
    for memory, rel in topics:
        sections.setdefault(str(memory.extra.get("index_section") or ""), []).append(lines[rel])
    for note in notes:
        sections.setdefault(note.section, []).append(_note_item(note.text.strip()))
    flat: list[str] = list(sections[""])
    for section, items in sections.items():
        if section and items:
            flat += ([""] if flat else []) + [f"## {one_line(section)}", ""] + items
    return index_text(flat)


def _note_item(text: str) -> str:
    first, *rest = text.split("\n")
    return "\n".join(["- " + first] + [("  " + line) if line else "" for line in rest])


def layout(memories: list[Memory], dest: Path, name: Callable[[str], str] = str) -> dict[Path, str]:
    """Topic files and MEMORY.md. A topic imported from Claude Code goes back to its own file
    name (non-ASCII and folders as they were), byte for byte when nothing changed; a memtui
    file born elsewhere becomes one topic file (its path, its body as it is), not one per
    entry; notes that came from MEMORY.md go back into it."""
    used = {INDEX.casefold()}
    files: dict[Path, str] = {}
    topics: list[tuple[Memory, str]] = []
    notes: list[Memory] = []
    raw: str | None = None
    for group in by_file([m for m in memories if m.text.strip()]):
        first = group[0]
        original = first.extra.get("file")
        if isinstance(first.extra.get("index"), str) and (raw is None or original == INDEX):
            raw = first.extra["index"]  # the index as it came, kept with its notes or its first topic
        if original == INDEX:
            notes += group
            continue
        where = first.extra.get("memtui_file")
        if safe_rel(original, ".md"):
            rel = str(original)
        elif isinstance(where, str) and safe_rel(where, ".md"):
            rel = where
        else:
            rel = slug(first.name or first_line(first.text, 60)) + ".md"
        rel = clean_rel(rel, name, used)
        files[dest.joinpath(*rel.split("/"))] = _topic_text(group, rel)
        topics.append((first, rel))
    files[dest / INDEX] = _index(topics, notes, raw, _listed(dest / INDEX))
    return files


def _listed(index: Path) -> list[str]:
    """The topic files the MEMORY.md at `index` links, in its order (nothing when it is not a
    readable regular UTF-8 file): only the order of new topics' lines depends on it."""
    try:
        text = read_regular(index, MAX_INDEX_BYTES * 4, follow_symlinks=False).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [rel for rel in map(_linked, text.splitlines()) if rel is not None]


def _linked(line: str) -> str | None:
    """The topic file an index line links (relative, normalised), or None."""
    target = _line_target(line)
    if target is None or re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
        return None
    return os.path.normpath(unquote(target.split("#", 1)[0])).replace(os.sep, "/")


def adopt(rel: str, current: bytes, data: bytes, writable: frozenset[str]) -> str:
    """Whether memtui may update a `MEMORY.md` it did not write (a reason, or ""): only when
    its new text is exactly what is there followed by index lines of topic files this export
    writes and the index does not link yet (what `_index` appends for new topics to the index
    as imported). Claude Code loads nothing but `MEMORY.md`, so a topic without its line
    there is never seen; any other difference (a line edited, moved or added by the person
    or by Claude Code) leaves the file alone."""
    if rel != INDEX or not data.startswith(current):
        return ""
    try:
        before, added = current.decode("utf-8"), data[len(current):].decode("utf-8")
    except UnicodeDecodeError:
        return ""
    if before and not before.endswith("\n"):
        if not added.startswith("\n"):
            return ""
        added = added[1:]
    lines = added.splitlines(keepends=True)
    if not lines or not all(line.endswith("\n") for line in lines):
        return ""
    linked = {_linked(line) for line in before.splitlines()}
    for line in lines:
        topic = _linked(line.rstrip("\r\n"))
        if topic is None or topic == INDEX or topic not in writable or topic in linked:
            return ""
        linked.add(topic)
    many = len(lines) != 1
    return (f"not written by memtui; only the line{'s' if many else ''} of {len(lines)} new "
            f"topic{'s' if many else ''} added at its end")
