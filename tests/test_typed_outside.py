"""PEP 561 from the outside: Muse calls `build_injection` as a library, so a script outside this
repository that imports memtui.core, type-checked against a *built* memtui (not the sources,
not the editable install, whose import hook mypy cannot follow), sees memtui's real types."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

USES_CORE = '''\
from pathlib import Path

from memtui.core.model import Entry, Layer
from memtui.core.serve import build_injection


def injected(workspace: Path, message: str) -> int:
    result = build_injection(workspace, message)
    return result.tokens if result.enabled else len(result.text)


def first_layer(entry: Entry) -> str:
    return entry.layer if entry.layer == Layer.USER else entry.text
'''

# The same script with one mistake: a checker that saw only `Any` would pass it.
MISTAKE = "\n\ndef wrong(entry: Entry) -> int:\n    return entry.text\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """memtui as a wheel installs it: `pip install --target` builds it (the build backend
    pyproject names, in an isolated environment) and unpacks it into a plain folder."""
    site = tmp_path_factory.mktemp("site")
    # from a copy of the sources alone: a build in the checkout would reuse its build/ folder,
    # which keeps modules since deleted from the sources
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for folder in ("core", "cli", "tui", "themes"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (site / "memtui" / "core" / "py.typed").is_file()
    return site


def _mypy(script: Path, site: Path) -> subprocess.CompletedProcess[str]:
    # Run from the script's folder (no pyproject, no mypy config of this repository); the
    # built package is found on the path, as in any environment memtui is installed in.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MYPY", "PYTHON"))}
    env["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", script.name],
                          cwd=script.parent, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_a_script_outside_the_repository_type_checks_against_memtui_core(built: Path, tmp_path: Path) -> None:
    script = tmp_path / "uses_memtui.py"
    script.write_text(USES_CORE, encoding="utf-8")
    clean = _mypy(script, built)
    assert clean.returncode == 0, clean.stdout + clean.stderr

    script.write_text(USES_CORE + MISTAKE, encoding="utf-8")
    caught = _mypy(script, built)
    assert caught.returncode == 1, caught.stdout + caught.stderr
    assert 'Incompatible return value type (got "str", expected "int")' in caught.stdout, textwrap.shorten(caught.stdout, 500)
