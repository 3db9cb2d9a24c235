"""The one write gate (SPEC §1, §8): every write of every face passes `core/gate.py`.

The first test proves it by construction: it lists every call of a low-level write
primitive in memtui's source and allows them only in the gate and the primitives' own
module, plus a short list of named exceptions, each with its reason. The others try the
gate from outside, as a repository that ships links would, through the installed `memtui`.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core import gate
from memtui.core.paths import Paths
from tests.cli.run import memtui as run_memtui
from tests.helpers import gate_bypasses

ROOT = Path(__file__).resolve().parents[2]
MEMTUI = shutil.which("memtui", path=str(Path(sys.executable).parent)) or "memtui"
SOURCES = [p for folder in ("core", "cli", "tui") for p in sorted((ROOT / folder).rglob("*.py"))]

# Calls that write, create or remove files or folders.
WRITE_FUNCTIONS = {
    ("os", "replace"), ("os", "rename"), ("os", "renames"), ("os", "unlink"), ("os", "remove"), ("os", "rmdir"),
    ("os", "removedirs"), ("os", "mkdir"), ("os", "makedirs"), ("os", "link"), ("os", "symlink"),
    ("os", "truncate"),
    ("shutil", "move"), ("shutil", "rmtree"), ("shutil", "copy"), ("shutil", "copy2"), ("shutil", "copyfile"),
    ("shutil", "copytree"),
    ("tempfile", "mkstemp"), ("tempfile", "mkdtemp"), ("tempfile", "NamedTemporaryFile"),
    ("tempfile", "TemporaryDirectory"),
}
WRITE_NAMES = {"atomic_write_bytes", "create_new_bytes"}
WRITE_METHODS = {"write_text", "write_bytes", "unlink", "rmdir", "mkdir", "touch", "symlink_to", "hardlink_to",
                 "rename", "atomic_write_bytes", "create_new_bytes"}
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}

# The gate and the primitives it calls.
GATE = {"core/gate.py", "core/fileio.py"}
# Named exceptions: (file, what) -> why it does not pass the gate.
ALLOWED = {
    ("core/store/edits.py", "os.open+write"): "the writer lock: an empty lock file in <home>/trash, opened "
                                             "O_NOFOLLOW after the gate made (and checked) its folder",
    ("core/store/database.py", "mkdir"): "the Muse home for SQLite's own muse.db (SQLite writes the database)",
    ("core/history.py", "mkdir"): "the Muse home for SQLite's own muse.db (SQLite writes the database)",
    ("core/demo.py", "tempfile.mkdtemp"): "a fresh private temporary folder for the demo (then the gate's root)",
    ("tui/main_screen.py", "tempfile.NamedTemporaryFile"): "the private temporary file handed to $EDITOR",
    ("tui/main_screen.py", "os.unlink"): "removing that temporary file again",
    ("cli/hook.py", "open"): "/dev/null opened to stand in for a closed stdout; nothing is written to a file",
    ("cli/hook.py", "os.open+write"): "/dev/null opened again when Claude Code stops reading; nothing is written to a file",
    ("tui/screenshots.py", "*"): "the developer tool that renders screenshots/ (not part of any face)",
}


def _write_calls(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in WRITE_NAMES:
            found.append((node.lineno, func.id))
        elif isinstance(func, ast.Name) and func.id == "open" and _open_writes(node):
            found.append((node.lineno, "open"))
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if (owner, func.attr) in WRITE_FUNCTIONS:
                found.append((node.lineno, f"{owner}.{func.attr}"))
            elif owner == "os" and func.attr == "fdopen" and _open_writes(node):
                found.append((node.lineno, "os.fdopen"))
            elif owner == "os" and func.attr == "open" and _flags_write(node):
                found.append((node.lineno, "os.open+write"))
            elif func.attr == "open" and _open_writes(node, 0):
                found.append((node.lineno, "open"))
            elif func.attr == "replace" and len(node.args) == 1 and owner not in ("str", "dataclasses"):
                found.append((node.lineno, "replace"))  # Path.replace (str.replace takes two; dataclasses.replace
                #                                         takes keywords beside its one object)
            elif func.attr in WRITE_METHODS and owner not in ("gate",):
                found.append((node.lineno, func.attr))
    return found


def _open_writes(call: ast.Call, mode_at: int = 1) -> bool:
    mode = call.args[mode_at] if len(call.args) > mode_at else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(c in mode.value for c in "wax+")


def _flags_write(call: ast.Call) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in WRITE_FLAGS for arg in call.args[1:2] for n in ast.walk(arg))


def test_every_write_primitive_is_called_only_by_the_gate():
    """Lists every call of a low-level write in core/, cli/ and tui/: only the gate (and the
    primitives' own module) may make one, apart from the named exceptions above."""
    bypass, stale = gate_bypasses(ROOT, SOURCES, GATE, _write_calls, ALLOWED)
    assert bypass == [], "writes that bypass core/gate.py:\n" + "\n".join(bypass)
    assert not stale, f"stale exceptions: {stale}"


def test_the_scan_finds_each_kind_of_write(tmp_path):
    """The scan itself is checked: each primitive it must catch is caught."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os, shutil, tempfile\n"
        "from pathlib import Path\n"
        "atomic_write_bytes(p, b'')\n"
        "open(p, 'w')\n"
        "Path(p).write_text('x')\n"
        "os.replace(a, b)\n"
        "shutil.move(a, b)\n"
        "p.unlink()\n"
        "os.open(p, os.O_WRONLY | os.O_CREAT)\n"
        "Path(a).replace(b)\n"
        "open(p)\n"
        "'x'.replace('a', 'b')\n"
        "os.open(p, os.O_RDONLY)\n"
        "dataclasses.replace(result, text='')\n"
    )
    kinds = [what for _, what in _write_calls(sample)]
    assert kinds == ["atomic_write_bytes", "open", "write_text", "os.replace", "shutil.move", "unlink",
                     "os.open+write", "replace"]


# ---------------------------------------------------------------------- the gate's rules


def test_refuses_a_target_outside_its_root_or_through_a_link(tmp_path):
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "linked")
    with pytest.raises(gate.Refused, match="not inside"):
        gate.write(tmp_path / "x.md", b"- x\n", root=root, kind=gate.Kind.MEMORY)
    with pytest.raises(gate.Refused, match="linked is a symlink"):
        gate.write(root / "linked" / "x.md", b"- x\n", root=root, kind=gate.Kind.MEMORY)
    with pytest.raises(gate.Refused, match="not inside|not a file"):
        gate.write(root / ".." / "outside" / "x.md", b"- x\n", root=root, kind=gate.Kind.MEMORY)
    os.symlink(outside / "y.md", root / "real" / "y.md")
    with pytest.raises(gate.Refused, match="symlink"):
        gate.write(root / "real" / "y.md", b"- x\n", root=root, kind=gate.Kind.MEMORY)
    assert list(outside.iterdir()) == []
    gate.write(root / "real" / "ok.md", b"- fine\n", root=root, kind=gate.Kind.MEMORY)
    assert (root / "real" / "ok.md").read_bytes() == b"- fine\n"


def test_a_root_that_leads_out_of_its_container_is_refused(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, ws / ".muse")
    with pytest.raises(gate.Refused, match="outside"):
        gate.write(ws / ".muse" / "memory" / "context.md", b"- x\n", root=ws / ".muse" / "memory",
                   container=ws, kind=gate.Kind.MEMORY)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("data,reason", [
    (b"- a\x00b\n", "NUL"),
    (b"- \xff\n", "UTF-8"),
    (b"- " + b"x" * (1024 * 1024) + b"\n", "1 MiB"),
    (b"---\nkey: [unclosed\n---\n- x\n", "memory file"),
])
def test_a_memory_file_memtui_would_skip_is_never_written(tmp_path, data, reason):
    with pytest.raises(gate.Refused, match=reason):
        gate.write(tmp_path / "notes.md", data, root=tmp_path, kind=gate.Kind.MEMORY)
    assert not (tmp_path / "notes.md").exists()


@pytest.mark.parametrize("text", ["a\x00b", "esc \x1b[31m", "bell\x07", "cr\rlf"])
def test_new_text_with_control_characters_is_refused(text):
    with pytest.raises(gate.TextRefused, match="control|NUL"):
        gate.check_text(text)


def test_new_text_keeps_tabs_and_newlines():
    gate.check_text("a\tb\nc")


# ---------------------------------------------------------------------- through the installed memtui


@pytest.fixture
def ws_paths(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    (ws / ".git").mkdir(parents=True)
    paths = Paths(home.resolve(), ws.resolve())
    (ws / ".muse").mkdir()
    (ws / ".muse" / "settings.json").write_text(json.dumps({"memoryEnabled": True}))
    return paths


def _notes(paths: Paths) -> bytes | None:
    f = paths.user_root / "notes.md"
    return f.read_bytes() if f.exists() else None


def test_remember_refuses_control_characters_and_writes_nothing(ws_paths):
    r = run_memtui(ws_paths, "remember", "esc \x1b]52;c;AAAA\x07")
    assert r.returncode == 1, r
    assert "control character U+001B" in r.stderr and "Traceback" not in r.stderr
    assert _notes(ws_paths) is None
    assert not any((ws_paths.home / "trash").glob("*/manifest.json"))


@pytest.mark.parametrize("layer", ["user", "project", "conversation"])
def test_the_store_refuses_a_nul_in_every_layer(ws_paths, layer):
    """What MCP `remember {"text": "x\u0000y"}` and the TUI editor reach: the core action."""
    from memtui.core import actions

    store = actions.open_store(ws_paths)
    with pytest.raises(actions.Refused, match="NUL"):
        actions.remember(store, "x\x00y", layer)
    assert store.entries(layer) == []
    assert _notes(ws_paths) is None and not (ws_paths.project_root / "context.md").exists()


def test_edit_from_stdin_refuses_a_nul_and_leaves_the_file(ws_paths):
    assert run_memtui(ws_paths, "remember", "use ripgrep").returncode == 0
    before = _notes(ws_paths)
    listed = json.loads(run_memtui(ws_paths, "list", "--json").stdout)
    entry = next(e for e in listed["entries"] if e["text"] == "use ripgrep")
    r = run_memtui(ws_paths, "edit", entry["id"], "-", input="B\x00x\n")
    assert r.returncode == 1 and "NUL" in r.stderr and "Traceback" not in r.stderr, r
    assert _notes(ws_paths) == before


def test_an_edit_that_would_push_the_file_past_1_mib_is_refused(ws_paths):
    assert run_memtui(ws_paths, "remember", "first").returncode == 0
    assert run_memtui(ws_paths, "remember", "second").returncode == 0
    before = _notes(ws_paths)
    listed = json.loads(run_memtui(ws_paths, "list", "--json").stdout)
    entry = next(e for e in listed["entries"] if e["text"] == "first")
    r = run_memtui(ws_paths, "edit", entry["id"], "-", input="y" * (1024 * 1024 - 10))
    assert r.returncode == 1 and "1 MiB" in r.stderr and "Traceback" not in r.stderr, r
    assert _notes(ws_paths) == before
    assert run_memtui(ws_paths, "remember", "still works").returncode == 0


def test_hook_install_project_does_not_write_through_a_linked_claude_folder(ws_paths, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, ws_paths.workspace / ".claude")
    r = run_memtui(ws_paths, "hook", "install", "claude-code", "--project")
    assert r.returncode == 1 and "symlink" in r.stderr and "Traceback" not in r.stderr, r
    assert list(elsewhere.iterdir()) == []


def test_enable_does_not_write_through_a_linked_settings_file(ws_paths, tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    (ws_paths.workspace / ".muse" / "settings.json").unlink()
    os.symlink(outside, ws_paths.workspace / ".muse" / "settings.json")
    r = run_memtui(ws_paths, "enable")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r
    assert outside.read_text() == "{}"


# ---------------------------------------------------------------------- the home is never a workspace


def test_the_muse_home_is_not_a_workspace_marker(tmp_path):
    """`HOME=$T; mkdir -p $T/.muse $T/scratch; cd $T/scratch; memtui status` must not show
    `Workspace: $T`."""
    (tmp_path / ".muse").mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "MUSE_HOME"} | {"HOME": str(tmp_path)}
    r = subprocess.run([MEMTUI, "status", "--json"], cwd=scratch, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r
    assert json.loads(r.stdout)["workspace"] == str(scratch.resolve())
    r = subprocess.run([MEMTUI, "enable"], cwd=scratch, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and (scratch / ".muse" / "settings.json").exists(), r
    assert not (tmp_path / ".muse" / "settings.json").exists()  # the global file is untouched


def test_a_workspace_whose_project_memory_is_the_user_memory_is_refused(tmp_path):
    (tmp_path / ".muse").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "MUSE_HOME"} | {"HOME": str(tmp_path)}
    r = subprocess.run([MEMTUI, "-w", str(tmp_path), "remember", "x"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "user memory" in r.stderr, r
    assert list((tmp_path / ".muse").iterdir()) == []


@pytest.mark.parametrize("inside", [".muse", ".muse/memory"])
def test_no_folder_inside_the_muse_home_is_a_workspace(tmp_path, inside):
    """`cd ~/.muse && memtui enable` would make the home a workspace and write
    `~/.muse/.muse/settings.json`: refused (exit 2), nothing created."""
    home = tmp_path / ".muse"
    (home / "memory").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "MUSE_HOME"} | {"HOME": str(tmp_path)}
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    for args in (["enable"], ["remember", "--project", "note in home"]):
        r = subprocess.run([MEMTUI, *args], cwd=tmp_path / inside, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "inside the Muse home" in r.stderr, r
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_w_must_name_an_existing_directory(tmp_path, kind):
    target = tmp_path / "nope"
    if kind == "file":
        target.write_text("x")
    home = tmp_path / "home"
    r = subprocess.run([MEMTUI, "--home", str(home), "-w", str(target), "enable"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2, r
    assert not home.exists() and (kind == "file" or not target.exists())


# ---------------------------------------------------------------------- import through links


def _agents(paths: Paths) -> None:
    (paths.workspace / "AGENTS.md").write_text("# Rules\n\n- run the linter before committing\n")


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("dry_run", [False, True])
def test_import_does_not_write_through_a_linked_import_folder(ws_paths, tmp_path, dry_run):
    _agents(ws_paths)
    out = tmp_path / "out"
    out.mkdir()
    (ws_paths.project_root / "imported").mkdir(parents=True)
    os.symlink(out, ws_paths.project_root / "imported" / "agents-md")
    r = run_memtui(ws_paths, "import", "agents-md", *(["--dry-run"] if dry_run else []))
    assert r.returncode == 1 and "imported/agents-md is a symlink" in r.stderr and "Traceback" not in r.stderr, r
    assert _tree(out) == {}


def test_import_does_not_write_through_a_dot_muse_linked_out(ws_paths, tmp_path):
    _agents(ws_paths)
    anywhere = tmp_path / "anywhere"
    anywhere.mkdir()
    settings = (ws_paths.workspace / ".muse" / "settings.json").read_bytes()
    shutil.rmtree(ws_paths.workspace / ".muse")
    (anywhere / "settings.json").write_bytes(settings)
    os.symlink(anywhere, ws_paths.workspace / ".muse")
    r = run_memtui(ws_paths, "import", "agents-md")
    assert r.returncode == 1 and "outside" in r.stderr and "Traceback" not in r.stderr, r
    assert _tree(anywhere) == {"settings.json": settings}


def test_a_jsonl_path_through_a_linked_folder_is_refused(ws_paths, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    ws_paths.project_root.mkdir(parents=True)
    os.symlink(outside, ws_paths.project_root / "team")
    backup = tmp_path / "backup.jsonl"  # the person's own file, outside the workspace
    backup.write_text(json.dumps({"text": "lands in team", "layer": "project", "path": "team/notes.md"}) + "\n")
    r = run_memtui(ws_paths, "import", "jsonl", str(backup))
    assert r.returncode == 1 and "team is a symlink" in r.stderr and "Traceback" not in r.stderr, r
    assert _tree(outside) == {}


def test_dry_run_shows_where_the_file_really_lands(ws_paths):
    """A project root linked inside the workspace is allowed; the plan names the real file."""
    _agents(ws_paths)
    real = ws_paths.workspace / "config" / "muse-memory"
    real.mkdir(parents=True)
    os.symlink(real, ws_paths.project_root)
    r = run_memtui(ws_paths, "import", "agents-md", "--dry-run")
    assert r.returncode == 0, r
    assert f"would write {real / 'imported' / 'agents-md'}" in r.stdout, r.stdout


def test_a_default_source_linking_out_of_the_workspace_is_not_read(ws_paths, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "activeContext.md").write_text("- secret from elsewhere\n")
    os.symlink(elsewhere, ws_paths.workspace / "memory-bank")
    r = run_memtui(ws_paths, "import", "cline")
    assert "memory-bank is a symlink" in r.stderr and "not read" in r.stderr and "Traceback" not in r.stderr, r
    listed = json.loads(run_memtui(ws_paths, "list", "--json").stdout)["entries"]
    assert not any("secret" in e["text"] for e in listed)


def test_a_jsonl_inside_the_workspace_adds_project_memories_only(ws_paths):
    """A repository's JSON Lines file cannot plant user memories or conversation rows (of
    this or another workspace), and cannot claim `source: manual`."""
    records = [
        {"text": "I'm a backend developer who loves Rust", "layer": "user", "source": "manual"},
        {"text": "planted conversation row", "layer": "conversation", "source": "manual",
         "conversation": {"id": "other", "title": "x", "workspace_path": "/somewhere/else"}},
        {"text": "the API lives in services/api", "layer": "project", "source": "manual"},
    ]
    (ws_paths.workspace / "memories.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    r = run_memtui(ws_paths, "import", "jsonl", str(ws_paths.workspace / "memories.jsonl"))
    assert r.returncode == 0, r
    assert "a user memory from a file inside the workspace is not imported" in r.stderr
    listed = json.loads(run_memtui(ws_paths, "list", "--json").stdout)["entries"]
    assert [(e["layer"], e["text"]) for e in listed] == [("project", "the API lives in services/api")]
    written = (ws_paths.project_root / listed[0]["path"]).read_text() if not os.path.isabs(listed[0]["path"]) \
        else Path(listed[0]["path"]).read_text()
    assert "source: import" in written and "manual" not in written


def test_import_skips_a_memory_with_control_characters(ws_paths, tmp_path):
    backup = tmp_path / "backup.jsonl"
    backup.write_text(json.dumps({"text": "a\u0000b", "layer": "project"}) + "\n"
                      + json.dumps({"text": "clean one", "layer": "project"}) + "\n")
    r = run_memtui(ws_paths, "import", "jsonl", str(backup))
    assert r.returncode == 0 and "NUL" in r.stderr, r
    assert [e["text"] for e in json.loads(run_memtui(ws_paths, "list", "--json").stdout)["entries"]] == ["clean one"]


async def _mcp_remember(paths: Paths, text: str):
    from tests.cli.test_mcp import session_for  # the real `mcp` client against `memtui mcp`

    async with session_for(paths) as session:
        return await session.call_tool("remember", {"text": text, "layer": "user"})


def test_mcp_remember_refuses_a_nul(ws_paths):
    """MCP `remember {"text": "x\\u0000y"}` through the real client: refused with the reason,
    nothing written (it used to write the NUL and make memtui skip the whole file)."""
    import anyio

    result = anyio.run(_mcp_remember, ws_paths, "x\u0000y")
    assert result.is_error and "NUL" in result.content[0].text, result.content
    assert _notes(ws_paths) is None


def test_export_does_not_write_through_a_linked_folder_of_the_repository(ws_paths, tmp_path):
    """`memtui export cursor` writes `.cursor/rules` in the repository: a `.cursor -> elsewhere`
    link shipped with it is refused, and nothing lands elsewhere."""
    assert run_memtui(ws_paths, "remember", "--project", "run the linter first").returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, ws_paths.workspace / ".cursor")
    r = run_memtui(ws_paths, "export", "cursor")
    assert r.returncode == 1 and ".cursor is a symlink" in r.stderr and "Traceback" not in r.stderr, r
    assert _tree(elsewhere) == {}


@pytest.fixture
def swapped_after_check(tmp_path, monkeypatch):
    """A root with `sub/` inside, and the gate's check patched so that, right after it passes,
    `sub` is swapped for a symlink to a folder outside the root: the race a checked-then-written
    path would lose."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "keep.md").write_text("- outside\n")
    (outside / "tree").mkdir()
    (outside / "tree" / "x.md").write_text("- x\n")
    checked = gate.target

    def check_then_swap(path, root_, container=None, *, root_itself=False):
        result = checked(path, root_, container, root_itself=root_itself)
        if (root / "sub").is_dir() and not (root / "sub").is_symlink():
            shutil.rmtree(root / "sub")
            (root / "sub").symlink_to(outside, target_is_directory=True)
        return result

    monkeypatch.setattr(gate, "target", check_then_swap)
    return root, outside


def _outside_state(outside: Path) -> dict[str, bytes]:
    return {p.relative_to(outside).as_posix(): p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("operation", ["write", "create", "remove", "make_dir", "remove_dir", "remove_tree"])
def test_a_folder_swapped_for_a_link_after_the_check_is_not_gone_through(swapped_after_check, operation):
    root, outside = swapped_after_check
    before = _outside_state(outside)
    calls = {
        "write": lambda: gate.write(root / "sub" / "keep.md", b"- in\n", root=root, kind=gate.Kind.MEMORY),
        "create": lambda: gate.create(root / "sub" / "new.md", b"- in\n", root=root, kind=gate.Kind.MEMORY),
        "remove": lambda: gate.remove(root / "sub" / "keep.md", root=root),
        "make_dir": lambda: gate.make_dir(root / "sub" / "made" / "deeper", root=root),
        "remove_dir": lambda: gate.remove_dir(root / "sub" / "tree", root=root),
        "remove_tree": lambda: gate.remove_tree(root / "sub" / "tree", root=root),
    }
    if operation == "remove_tree":
        calls[operation]()  # nothing to remove below a link: quietly nothing, like a missing folder
    else:
        with pytest.raises(gate.Refused, match="became a symlink"):
            calls[operation]()
    assert (root / "sub").is_symlink()  # the swap did happen
    assert _outside_state(outside) == before
    assert sorted(p.name for p in outside.iterdir()) == ["keep.md", "tree"]


def test_writes_by_descriptor_still_make_missing_folders_keep_modes_and_leave_no_temporary_file(tmp_path):
    root = tmp_path / "root"
    target = root / "a" / "b" / "notes.md"
    gate.write(target, b"- one\n", root=root, kind=gate.Kind.MEMORY)
    assert target.read_bytes() == b"- one\n"
    os.chmod(target, 0o640)
    gate.write(target, b"- two\n", root=root, kind=gate.Kind.MEMORY, expected=b"- one\n")
    assert target.read_bytes() == b"- two\n" and (os.stat(target).st_mode & 0o777) == 0o640
    gate.create(root / "a" / "new.md", b"- new\n", root=root, kind=gate.Kind.MEMORY)
    with pytest.raises(FileExistsError):
        gate.create(root / "a" / "new.md", b"- again\n", root=root, kind=gate.Kind.MEMORY)
    assert sorted(p.name for p in (root / "a").iterdir()) == ["b", "new.md"]
    assert sorted(p.name for p in (root / "a" / "b").iterdir()) == ["notes.md"]
    gate.remove(root / "a" / "new.md", root=root)
    gate.remove(root / "a" / "new.md", root=root)  # missing: fine
    with pytest.raises(FileNotFoundError):
        gate.remove(root / "a" / "new.md", root=root, missing_ok=False)
    gate.make_dir(root / "c" / "d", root=root)
    gate.remove_dir(root / "c" / "d", root=root)
    gate.remove_tree(root / "a", root=root)
    assert sorted(p.name for p in root.iterdir()) == ["c"]


def test_a_file_written_in_parts_is_atomic_and_a_spool_has_no_name(tmp_path):
    """`write_parts` writes its pieces one after the other, or (an error among them) nothing:
    the old file stays and no temporary file is left; a spool is a file without a name in
    its folder, refused through a link like any write."""
    root = tmp_path / "home"
    target = root / "cache" / "layer.bin"
    gate.write_parts(target, iter([b"one ", memoryview(b"two "), b"", b"three"]), root=root)
    assert target.read_bytes() == b"one two three"

    def broken():
        yield b"half of a new file"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        gate.write_parts(target, broken(), root=root)
    assert target.read_bytes() == b"one two three" and sorted(p.name for p in target.parent.iterdir()) == ["layer.bin"]
    with gate.spool(root / "cache", root=root) as spool:
        spool.write(b"x" * 100_000)
        spool.seek(0)
        assert spool.read() == b"x" * 100_000
        assert sorted(p.name for p in target.parent.iterdir()) == ["layer.bin"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "linked").symlink_to(elsewhere)
    _a_spool_is_written_whole(root, target)
    with pytest.raises(gate.Refused):
        gate.spool(root / "linked", root=root)
    with pytest.raises(gate.Refused):
        gate.write_parts(root / "linked" / "layer.bin", iter([b"x"]), root=root)
    assert list(elsewhere.iterdir()) == []


def _a_spool_is_written_whole(root, target):
    """A part that is a spool gives its whole contents, whatever its position: copied by the
    kernel, or read and written where the kernel refuses (or stops partway)."""
    import os
    from unittest import mock

    big = bytes(range(256)) * 40_000  # (several pieces of the read-and-write copy)
    real = getattr(os, "copy_file_range", None)

    def halfway(src, dst, count, offset_src=None, offset_dst=None):  # copies a little, then refuses
        if offset_src:
            raise OSError(18, "Invalid cross-device link")
        return real(src, dst, min(count, 1000), offset_src, offset_dst) if real else os.write(dst, os.pread(src, 1000, 0))

    for copy in ([real] if real else []) + [halfway, None]:
        with gate.spool(root / "cache", root=root) as one, gate.spool(root / "cache", root=root) as two, \
                mock.patch.object(os, "copy_file_range", copy, create=True):  # (None: no such call)
            one.write(big)
            two.write(b"tail")
            two.seek(2)
            gate.write_parts(target, iter([b"head ", one, b" ", two]), root=root)
        assert target.read_bytes() == b"head " + big + b" tail"
