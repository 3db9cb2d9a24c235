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
