"""The import-linter contracts in pyproject.toml, as a test: core imports no face and never
Textual; the CLI and the TUI do not import each other except the one lazy start; the
injection rule imports neither the store nor what serves it; no import cycle inside core."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


def test_faces_import_no_private_name_of_core():
    """Faces use core's public names (ARCHITECTURE "Simple again"): no `from memtui.core… import
    _name` in the CLI or the TUI, and no `module._name` reached through an imported module."""
    import ast

    found = []
    for folder in ("cli", "tui"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            core_modules = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memtui.core"):
                    for alias in node.names:
                        if alias.name.startswith("_"):
                            found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {node.module}.{alias.name}")
                        else:
                            core_modules.add(alias.asname or alias.name)
            for node in ast.walk(tree):
                if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                        and isinstance(node.value, ast.Name) and node.value.id in core_modules):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} reads {node.value.id}.{node.attr}")
    assert not found, "\n".join(found)
