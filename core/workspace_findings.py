"""The doctor's findings that read the workspace beside the memories (SPEC §10, §16): paths
a memory names that are gone (`stale_references`), memories an instructions file the
assistant loads anyway repeats (`already_loaded`), scoped files and other assistants' rules
that can never fire (`never_fires`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from .bounded_reader import read_regular_if_exists
from .finding import Finding
from .model import Entry, Layer, memory_file_label
from .paths import escapes
from .similarity import DUPLICATE_SCORE, normalise_for_duplicates

# Extensions of files people name in memories (source, config, docs). A dotted word with any
# other ending (`os.path`, `e.g`, `v1.2`) is not taken for a file name.
FILE_EXTENSIONS = frozenset("""
py pyi ts tsx js jsx mjs cjs json jsonc yaml yml toml ini cfg conf env md mdx mdc rst txt csv sql graphql gql proto
rs go java kt kts scala c h cc cpp cxx hpp cs fs rb php pl lua sh bash zsh fish ps1 bat swift m mm dart ex exs erl
hs ml clj css scss sass less html htm vue svelte astro xml gradle lock tf hcl dockerfile mk cmake ipynb r jl zig nim
""".split())
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
# Path characters are any letters and digits (`docs/1.关键词策略.md`, `docs/notes-été.md` are
# paths too); a word that runs on into glob characters (`src/main/**/*.java`) is no path.
_PATHLIKE = re.compile(r"(?<![\w@:/.\-~])((?:\.{0,2}/)?[\w\-.@]+(?:/[\w\-.@]+)+/?)(?![\w\-.@/*?\[\]{}])")
_URL = re.compile(r"^[a-z][a-z0-9+.\-]*://|^www\.|^[\w.\-]+\.(?:com|org|net|io|dev|ai)(?:/|$)", re.I)


def _path_candidates(text: str) -> set[str]:
    """Words in a memory that name a file or folder: anything in backticks that looks like a
    path, and bare words with a `/` — minus URLs, globs, package specs and home paths."""
    found: set[str] = set()
    for span in _BACKTICKED.findall(text):
        span = span.strip()
        if " " not in span:
            found.add(span)
    # a backticked span is judged whole above (a glob there is not a path), never in pieces
    found.update(m.group(1) for m in _PATHLIKE.finditer(_BACKTICKED.sub(" ", text)))
    out = set()
    for word in found:
        word = word.rstrip(".,;:)")
        if (not word or _URL.search(word) or any(ch in word for ch in "*?[]{}<>$%=|\\")
                or word.startswith(("~", "@", "-")) or "@" in word.split("/")[-1][1:]
                or word.startswith("/") or ".." in word.split("/")):
            continue
        last = word.rstrip("/").rsplit("/", 1)[-1]
        ext = last.rsplit(".", 1)[-1].lower() if "." in last[1:] else ""
        if ext in FILE_EXTENSIONS or last.lower() in ("dockerfile", "makefile") or (word.endswith("/") and "/" in word[:-1]):
            out.add(word)
        elif "/" in word and ext == "":
            out.add(word)  # a folder path (`src/db`): judged below by whether its first part exists
    return out


class _Workspace:
    """Judges path-looking words against the workspace."""

    def __init__(self, root: Path):
        self.root = root

    def is_stale(self, word: str) -> bool | None:
        """True: names a path of this workspace that is not there; False: it is there; None:
        not recognisably a path of this workspace, so not judged.

        Only paths with a folder part are judged, and only when their first folder exists in
        the workspace: a bare `settings.json` or `context.md` could be any file anywhere, and
        `src/db/pool.ts` in a workspace with no `src/` names another project (or is an
        example). memtui's own `.muse/` folder is not judged either."""
        rel = word[2:] if word.startswith("./") else word
        rel = rel.rstrip("/")
        if "/" not in rel:
            return None
        first = rel.split("/", 1)[0]
        if first in ("", ".", "..", ".muse") or not (self.root / first).is_dir():
            return None
        return not (self.root / rel).exists()

    def in_a_subproject(self, word: str, entry: Entry, words: set[str]) -> bool:
        """Is `word` a path relative to a sub-project the entry is about (`src/lib.rs` of
        `crates/foo`)? The folders it could be relative to: the entry's own folder under its
        memory root (`.muse/memory/crates/foo/notes.md` -> `crates/foo`) and each folder on
        the way to another path the entry names that exists (`crates/foo/Cargo.toml`)."""
        rel = (word[2:] if word.startswith("./") else word).rstrip("/")
        bases: set[str] = set()
        own = Path(entry.rel_path).parent.as_posix() if entry.rel_path else "."
        if own not in ("", "."):
            bases.add(own)
        for other in words:
            parts = (other[2:] if other.startswith("./") else other).rstrip("/").split("/")[:-1]
            for n in range(1, len(parts) + 1):
                bases.add("/".join(parts[:n]))
        return any(base and (self.root / base / rel).exists() for base in bases)


def stale_references(entries: list[Entry], workspace: Path) -> list[Finding]:
    """Project and conversation memories that name a workspace path that no longer exists.
    User memories are shared by every workspace, so their paths are not judged here."""
    ws = _Workspace(workspace)
    out = []
    for e in entries:
        if e.layer == Layer.USER or e.archived or "/" not in e.text:  # only a word with a `/` is judged
            continue
        words = _path_candidates(e.text)
        missing = sorted(w for w in words if ws.is_stale(w) and not ws.in_a_subproject(w, e, words))
        if missing:
            shown = ", ".join(f"`{w}`" for w in missing[:3]) + (" …" if len(missing) > 3 else "")
            out.append(Finding("stale_reference", e.source_ref, f"names {shown}, not found in the workspace",
                               e.id, e.layer))
    return out


# ---------------------------------------------------------------------- what the assistant loads anyway
INSTRUCTION_FILES = ("CLAUDE.md", "AGENTS.md", "GEMINI.md", ".github/copilot-instructions.md")
INSTRUCTIONS_MAX_BYTES = 1024 * 1024
MIN_REPEATED_CHARS = 12  # a shorter memory found inside an instructions file is a coincidence, not a repeat
_LINE_MARK = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+|#{1,6}\s+|>\s*)*")


def _instruction_lines(workspace: Path) -> list[tuple[str, str]]:
    """(file name, normalised line) for every line of the workspace's instructions files,
    list and heading marks taken off. A file that is missing, not a small regular file or
    reached through a symlink out of the workspace is left out."""
    out = []
    for name in INSTRUCTION_FILES:
        path = workspace / name
        if escapes(path, workspace) is not None:
            continue
        try:
            raw = read_regular_if_exists(path, INSTRUCTIONS_MAX_BYTES)
        except OSError:
            continue
        if raw is None:
            continue
        for line in raw.decode("utf-8", errors="replace").splitlines():
            text = normalise_for_duplicates(_LINE_MARK.sub("", line))
            if text:
                out.append((name, text))
    return out


def already_loaded(entries: Iterable[Entry], workspace: Path) -> list[Finding]:
    """Active entries that repeat a line of an instructions file the assistant loads anyway
    in this workspace (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`,
    `.github/copilot-instructions.md`): a near-duplicate of one of its lines by the rule of
    `remember`, or found whole inside one. Injecting them spends the budget twice."""
    lines = _instruction_lines(workspace)
    if not lines:
        return []
    from rapidfuzz import fuzz, process

    texts = [text for _, text in lines]
    out = []
    for e in entries:
        if e.archived:
            continue
        mine = normalise_for_duplicates(e.text)
        if not mine:
            continue
        best = process.extractOne(mine, texts, scorer=fuzz.ratio, score_cutoff=DUPLICATE_SCORE)
        at = best[2] if best else next((i for i, text in enumerate(texts) if len(mine) >= MIN_REPEATED_CHARS and mine in text),
                                       None)
        if at is not None:
            verb = "nearly repeats" if best and best[1] < 100 else "repeats"
            out.append(Finding("already_loaded", e.source_ref,
                               f"{verb} {lines[at][0]}, which the assistant already loads in this workspace", e.id, e.layer))
    return out


def never_fires(entries: list[Entry], workspace: Path) -> list[Finding]:
    """SPEC §16: a scoped memory file, or another assistant's rule, that can never fire: no
    file of the workspace matches its globs, or its assistant ignores it as it is written (a
    `.md` in .cursor/rules, `alwaysApply: "true"`, frontmatter it cannot read, a `paths:` form
    Claude Code does not read). The workspace is listed within bounds (`workspace_files`)."""
    from . import rules
    from .workspace_files import list_files

    listing = list_files(workspace)
    first: dict[str, Entry] = {}  # a Muse file's label -> its first entry (the finding's place)
    for e in entries:
        if e.layer != Layer.CONVERSATION and e.rel_path and e.paths:
            label = memory_file_label(e)
            if label not in first or e.line_start < first[label].line_start:
                first[label] = e
    muse = [(label, e.paths) for label, e in sorted(first.items())]
    out = []
    for found in rules.never_fires(rules.discover(workspace, listing, muse), listing):
        rule = found.rule
        if rule.assistant == "muse":
            e = first[rule.file]
            out.append(Finding("never_fires", e.source_ref, f"scoped memory: {found.reason}", e.id, e.layer))
        else:
            out.append(Finding("never_fires", rule.file, f"{rule.assistant}: {found.reason}"))
    return out
