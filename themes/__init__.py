"""Theme files (JSON) turned into Textual themes. An invalid file is skipped and reported."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from textual.theme import Theme

THEME_KEYS = {"name", "primary", "secondary", "warning", "error", "success", "accent", "foreground",
              "background", "surface", "panel", "boost", "dark", "luminosity_spread", "text_alpha", "variables"}


def load_themes(folder: Path | None = None) -> tuple[list[Theme], list[str]]:
    """Every `*.json` theme in `folder` (default: this package), and the problems found."""
    themes: list[Theme] = []
    problems: list[str] = []
    files = sorted(Path(folder).glob("*.json")) if folder else sorted(
        (p for p in resources.files(__name__).iterdir() if p.name.endswith(".json")), key=lambda p: p.name)
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            unknown = set(data) - THEME_KEYS
            if unknown:
                raise ValueError(f"unknown keys {sorted(unknown)}")
            themes.append(Theme(**data))
        except (OSError, ValueError, TypeError) as exc:
            problems.append(f"{file}: {exc}")
    return themes, problems
