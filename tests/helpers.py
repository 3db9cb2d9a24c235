"""Helpers for tests: write real files, switch memory on."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterable, Mapping
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


def gate_bypasses(root: Path, sources: Iterable[Path], gate: set[str], uses: Callable[[Path], list[tuple[int, str]]],
                  allowed: Mapping[tuple[str, str], str]) -> tuple[list[str], set[tuple[str, str]]]:
    """For the AST tests of the gates (writes, reads, processes): every use `uses(path)` finds
    outside the `gate` modules that no named exception in `allowed` (`(file, what)`, or
    `(file, "*")` for the whole file) covers, as `file:line: what`; and the exceptions no use
    needed any more (stale)."""
    bypass = []
    seen = set()
    for path in sources:
        rel = path.relative_to(root).as_posix()
        if rel in gate:
            continue
        for line, what in uses(path):
            key = next((k for k in ((rel, what), (rel, "*")) if k in allowed), None)
            if key is None:
                bypass.append(f"{rel}:{line}: {what}")
            else:
                seen.add(key)
    return bypass, set(allowed) - seen
