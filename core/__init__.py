"""memtui.core — the memory domain: files, database, settings, injection. Never imports Textual."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package_globals: dict[str, Any], where: dict[str, str]) -> Callable[[str], Any]:
    """A package `__getattr__` that imports `where[name]` (a submodule) when `name` is first
    asked for, and keeps the value in the package."""

    def package_getattr(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package_globals['__name__']!r} has no attribute {name!r}")
        value = package_globals[name] = getattr(importlib.import_module(f".{module}", package_globals["__name__"]), name)
        return value

    return package_getattr
