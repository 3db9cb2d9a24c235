"""Helpers for tests: write real files, switch memory on."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from memtui.core.paths import Paths


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n") if text.startswith("\n") else text, encoding="utf-8")
    return path


def enable(paths: Paths, settings: dict | None = None) -> None:
    data = {"memoryEnabled": True}
    data.update(settings or {})
    paths.global_settings.write_text(json.dumps(data), encoding="utf-8")
