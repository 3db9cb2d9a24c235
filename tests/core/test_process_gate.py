"""The one gate for processes (SPEC §8): every child process passes `core/process_gate.py`.

The first test proves it by construction (like the write gate's in test_gate.py): it lists
every use of `subprocess`, `multiprocessing`, `os.exec*`, `os.spawn*`, `os.fork*`, `os.popen`
and `os.system` in memtui's source and allows them only in the gate, plus named exceptions.
The others are the attack of issue 32: a workspace that ships `json.py` and `sqlite3/`, and
memtui's real children started from inside it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from memtui.core import process_gate
from memtui.core.finding_set import FoundSet
from memtui.core.paths import Paths
from memtui.core.store import aside
from memtui.tui.insights import DoctorProcess
from tests.helpers import gate_bypasses, write

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [p for folder in ("core", "cli", "tui") for p in sorted((ROOT / folder).rglob("*.py"))]

GATE = {"core/process_gate.py"}
PROCESS_MODULES = {"subprocess", "multiprocessing", "concurrent.futures.process"}
OS_PROCESS_PREFIXES = ("exec", "spawn", "posix_spawn", "fork", "popen", "system")
# Named exceptions: (file, what) -> why it does not pass the gate.
ALLOWED = {
    ("core/store/aside.py", "os.fork"): "the prepared index's builder forked: the same interpreter, nothing "
                                        "imported or run anew, so nothing of the workspace can come in",
    ("core/store/rows_saved.py", "os.fork"): "the conversation layer's postings made beside its build, forked: the "
                                             "same interpreter, nothing imported or run anew",
}


def _process_uses(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names
                      if a.name.split(".")[0] in PROCESS_MODULES or a.name in PROCESS_MODULES]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] in PROCESS_MODULES or any(f"{module}.{a.name}" in PROCESS_MODULES
                                                             for a in node.names):
                found.append((node.lineno, f"import {module}"))
            elif module == "os":
                found += [(node.lineno, f"os.{a.name}") for a in node.names if a.name.startswith(OS_PROCESS_PREFIXES)]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr.startswith(OS_PROCESS_PREFIXES):
            found.append((node.lineno, f"os.{node.attr}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            found.append((node.lineno, "__import__"))
    return found


def test_every_child_process_is_started_only_by_the_gate():
    bypass, stale = gate_bypasses(ROOT, SOURCES, GATE, _process_uses, ALLOWED)
    assert bypass == [], "child processes that bypass core/process_gate.py:\n" + "\n".join(bypass)
    assert not stale, f"stale exceptions: {stale}"


def test_the_scan_finds_each_way_to_start_a_process(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import subprocess\n"
        "import multiprocessing.pool\n"
        "from subprocess import Popen\n"
        "from concurrent.futures import process\n"
        "from os import execv\n"
        "import os\n"
        "os.execvp('x', [])\n"
        "os.spawnl(0, 'x')\n"
        "os.posix_spawn('x', [], {})\n"
        "os.system('x')\n"
        "os.popen('x')\n"
        "os.forkpty()\n"
        "__import__('subprocess')\n"
        "os.path.join('a')\n"
        "os.environ.get('SYSTEMROOT')\n"
    )
    kinds = [what for _, what in sorted(_process_uses(sample))]
    assert kinds == ["import subprocess", "import multiprocessing.pool", "import subprocess",
                     "import concurrent.futures", "os.execv", "os.execvp", "os.spawnl", "os.posix_spawn",
                     "os.system", "os.popen", "os.forkpty", "__import__"]


# ---------------------------------------------------------------------- the attack

HOSTILE = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\n"


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """A workspace that ships modules every child imports (json, sqlite3, pickle), each writing
    a marker when imported; the current folder is that workspace and PYTHONPATH points at it."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    markers = tmp_path / "markers"
    markers.mkdir()
    for module in ("json.py", "pickle.py", "sqlite3/__init__.py", "memtui/__init__.py"):
        write(ws / module, HOSTILE.format(marker=str(markers / module.replace("/", "-"))))
    write(ws / ".muse" / "settings.json", '{"memoryEnabled": true}')
    write(ws / ".muse" / "memory" / "notes.md", "# Notes\n\n- the billing team owns invoices\n")
    monkeypatch.chdir(ws)
    monkeypatch.setenv("PYTHONPATH", str(ws))
    monkeypatch.setenv("PYTHONSTARTUP", str(ws / "json.py"))
    return Paths(home.resolve(), ws.resolve()), markers


def test_the_tui_doctor_child_imports_nothing_the_workspace_ships(hostile):
    paths, markers = hostile
    findings, state = DoctorProcess().run(paths)  # the real child: it must succeed too
    assert isinstance(findings, FoundSet)  # (the findings, packed for the TUI)
    assert sorted(p.name for p in markers.iterdir()) == []


def test_the_prepared_index_builder_imports_nothing_the_workspace_ships(hostile):
    paths, markers = hostile
    child = aside.spawn_aside(paths, ["project"])
    assert child is not None
    code = child.wait(timeout=120)
    assert sorted(p.name for p in markers.iterdir()) == []
    assert code == 0


def test_a_python_child_runs_isolated_in_the_muse_home(hostile, tmp_path):
    paths, _ = hostile
    code = "import os, sys, json; print(json.dumps([os.getcwd(), sys.flags.isolated, [k for k in os.environ if k.startswith('PYTHON')]]))"
    child = process_gate.start_python(["-c", code], home=paths.home, stdout=process_gate.PIPE)
    out, _ = child.communicate(timeout=60)
    import json

    cwd, isolated, python_vars = json.loads(out)
    assert (Path(cwd), isolated, python_vars) == (paths.home, 1, [])


def test_a_python_child_without_a_muse_home_does_not_run_in_the_current_folder(hostile, tmp_path):
    paths, _ = hostile
    child = process_gate.start_python(["-c", "import os; print(os.getcwd())"], home=tmp_path / "absent",
                                      stdout=process_gate.PIPE)
    out, _ = child.communicate(timeout=60)
    assert Path(out.decode().strip()) == Path("/")


def test_another_program_runs_in_the_folder_its_caller_names(hostile, tmp_path):
    paths, _ = hostile
    done = process_gate.run_tool(["pwd"], cwd=paths.home, text=True, timeout=60)
    assert Path(done.stdout.strip()) == paths.home
    with pytest.raises(TypeError):
        process_gate.run_tool(["pwd"])  # type: ignore[call-arg]  # no default folder: never the current one
