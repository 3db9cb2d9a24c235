"""Strings from files and the database, made safe to show (SPEC §8).

Every string that comes from a memory file or muse.db (text, headings, tags, frontmatter
values, file names, conversation titles) reaches the screen through these helpers: as a
`rich.text.Text` (never parsed as markup) with control characters shown as visible escapes
such as `\\x1b` (memtui.core.display).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePath

from rich.text import Text

from memtui.core.display import display_path, escape_name, escape_text
from memtui.core.model import Entry, Layer
from memtui.core.paths import Problem

LAYER_TITLES: dict[str, str] = {Layer.USER: "User", Layer.PROJECT: "Project", Layer.CONVERSATION: "Conversation"}


def fit_path(path: str, width: int) -> str:
    """`path`, or its end after `…` (from a `/`) when it is wider than `width`: a path is
    shortened from the left, never wrapped inside a name."""
    if len(path) <= width:
        return path
    tail = path[-max(1, width - 1):]
    cut = tail.find("/")
    return "…" + (tail[cut:] if 0 <= cut < len(tail) - 1 else tail)


def skipped_summary(problems: Sequence[Problem]) -> str:
    """The files that could not be read, in one short line (the doctor's screen, D, lists
    each with its reason): `4 files skipped — D shows them`, or the one file's name."""
    if len(problems) == 1:
        return f"1 file skipped: {escape_name(PurePath(problems[0].source).name)} — D shows why"
    return f"{len(problems)} files skipped — D shows them"


def problems_note(problems: Sequence[Problem]) -> str:
    """What the preview's warning line says of what it could not use: the one problem itself
    (`settings.json: memory.retrieval is "hybrid" but …`), or how many and where to read them
    all (`memtui status`; the files skipped are also on the doctor's screen, D)."""
    if len(problems) == 1:
        return one_line(f"{escape_name(PurePath(problems[0].source).name)}: {problems[0].message}")
    return f"{len(problems)} problems — `memtui status` lists them"


def text(value: str, style: str = "") -> Text:
    """Memory text: literal, with control characters escaped (tab and newline kept)."""
    return Text(escape_text(value), style=style)


def name(value: str, style: str = "") -> Text:
    """A one-line field (path, tag, section, title): literal and on one line."""
    return Text(escape_name(value), style=style)


def one_line(value: str) -> str:
    """Memory text collapsed to one line, escaped: for rows, toasts and titles."""
    return escape_text(" ".join(value.split()))


def where(entry: Entry) -> str:
    """`path:line` for Markdown, the conversation's title for SQLite; escaped."""
    if entry.layer == Layer.CONVERSATION:
        return f"conversation “{escape_name(entry.conversation_title or entry.conversation_id or 'none')}”"
    return escape_name(entry.source_ref)


def describe(entry: Entry) -> str:
    """`Project · context.md:12`, escaped: how a toast or a dialog names an entry."""
    return f"{LAYER_TITLES[entry.layer]} · {where(entry)}"


def snippet(value: str, width: int = 60) -> str:
    line = one_line(value)
    return line if len(line) <= width else line[: width - 1] + "…"


def sentence(value: str) -> str:
    """`value` ended as a sentence: a period, unless it already ends in one, or in `…`, `!`, `?`
    (a toast never reads `…..` or `off..`)."""
    return value if value.rstrip().endswith((".", "…", "!", "?", "。")) else value + "."


def home_path(path: Path) -> str:
    """A path as one safe line, `~/…` when it is under the user's home directory."""
    try:
        return "~/" + display_path(path.relative_to(Path.home()))
    except (ValueError, RuntimeError):
        return display_path(path)
