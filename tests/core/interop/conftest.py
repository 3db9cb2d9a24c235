"""Fixture trees copied into tmp_path, so a test can add hostile files next to them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixture_copy(tmp_path):
    def copy(name: str) -> Path:
        target = tmp_path / "src" / name
        shutil.copytree(FIXTURES / name, target, symlinks=True)
        return target

    return copy
