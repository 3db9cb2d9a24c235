"""The one bounded reader (SPEC §8): every file a repository or another program can put in
memtui's way is read by `bounded_reader.read_regular` (or opened by `bounded_reader.open_regular`, for the
readers that map a file): a regular file only, never a FIFO, device or socket, never waited
on, never read past its limit.

The first test proves it by construction (like the write gate's in test_gate.py): it lists
every call that opens or reads a file in memtui's source and allows them only in
core/bounded_reader.py and core/fileio.py (whose writes open files), plus named exceptions, each
with its reason.
"""

from __future__ import annotations

import ast
import os
import threading
import time
from pathlib import Path

import pytest

from memtui.core import bounded_reader, fileio, jsondata
from tests.helpers import gate_bypasses

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [p for folder in ("core", "cli", "tui") for p in sorted((ROOT / folder).rglob("*.py"))]

READER = {"core/fileio.py", "core/bounded_reader.py"}
READ_METHODS = {"read_text", "read_bytes"}
READ_FUNCTIONS = {("os", "open"), ("io", "open"), ("np", "load"), ("numpy", "load"), ("np", "fromfile"),
                  ("np", "loadtxt"), ("json", "load"), ("tomllib", "load"), ("yaml", "safe_load_all"),
                  ("pickle", "load"), ("marshal", "load")}
READ_NAMES = {"open", "safe_open"}
# Named exceptions: (file, what) -> why it does not pass the bounded reader.
ALLOWED = {
    ("core/store/scan.py", "read_bytes"): "memtui's own installed source files, hashed for the parse cache's key",
    ("core/semantic.py", "safe_open"): "the embedding model's weights inside the installed wordllama package",
    ("core/store/edits.py", "os.open"): "the writer lock: an empty lock file in <home>/trash, opened O_NOFOLLOW",
    ("cli/hook.py", "open"): "/dev/null opened for writing, to stand in for a closed stdout",
    ("cli/hook.py", "os.open"): "/dev/null opened for writing when Claude Code stops reading",
}


def _read_calls(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in READ_NAMES:
            found.append((node.lineno, func.id))
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if (owner, func.attr) in READ_FUNCTIONS and not _from_memory(node):
                found.append((node.lineno, f"{owner}.{func.attr}"))
            elif func.attr in READ_METHODS:
                found.append((node.lineno, func.attr))
            elif func.attr == "open" and owner not in ("os", "io") and _opens_a_path(node):
                found.append((node.lineno, ".open"))
    return found


def _from_memory(call: ast.Call) -> bool:
    """`np.load(io.BytesIO(data))`: bytes the bounded reader already read."""
    first = call.args[0] if call.args else None
    return (isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute | ast.Name)
            and getattr(first.func, "attr", getattr(first.func, "id", "")) == "BytesIO")


def _opens_a_path(call: ast.Call) -> bool:
    """`Path(...).open()` / `.open("rb")`: no arguments, or a mode string first."""
    if not call.args and not call.keywords:
        return True
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(first, ast.Constant) and isinstance(first.value, str)


def test_every_file_is_read_only_by_the_bounded_reader():
    bypass, stale = gate_bypasses(ROOT, SOURCES, READER, _read_calls, ALLOWED)
    assert bypass == [], "reads that bypass bounded_reader.read_regular / open_regular:\n" + "\n".join(bypass)
    assert not stale, f"stale exceptions: {stale}"


def test_the_scan_finds_each_kind_of_read(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os, json, numpy as np\n"
        "from pathlib import Path\n"
        "open(p)\n"
        "Path(p).read_text()\n"
        "p.read_bytes()\n"
        "os.open(p, os.O_RDONLY)\n"
        "np.load(p)\n"
        "json.load(f)\n"
        "Path(p).open('rb')\n"
        "safe_open(p, framework='np')\n"
        "self.database.open(create=False)\n"
        "json.loads(text)\n"
        "os.fdopen(fd, 'rb')\n"
        "np.load(io.BytesIO(data))\n"
    )
    kinds = [what for _, what in sorted(_read_calls(sample))]
    assert kinds == ["open", "read_text", "read_bytes", "os.open", "np.load", "json.load", ".open", "safe_open"]


# ---------------------------------------------------------------------- the reader itself


def _in_time(work, seconds: float = 20.0):
    """`work()`'s result or exception, failing the test when it does not return within
    `seconds` (a read that blocks on a FIFO would hang the run otherwise)."""
    out: dict[str, object] = {}

    def run() -> None:
        try:
            out["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["value"]


@pytest.mark.parametrize("reader", [lambda p: bounded_reader.read_regular(p, 1024),
                                    lambda p: os.close(bounded_reader.open_regular(p, 1024)),
                                    lambda p: fileio.read_if_exists(p)])
def test_a_fifo_is_refused_without_blocking(tmp_path, reader):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    for path in (fifo, link):
        with pytest.raises(bounded_reader.NotRegularFileError, match="FIFO"):
            _in_time(lambda path=path: reader(path))


def test_a_link_to_dev_zero_is_refused_not_read():
    with pytest.raises(bounded_reader.NotRegularFileError, match="character device"):
        _in_time(lambda: fileio.read_if_exists(Path("/dev/zero")))


def test_read_if_exists_is_bounded(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 2048)
    with pytest.raises(bounded_reader.FileTooLargeError):
        fileio.read_if_exists(big, limit=1024)
    assert fileio.read_if_exists(tmp_path / "missing") is None
    assert fileio.read_if_exists(big) == b"x" * 2048


# ---------------------------------------------------------------------- nested data


def test_a_deep_json_nest_is_a_clear_decode_error_not_a_recursion_error():
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(ValueError, match="nested more than 256 levels deep") as caught:
        jsondata.loads(text)
    assert isinstance(caught.value, jsondata.json.JSONDecodeError)


def test_brackets_inside_strings_do_not_count_as_depth():
    assert jsondata.loads('{"a": "' + "[" * 1000 + '"}') == {"a": "[" * 1000}


def test_a_string_left_open_by_a_cut_is_skipped_to_the_end_in_one_pass():
    """A hook's input cut at its size limit ends inside the prompt: the brackets of that
    open string are text, and the check stays linear however many quotes it holds (a
    string that could not close made every later quote a new attempt: quadratic)."""
    jsondata.check_depth('{"prompt": "fix this: ' + "[" * 1000)
    with pytest.raises(ValueError, match="nested more than 256"):
        jsondata.check_depth('{"prompt": "ok", "x": ' + "[" * 300 + ' "open')

    def cpu(n: int) -> float:
        text = '{"prompt": "' + 'a \\"quoted\\" b ' * n
        start = time.process_time()
        for _ in range(3):
            jsondata.check_depth(text)
        return time.process_time() - start

    cpu(1_000)  # warm
    small, large = cpu(5_000), cpu(40_000)  # 8 times the text: 8 times the work, not 64
    assert large < 24 * max(small, 1e-3), (small, large)


@pytest.mark.parametrize("text", ['{"a": "\\ud800"}', '{"\\udfff": 1}', '[["x\\udc00y"]]'])
def test_a_lone_surrogate_is_a_clear_decode_error(text):
    with pytest.raises(ValueError, match="lone surrogate"):
        jsondata.loads(text)


def test_a_surrogate_pair_is_text():
    assert jsondata.loads('"\\ud83d\\ude00"') == "\U0001f600"


def test_folder_walk_goes_deeper_than_the_recursion_limit(tmp_path):
    import sys

    depth = sys.getrecursionlimit() + 100
    deep = nest(tmp_path / "top", depth)
    (deep / "f.txt").write_text("x")
    try:
        seen = [folder for folder, _, files in fileio.walk(tmp_path / "top") if files]
        assert seen == [str(deep)]
    finally:  # pytest's own clean-up of old temporary folders recurses, and would fail on it later
        unnest(tmp_path / "top", depth)


def test_a_tree_deeper_than_the_recursion_limit_is_removed_without_following_links(tmp_path):
    """gate.remove_tree (the undo log's and the trash's clean-up in the Muse home) removes 1,100
    nested folders, a link loop and a link out of the tree, and never follows a link: what the
    link points to stays. shutil.rmtree recursed here and raised RecursionError."""
    from memtui.core import gate

    home = tmp_path / "home"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.md").write_text("- kept\n")
    tree = home / "trash" / "change-1"
    deep = nest(tree, 1_100)
    (deep / "f.md").write_text("- deepest\n")
    (deep / "loop").symlink_to(deep)
    (deep / "out").symlink_to(outside)
    (tree / "d" / "up").symlink_to(tree, target_is_directory=True)
    try:
        gate.remove_tree(tree, root=home)
        assert not tree.exists() and (home / "trash").is_dir()
        assert (outside / "keep.md").read_text() == "- kept\n"
    finally:
        if tree.exists():  # pytest's own clean-up recurses too
            for link in (deep / "loop", deep / "out", tree / "d" / "up"):
                link.unlink(missing_ok=True)
            unnest(tree, 1_100)


def test_removing_a_tree_leaves_what_cannot_be_removed_and_ends(tmp_path, monkeypatch):
    """A file that cannot be removed stays, with its folders, and the rest is removed around it
    (no endless retry of the folder that cannot be emptied, no error)."""
    from memtui.core import gate

    home = tmp_path / "home"
    locked = home / "tree" / "a" / "locked"
    locked.mkdir(parents=True)
    (locked / "f.md").write_text("x")
    (home / "tree" / "b").mkdir()
    (home / "tree" / "b" / "g.md").write_text("y")
    unlink = os.unlink

    def refuse(name, *args, **kwargs):
        if name == "f.md":
            raise PermissionError(13, "Permission denied", name)
        return unlink(name, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", refuse)
    gate.remove_tree(home / "tree", root=home)
    assert (locked / "f.md").exists() and not (home / "tree" / "b").exists()


def test_removing_a_wide_tree_reads_each_folder_a_bounded_number_of_times(tmp_path, monkeypatch):
    """A folder of 2,000 child folders is read once for them and once when they are done,
    not again after each one (which was quadratic: 8,000 folders took 11 s)."""
    from memtui.core import gate

    home = tmp_path / "home"
    for k in range(2000):
        (home / "tree" / str(k) / "x").mkdir(parents=True)
    seen = 0
    scandir = os.scandir

    class Counting:
        def __init__(self, fd):
            nonlocal seen
            seen += len(os.listdir(fd))  # what a read of the folder costs: all of it
            self._it = scandir(fd)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._it.close()

        def __iter__(self):
            return iter(self._it)

    monkeypatch.setattr(os, "scandir", Counting)
    gate.remove_tree(home / "tree", root=home)
    assert not (home / "tree").exists()
    assert seen <= 3 * 4000, seen  # each of the 4,000 folders read about twice, from its parent (not 2,000 times)


def nest(top: Path, depth: int, name: str = "d") -> Path:
    """`depth` folders, one inside the other, below `top` (made without recursion: Python's
    own os.makedirs recurses); the deepest returned."""
    top.mkdir(parents=True, exist_ok=True)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
    return top.joinpath(*[name] * depth)


def unnest(top: Path, depth: int, name: str = "d") -> None:
    """Remove what `nest` made (deepest first: shutil.rmtree recurses too)."""
    for level in range(depth, 0, -1):
        folder = top.joinpath(*[name] * level)
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()


@pytest.mark.parametrize(("raw", "text"), [
    (rb'{"a": "\ud800"}', rb'{"a": "\ufffd"}'),
    (rb'"\ud83d\ude00"', rb'"\ud83d\ude00"'),  # a pair is one character
    (rb'"\\ud800"', rb'"\\ud800"'),  # an escaped backslash, then text
    (rb'"\\\ud800"', rb'"\\\ufffd"'),
    (rb'"\udc00\ud800x"', rb'"\ufffd\ufffdx"'),
    (rb'"\u0041\udfff"', rb'"\u0041\ufffd"'),
])
def test_lone_surrogate_escapes_are_replaced_and_nothing_else(raw, text):
    assert jsondata.replace_lone_surrogates(raw) == text
    jsondata.loads(text.decode())
