"""What every assistant config change shares: the error, where it may write, and the
receipts that let uninstall take out exactly what install made.

JSON files are read and written by `settings.read_json_for_update` /
`settings.write_json_object` (one reader and writer for every JSON file memtui changes),
TOML by `mcp_clients` with tomlkit; every write, removal and folder passes the write gate
(`core/gate.py`) with the root it is meant for, and a file is written only if it still holds
the bytes that were read, so a file changed meanwhile is never overwritten.

A person's own file (`~/.claude/settings.json`, often a dotfile manager's symlink) is
written through its symlink, its folder the gate's root. A file inside a workspace has the
workspace as its root: it is refused when any component below the workspace is a symlink
(a cloned repository's `.claude -> elsewhere` must not make memtui write elsewhere).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import gate
from ..display import path_text
from ..fileio import ConflictError, read_if_exists
from ..settings import dump_json_object, read_json_object

RECEIPTS_NAME = "assistant-config.json"
FILE, DIR = "file", "dir"  # containers a receipt can name besides key paths


class ConfigError(RuntimeError):
    """An assistant's config file cannot be changed; the message names the file and the reason."""


@dataclass(frozen=True)
class Change:
    """What an install or uninstall did (or, with dry_run, would do) to one file."""

    path: Path
    changed: bool
    message: str
    before: str = ""  # the file's text before and after, for a dry run's diff
    after: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def diff(self) -> str:
        import difflib  # only a dry run needs it

        return "".join(difflib.unified_diff(self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
                                            fromfile=f"{self.path} (now)", tofile=f"{self.path} (after)"))


def shown(path: Path) -> str:
    return path_text(str(path))


def refused(exc: gate.Refused) -> ConfigError:
    return ConfigError(f"{shown(exc.path)}: {exc.reason}; not changed")


def write_target(path: Path, within: Path | None) -> tuple[Path, Path]:
    """Where to write `path`, and the root the write gate holds it to. Inside a workspace
    (`within`): the path itself, the workspace its root, so no component below the workspace
    may be a symlink (a repository decides what is there). A person's own file: the file its
    symlink names (never the link replaced by a copy), its folder the root."""
    if within is not None:
        try:
            return gate.target(path, within), within
        except gate.Refused as exc:
            raise refused(exc) from None
    try:
        real = path.resolve(strict=True) if path.is_symlink() else path
    except (OSError, RuntimeError) as exc:
        raise ConfigError(f"{shown(path)}: broken symlink or symlink loop ({exc}); not changed") from None
    return real, real.parent


def write_bytes(path: Path, root: Path, data: bytes, expected: bytes | None) -> None:
    """Write a config file (its folder made when missing) through the gate, only if it still
    holds `expected`."""
    try:
        gate.make_dir(path.parent, root=root)
        gate.write(path, data, root=root, kind=gate.Kind.SETTINGS, expected=expected)
    except gate.Refused as exc:
        raise refused(exc) from None
    except ConflictError as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"{shown(path)}: cannot write ({exc.strerror or exc}); not changed") from None


def remove_file(path: Path, root: Path, expected: bytes | None, made_dir: bool) -> None:
    """Remove a file install made once nothing of anyone else's is left in it (and its
    folder, when install made it and it is empty), through the gate."""
    try:
        if read_if_exists(path) != expected:
            raise ConfigError(f"{shown(path)} changed on disk since it was read; not overwritten")
        gate.remove(path, root=root, missing_ok=False)
    except gate.Refused as exc:
        raise refused(exc) from None
    except OSError as exc:
        raise ConfigError(f"{shown(path)}: cannot remove ({exc.strerror or exc})") from None
    if made_dir:
        try:
            gate.remove_dir(path.parent, root=root)  # only when empty
        except OSError:
            pass


class Receipts:
    """Which containers install made, per file, kept in the Muse home (`None`: not kept)."""

    def __init__(self, path: str | os.PathLike[str] | None):
        self.path = Path(path) if path is not None else None

    def _load(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        data, _ = read_json_object(self.path)  # the settings-JSON reader; a receipt it cannot use counts as none
        return data or {}

    def _save(self, book: dict[str, Any]) -> None:
        if self.path is None:
            return
        try:
            gate.write(self.path, dump_json_object(book), root=self.path.parent, kind=gate.Kind.DATA)
        except OSError:
            pass  # without a receipt uninstall keeps the (empty) containers: safe, only less tidy

    @staticmethod
    def _key(file: Path, purpose: str) -> str:
        return f"{file}#{purpose}"  # one file can hold a hook and an MCP server (Gemini's settings.json)

    def made(self, file: Path, purpose: str) -> list[str]:
        entry = self._load().get(self._key(file, purpose))
        made = entry.get("created") if isinstance(entry, dict) else None
        return [m for m in made if isinstance(m, str)] if isinstance(made, list) else []

    def keep(self, file: Path, purpose: str, made: list[str]) -> None:
        book = self._load()
        book[self._key(file, purpose)] = {"created": made}
        self._save(book)

    def drop(self, file: Path, purpose: str) -> None:
        book = self._load()
        if self._key(file, purpose) in book:
            del book[self._key(file, purpose)]
            self._save(book)


def receipts_path(muse_home: str | os.PathLike[str]) -> Path:
    return Path(muse_home) / RECEIPTS_NAME
