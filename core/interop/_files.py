"""Careful reading and writing for the interop formats.

Reading: only regular files, at most `MAX_FILE_BYTES`, UTF-8, never through a symlink that
leads out of the folder being imported; YAML frontmatter loaded safely, with anchors and
aliases refused (an alias bomb must not cost memory). Writing: through the write gate only
(`core/gate.py`: never through a link below the root, never replacing a file). Everything
written for another tool passes `outbound_text` / `outbound_name` (the outbound gate,
`core/outbound.py`) first.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from .. import gate
from .. import markdown as md
from ..bounded_reader import FileTooLargeError, RefusedFileError, file_kind, read_regular
from ..fileio import walk
from ..paths import MAX_FILE_BYTES, is_inside
from . import ImportProblem, ReadResult, SourceText, WriteRefused

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

T = TypeVar("T")


class SourceError(ValueError):
    """A file that cannot be imported; the message is the reason (never the file's text)."""


def describe(path: Path) -> str:
    return str(path)


def read_bytes(path: Path, root: Path | None = None, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file, refusing symlinks out of `root`, non-files and big files."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise SourceError("does not exist") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path.resolve(strict=True))
        except (OSError, RuntimeError):
            raise SourceError("broken or looping symlink") from None
    if root is not None and not is_inside(path.resolve(), root.resolve()):
        # the file or a folder on its way is a link out of the folder being imported
        raise SourceError("symlink leads outside the folder being imported; not followed")
    if not stat.S_ISREG(st.st_mode):
        raise SourceError(f"{file_kind(st.st_mode)}, not a regular file; skipped")
    if st.st_size > limit:
        raise SourceError(f"file is {st.st_size} bytes, over the {_limit_text(limit)} limit; skipped")
    try:
        return read_regular(path, limit)  # the one bounded reader: never blocks, never past the limit
    except FileTooLargeError:
        raise SourceError(f"file is over the {_limit_text(limit)} limit; skipped") from None
    except RefusedFileError as exc:
        raise SourceError(f"{exc.reason}; skipped") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None


def _limit_text(limit: int) -> str:
    return "1 MiB" if limit == MAX_FILE_BYTES else f"{limit} byte"


def read_text(path: Path, root: Path | None = None, limit: int = MAX_FILE_BYTES) -> str:
    data = read_bytes(path, root, limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"not UTF-8 (invalid byte at offset {exc.start})") from None
    return text.removeprefix("\ufeff")


def mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def iter_files(root: Path, suffix: str, problems: list[ImportProblem]) -> Iterator[Path]:
    """Files under `root` whose name ends with `suffix`, sorted, skipping dot folders and files.

    Directory symlinks are not followed; a directory named like a memory file is reported.
    """
    def report(exc: OSError) -> None:
        problems.append(ImportProblem(describe(Path(exc.filename or root)),
                                      f"cannot read directory: {exc.strerror or exc}"))

    for directory, dirnames, filenames in walk(root, onerror=report):  # iterative: no nesting too deep
        base = Path(directory)
        keep = []
        for name in sorted(dirnames):
            if name.startswith("."):
                continue
            if name.endswith(suffix):
                problems.append(ImportProblem(describe(base / name), "a directory, not a regular file; skipped"))
                continue
            if not _is_text(name):
                problems.append(ImportProblem(describe(base / name),
                                              "folder name is not UTF-8; skipped with its contents (rename it to import it)"))
                continue
            if (base / name).is_symlink():
                target = (base / name).resolve()
                if not is_inside(target, root.resolve()):
                    problems.append(ImportProblem(describe(base / name),
                                                  "symlink leads outside the folder being imported; not followed"))
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.endswith(suffix) and not name.startswith("."):
                if not _is_text(name):  # said as such, not as whatever its name would break later
                    problems.append(ImportProblem(describe(base / name),
                                                  "file name is not UTF-8; skipped (rename it to import it)"))
                    continue
                yield base / name


def _is_text(name: str) -> bool:
    """Whether a file name read from the disk is UTF-8 (bytes that are not come back as
    lone surrogates, which no memory, frontmatter or output can hold)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def guarded(path: Path, problems: list[ImportProblem], work: Callable[..., T], *args: Any) -> T | None:
    """Run `work(*args)` for one file; any failure becomes a problem for that file, never an exception."""
    try:
        return work(*args)
    except SourceError as exc:
        problems.append(ImportProblem(describe(path), str(exc)))
    except Exception as exc:  # noqa: BLE001 - a hostile file must not stop the import of the others
        problems.append(ImportProblem(describe(path), f"could not be read ({type(exc).__name__})"))
    return None


def missing_source(path: Path) -> ImportProblem | None:
    if not os.path.lexists(path):
        return ImportProblem(describe(path), "does not exist")
    return None


def reader(read_into: Callable[[Path, ReadResult], None]) -> Callable[[Path], ReadResult]:
    """A format's `read(source) -> ReadResult` from its own reading into a result: the fresh
    result and a source that does not exist are handled here, the same for every format."""

    @functools.wraps(read_into)
    def read(source: Path) -> ReadResult:
        result = ReadResult()
        problem = missing_source(source)
        if problem:
            result.problems.append(problem)
        else:
            read_into(source, result)
        return result

    return read


# ----------------------------------------------------------------------------- YAML


def load_yaml_mapping(yaml_text: str) -> dict[str, Any]:
    """Safe-load a frontmatter block with the memory files' own loader (anchors, aliases and
    deep nests refused before anything is built); SourceError for invalid YAML or a non-mapping."""
    try:
        return md.load_frontmatter_yaml(yaml_text)
    except md.MemoryFileError as exc:
        raise _source_error(exc) from None


def _source_error(exc: md.MemoryFileError) -> SourceError:
    if isinstance(exc, md.FrontmatterAliasError):
        return SourceError("YAML frontmatter uses anchors or aliases, which are not allowed")
    return SourceError(str(exc))


@dataclass
class Split:
    meta_text: str | None  # the YAML between the fences, None without frontmatter
    body: str


def split_frontmatter(text: str) -> Split:
    """SPEC §2: the memory files' own rule (`markdown.frontmatter_span`: a BOM, then `---`, and
    a later `---`), so another tool's file reads its frontmatter as memtui's files do."""
    lines = md.split_lines(text)
    span = md.frontmatter_span(text, lines)
    if span is None:
        return Split(None, text)
    return Split("".join(lines[1:span[1]]), "".join(lines[span[1] + 1:]))


def source_text(text: str, rel: str) -> SourceText:
    """The file `text` split into its exact frontmatter block and the rest (SourceText)."""
    split = split_frontmatter(text)
    head = text[: len(text) - len(split.body)] if split.meta_text is not None else ""
    return SourceText(head, text[len(head):], rel)


def without_lines(source: SourceText, texts: list[str]) -> SourceText:
    """`source` with the entries whose text is in `texts` (the line a generator opens an
    instructions file with) taken out of its body the way memtui deletes an entry (SPEC §2:
    every other byte stays), and each piece taken out kept in `keep["generator"]` with the
    body's text before it, so an export can put it back where it was (`with_lines`). The
    source as it was when its body does not parse on its own or a piece cannot be put back."""
    from datetime import UTC, datetime

    body, pieces = source.body, []
    for text in texts:
        try:
            parsed = md.parse_text(body)
            entry = next(e for e in parsed.entries if e.text == text)
            if parsed.meta:
                return source
            after = md.delete_entry(parsed, entry, datetime.now(UTC).date())
        except (md.MemoryFileError, StopIteration):
            return source
        at = len(os.path.commonprefix([body, after]))
        gone = len(body) - len(after)
        if gone <= 0 or body[at + gone:] != after[at:]:
            return source
        pieces.append({"before": body[:at], "line": body[at:at + gone]})
        body = after
    if not pieces or with_lines(body, pieces) != source.body:
        return source
    return SourceText(source.head, body, source.rel, {**source.keep, "generator": pieces})


def with_lines(body: str, pieces: object) -> str:
    """`body` with the pieces `without_lines` took out put back, each after the text it stood
    after; a piece whose text before it is no longer the body's beginning stays out."""
    if not isinstance(pieces, list):
        return body
    for piece in reversed(pieces):
        before, line = (piece.get("before"), piece.get("line")) if isinstance(piece, dict) else (None, None)
        if isinstance(before, str) and isinstance(line, str) and body.startswith(before):
            body = before + line + body[len(before):]
    return body


def frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(meta, body) of a Markdown file; raises SourceError for bad frontmatter."""
    split = split_frontmatter(text)
    if split.meta_text is None:
        return {}, text
    return load_yaml_mapping(split.meta_text), split.body


def markdown_entries(text: str) -> tuple[dict[str, Any], list[md.RawEntry]]:
    """The SPEC §2 entries of a Markdown file (via `markdown.parse_text`, whose frontmatter
    rule and YAML loading are the memory files' own); SourceError for bad frontmatter."""
    try:
        parsed = md.parse_text(text)
    except md.MemoryFileError as exc:
        raise _source_error(exc) from None
    return parsed.meta, parsed.entries


# ----------------------------------------------------------------------------- writing


def refuse_existing(targets: list[Path]) -> None:
    existing = [p for p in targets if os.path.lexists(p)]
    if existing:
        names = ", ".join(str(p) for p in existing[:5]) + (" ..." if len(existing) > 5 else "")
        raise WriteRefused(f"refusing to overwrite existing files: {names}; nothing was written", existing)
    seen: set[str] = set()
    for p in targets:
        key = os.path.normcase(str(p))
        if key in seen:
            raise WriteRefused(f"two memories would be written to {p}; nothing was written", [p])
        seen.add(key)


def write_new(path: Path, data: bytes, root: Path | None = None) -> None:
    """Create `path` with `data` atomically through the write gate (below `root`, default its
    folder); WriteRefused if it exists (checked at the final link) or the gate refuses it."""
    try:
        gate.create(path, data, root=root if root is not None else path.parent, kind=gate.Kind.TEXT)
    except FileExistsError:
        raise WriteRefused(f"refusing to overwrite existing file {path}", [path]) from None
    except gate.Refused as exc:
        raise WriteRefused(str(exc), [path]) from None
    except OSError as exc:
        raise WriteRefused(f"cannot write {path}: {exc.strerror or exc}", [path]) from None


def write_all(files: dict[Path, str]) -> list[Path]:
    """Write every file (UTF-8) after checking that none exists; returns them in order. Each
    is created through the write gate in its folder (the caller checked that folder)."""
    targets = list(files)
    refuse_existing(targets)
    written: list[Path] = []
    try:
        for path, text in files.items():
            write_new(path, text.encode("utf-8"))
            written.append(path)
    except BaseException:
        for path in written:  # all or nothing: remove what this call created
            try:
                gate.remove(path, root=path.parent)
            except OSError:
                pass
        raise
    return written


_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str, fallback: str = "memory", limit: int = 60) -> str:
    """A kebab-case file stem from free text (ASCII letters and digits only)."""
    words = _SLUG.sub("-", text.casefold()).strip("-")
    words = words[:limit].rstrip("-")
    return words or fallback


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CODE_FENCE = re.compile(r"^(`{3,}|~{3,})")


def one_line(text: str) -> str:
    """One line of plain text: whitespace runs as one space, control characters dropped."""
    return " ".join(_CONTROL.sub("", text).split())


_LEAD_MARKER = re.compile(r"(?:#{1,6}[ \t]+|>[ \t]*|[-*+][ \t]+|\d{1,9}[.)][ \t]+)+")


def first_line(text: str, limit: int = 150) -> str:
    """The first line that says something: without its list, quote or heading marker (but
    with its inline Markdown: `**Module**: x` stays as it is), never a code fence opener."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not _CODE_FENCE.match(ln.strip())]
    line = one_line(lines[0] if lines else "")
    marker = _LEAD_MARKER.match(line)
    line = (line[marker.end():].strip() if marker else line) or line
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


# ----------------------------------------------------------------------------- export layout


def by_file(memories: list[Any], together: bool = False) -> list[list[Any]]:
    """Memories grouped by the memtui file they live in (`extra["memtui_file"]`), in order;
    memories that name no file are one group (`together`) or each a group of its own."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for n, m in enumerate(memories):
        where = m.extra.get("memtui_file")
        key = (m.layer, where) if isinstance(where, str) and where else ("", "" if together else f"#{n}")
        groups.setdefault(key, []).append(m)
    return list(groups.values())


def kept_body(group: list[Any]) -> str | None:
    """The body of the group's memtui file exactly as it is, when every entry of that file is
    exported (then the file goes out whole, its structure as it is); else None."""
    first = group[0]
    body = first.extra.get("memtui_body")
    return body if isinstance(body, str) and first.extra.get("memtui_whole") is True else None


def safe_rel(rel: object, suffix: str) -> bool:
    """A relative path an exporter may write under its destination (from a file's own record)."""
    if not isinstance(rel, str) or not rel.endswith(suffix) or "\\" in rel or "\x00" in rel:
        return False
    parts = rel.split("/")
    return not rel.startswith("/") and all(p and p not in (".", "..") and not p.startswith(".") for p in parts)


def clean_rel(rel: str, name: Callable[[str], str], used: set[str]) -> str:
    """`rel` with every part through the outbound gate `name`, made unique (case-insensitively)."""
    parts = [name(p) for p in rel.split("/")]
    rel = "/".join(parts)
    stem, dot, ext = rel.rpartition(".")
    candidate, n = rel, 2
    while candidate.casefold() in used:
        candidate = f"{stem}-{n}{dot}{ext}"
        n += 1
    used.add(candidate.casefold())
    return candidate


def join_texts(texts: list[str]) -> str:
    """Several files' texts as one: a single text exactly; several separated by a blank line."""
    if len(texts) == 1:
        return texts[0]
    return "\n\n".join(t.strip("\r\n") for t in texts if t.strip()) + "\n"


def same_entries(text: str, memories: list[Any], skip: Callable[[str], bool] | None = None) -> bool:
    """Does `text` read back (SPEC §2) as exactly the texts of `memories`, in order? Texts
    `skip` says are no memory (a generator's opening line, which import leaves out) aside."""
    try:
        _, entries = markdown_entries(text)
    except SourceError:
        return False
    kept = [e.text for e in entries if skip is None or not skip(e.text)]
    wanted = [m.text.strip() for m in memories]
    return kept == [t for t in wanted if skip is None or not skip(t)]


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    """A block-level CommonMark parser, made once (building one costs more than parsing a memory)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable(["inline", "text_join"])


def first_heading(body: str) -> str:
    """The text of the first heading of a Markdown body (SPEC §2 `section` of a whole-file entry)."""
    tokens = _block_parser().parse(body)
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0:
            return tokens[i + 1].content
    return ""


def dump_yaml(meta: dict[str, Any]) -> str:
    """YAML for a frontmatter block: UTF-8 as is (no \\u escapes), key order kept, no wrapping."""
    text: str = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, default_flow_style=False, width=1 << 30)
    return text


# ----------------------------------------------------------------------------- what leaves


def outbound_text(text: str, redact_secrets: bool = True) -> tuple[str, int]:
    """SPEC §8 "one gate for what leaves": every string memtui writes for another tool (file
    text, index lines, frontmatter) passes here, which hands it to the outbound gate
    (`core/outbound.redact_text`): secrets become `[REDACTED]`. Returns the text and how many
    secrets were replaced. The one place the exporters call."""
    if not redact_secrets or not text:
        return text, 0
    from .. import outbound

    clean = outbound.redact_text(text, True)
    return clean, _replaced(text, clean, outbound.REDACTED)


def outbound_name(name: str, redact_secrets: bool = True) -> tuple[str, int]:
    """A file or folder name through the same gate (`core/outbound.redact_name`): a secret
    becomes `redacted` (no brackets, so the name stays a plain name and a Markdown link to it
    still works)."""
    if not redact_secrets or not name:
        return name, 0
    from .. import outbound

    clean = outbound.redact_name(name, True)
    return clean, _replaced(name, clean, outbound.NAME_MARK)


def _replaced(before: str, after: str, mark: str) -> int:
    """How many secrets the gate replaced: the marks it added (at least one when it changed anything)."""
    if after == before:
        return 0
    return max(1, after.count(mark) - before.count(mark))
