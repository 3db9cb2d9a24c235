"""Declare what is imported, import what is declared: every third-party module that memtui's
own code imports belongs to a distribution listed in pyproject's dependencies, and every
listed dependency is imported somewhere (a dependency nobody imports is dead weight users
install; an undeclared one works only while something else happens to pull it in)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("core", "cli", "tui", "themes")  # the folders installed as memtui.*


def canonical(name: str) -> str:
    """A distribution name as PEP 503 compares them (PyYAML == pyyaml, sqlite_utils == sqlite-utils)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(extra: str | None = None) -> set[str]:
    """The dependencies, and with `extra` those of that optional extra too."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(project["dependencies"])
    if extra is not None:
        specs += project["optional-dependencies"][extra]
    return {canonical(re.split(r"[\s<>=!~;\[(]", spec, maxsplit=1)[0]) for spec in specs}


# The optional extra `semantic` (SPEC §13): imported only when hybrid retrieval is on.
SEMANTIC_FILES = {"core/semantic.py", "core/retrieval.py", "core/store/vectors.py", "core/query_vector.py"}


def imported_modules() -> dict[str, set[str]]:
    """Top-level module name -> the files importing it, for every absolute import (lazy ones
    inside functions too) in the shipped code."""
    found: dict[str, set[str]] = {}
    for folder in SHIPPED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def third_party() -> dict[str, set[str]]:
    """Imported distributions (canonical name) -> the files importing them."""
    owners = importlib.metadata.packages_distributions()
    result: dict[str, set[str]] = {}
    for module, files in imported_modules().items():
        if module in sys.stdlib_module_names or module == "memtui":
            continue
        if module not in owners and files <= SEMANTIC_FILES:
            # the `semantic` extra is not installed here (the suite runs without it too): its
            # modules are named like their distributions (wordllama, safetensors, tokenizers)
            result.setdefault(canonical(module), set()).update(files)
            continue
        assert module in owners, f"{module} (imported by {sorted(files)}) belongs to no installed distribution"
        for dist in owners[module]:
            result.setdefault(canonical(dist), set()).update(files)
    return result


def test_every_third_party_import_is_declared() -> None:
    """A distribution imported outside the semantic modules is a dependency; one imported only
    by them may be in the `semantic` extra instead."""
    undeclared = {dist: sorted(files) for dist, files in third_party().items()
                  if dist not in declared() and not (files <= SEMANTIC_FILES and dist in declared("semantic"))}
    assert not undeclared, f"imported but not in pyproject's dependencies: {undeclared}"


def test_every_declared_dependency_is_imported() -> None:
    unused = declared() - set(third_party())
    assert not unused, f"declared in pyproject but imported nowhere in {SHIPPED}: {sorted(unused)}"


def test_the_check_sees_what_it_must() -> None:
    """The scan finds the imports it is about (a scan that found nothing would pass vacuously)."""
    dists = third_party()
    assert {"textual", "pyyaml", "rich", "markdown-it-py"} <= set(dists)
    assert "tui/app.py" in dists["textual"]


def test_every_installed_package_ships_its_types():
    """PEP 561: Muse calls `build_injection` as a library, so every package installed as
    memtui.* carries a `py.typed` marker (memtui is a namespace package: the marker sits in
    each package, not above them), and the build's package data includes it."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    packages = tool["package-dir"]
    assert set(tool["packages"]) == set(packages)
    missing = [name for name, folder in packages.items() if not (ROOT / folder / "py.typed").is_file()]
    assert not missing, f"packages without py.typed: {missing}"
    data = tool["package-data"]
    shipped = [name for name in packages if "py.typed" not in data.get(name, data.get("*", []))]
    assert not shipped, f"packages whose build leaves py.typed out: {shipped}"


def test_every_package_folder_is_in_the_build():
    """A wheel holds only the packages pyproject lists: a new sub-package (a folder with an
    `__init__.py`) left out of the list works in an editable install and is missing from a
    built one."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = {Path(folder) for folder in tool["package-dir"].values()}
    found = {init.parent.relative_to(ROOT) for top in ("core", "cli", "tui", "themes")
             for init in (ROOT / top).rglob("__init__.py") if "__pycache__" not in init.parts}
    assert not found - listed, f"package folders the build leaves out: {sorted(map(str, found - listed))}"
