"""Team memory through git (SPEC §14), end to end: real `git init / branch / commit / merge` in
tmp_path, with the driver installed by the real `memtui git install` console script."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memtui.core.markdown import parse_text
from memtui.core.paths import Paths

from .run import entries, memtui, ok, run_cli

FM = "---\ntype: knowledge\ntags: [team]\nupdatedAt: 2026-01-01\n---\n\n"
BASE = FM + "## Conventions\n\n- Use pytest\n- Run ruff before committing\n- Deploy on Fridays never\n"
ENV = {
    "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.org",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
}


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60,
                            env={**os.environ, **ENV}, check=False)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


class Repo:
    def __init__(self, root: Path, home: Path):
        self.root = root
        self.paths = Paths(home, root)
        self.memory = root / ".muse" / "memory"

    def write(self, name: str, content: str | bytes) -> None:
        path = self.memory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))

    def read(self, name: str = "context.md") -> bytes:
        return (self.memory / name).read_bytes()

    def commit(self, message: str) -> None:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message)

    def diverge(self, base: dict[str, str | bytes], ours: dict[str, str | bytes | None],
                theirs: dict[str, str | bytes | None]) -> subprocess.CompletedProcess[str]:
        """Commit `base` on main, `theirs` on a branch, `ours` on main, then merge the branch."""
        for name, content in base.items():
            self.write(name, content)
        self.commit("base")
        git(self.root, "checkout", "-q", "-b", "theirs")
        self._apply(theirs)
        self.commit("theirs")
        git(self.root, "checkout", "-q", "main")
        self._apply(ours)
        self.commit("ours")
        return git(self.root, "merge", "--no-edit", "theirs", check=False)

    def _apply(self, changes: dict[str, str | bytes | None]) -> None:
        for name, content in changes.items():
            if content is None:
                (self.memory / name).unlink()
            else:
                self.write(name, content)


def _init(tmp_path: Path) -> Repo:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (tmp_path / "home").mkdir()
    return Repo(root.resolve(), (tmp_path / "home").resolve())


@pytest.fixture
def repo(tmp_path) -> Repo:
    r = _init(tmp_path)
    ok(memtui(r.paths, "git", "install", real=True))
    return r


def texts(data: bytes) -> list[str]:
    return [e.text for e in parse_text(data.decode("utf-8")).entries]


def conflict_blocks(data: bytes) -> list[tuple[list[str], list[str]]]:
    """(ours lines, theirs lines) of each conflict block."""
    blocks, side, current = [], None, ([], [])
    for line in data.decode("utf-8").splitlines():
        if line.startswith("<<<<<<< "):
            side, current = 0, ([], [])
        elif line == "=======" and side == 0:
            side = 1
        elif line.startswith(">>>>>>> ") and side == 1:
            blocks.append(current)
            side = None
        elif side is not None:
            current[side].append(line)
    return blocks


def outside_conflicts(data: bytes) -> str:
    out, inside = [], False
    for line in data.decode("utf-8").splitlines(keepends=True):
        if line.startswith("<<<<<<< "):
            inside = True
        elif line.startswith(">>>>>>> "):
            inside = False
        elif not inside:
            out.append(line)
    return "".join(out)


def assert_merged_cleanly(repo: Repo, result: subprocess.CompletedProcess[str], name: str = "context.md") -> None:
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert git(repo.root, "status", "--porcelain").stdout == ""
    assert "<<<<<<<" not in repo.read(name).decode()


# --------------------------------------------------------------------------- install


def test_install_sets_the_attribute_and_the_local_driver(repo):
    attributes = (repo.root / ".gitattributes").read_text()
    assert attributes == ".muse/memory/**/*.md merge=memtui\n"
    driver = git(repo.root, "config", "--local", "merge.memtui.driver").stdout.strip()
    assert driver.endswith(" merge-driver %O %A %B %P") and Path(driver.split()[0]).is_absolute()
    for path in (".muse/memory/context.md", ".muse/memory/team/deploy.md"):
        assert git(repo.root, "check-attr", "merge", "--", path).stdout.strip() == f"{path}: merge: memtui"
    assert git(repo.root, "check-attr", "merge", "--", "notes.md").stdout.strip() == "notes.md: merge: unspecified"


def test_install_is_idempotent_and_keeps_other_lines(tmp_path):
    r = _init(tmp_path)
    (r.root / ".gitattributes").write_bytes(b"*.png binary\r\n*.sh text eol=lf")
    first = ok(memtui(r.paths, "git", "install", real=True))
    assert "commit it" in first.stdout and "memtui git install" in first.stdout
    again = ok(memtui(r.paths, "git", "install", real=True))
    assert "already has" in again.stdout
    assert (r.root / ".gitattributes").read_bytes() == b"*.png binary\r\n*.sh text eol=lf\r\n.muse/memory/**/*.md merge=memtui\r\n"
    ok(memtui(r.paths, "git", "install", "--uninstall", real=True))
    assert (r.root / ".gitattributes").read_bytes() == b"*.png binary\r\n*.sh text eol=lf\r\n"
    assert git(r.root, "config", "--local", "--get-regexp", "merge", check=False).returncode == 1


def test_uninstall_removes_a_gitattributes_it_alone_filled(repo):
    ok(memtui(repo.paths, "git", "install", "--uninstall", real=True))
    assert not (repo.root / ".gitattributes").exists()


def test_install_outside_a_repository_says_so(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "home").mkdir()
    result = memtui(Paths((tmp_path / "home").resolve(), (tmp_path / "plain").resolve()), "git", "install", real=True)
    assert result.returncode == 1 and "not inside a git work tree" in result.stderr
    assert not (tmp_path / "plain" / ".gitattributes").exists()


# --------------------------------------------------------------------------- merges


def test_both_append(repo):
    result = repo.diverge({"context.md": BASE}, {"context.md": BASE + "- Prefer small commits\n"},
                          {"context.md": BASE + "- Tag releases\n"})
    assert_merged_cleanly(repo, result)
    assert repo.read().decode() == BASE + "- Prefer small commits\n- Tag releases\n"
    listed = [e["text"] for e in entries(repo.paths, "--layer", "project")]
    assert listed == ["Use pytest", "Run ruff before committing", "Deploy on Fridays never", "Prefer small commits",
                      "Tag releases"]


def test_a_path_with_spaces_and_quotes_reaches_the_driver(repo):
    name = "team's notes/deploy plan.md"
    result = repo.diverge({name: BASE}, {name: BASE + "- ours\n"}, {name: BASE + "- theirs\n"})
    assert_merged_cleanly(repo, result, name)
    assert texts(repo.read(name))[-2:] == ["ours", "theirs"]


def test_one_deletes_one_appends(repo):
    result = repo.diverge({"context.md": BASE}, {"context.md": BASE.replace("- Run ruff before committing\n", "")},
                          {"context.md": BASE + "- Tag releases\n"})
    assert_merged_cleanly(repo, result)
    assert texts(repo.read()) == ["Use pytest", "Deploy on Fridays never", "Tag releases"]


def test_both_edit_the_same_entry_differently(repo):
    result = repo.diverge({"context.md": BASE},
                          {"context.md": BASE.replace("Use pytest", "Use pytest with -x") + "- Ours added\n"},
                          {"context.md": BASE.replace("Use pytest", "Use pytest and hypothesis") + "- Theirs added\n"})
    assert result.returncode == 1
    data = repo.read()
    assert conflict_blocks(data) == [(["- Use pytest with -x"], ["- Use pytest and hypothesis"])]
    assert outside_conflicts(data) == FM + "## Conventions\n\n" + (
        "- Run ruff before committing\n- Deploy on Fridays never\n- Ours added\n- Theirs added\n")
    assert "CONFLICT" in result.stdout
    assert git(repo.root, "diff", "--name-only", "--diff-filter=U").stdout.strip() == ".muse/memory/context.md"


def test_edit_versus_delete(repo):
    result = repo.diverge({"context.md": BASE},
                          {"context.md": BASE.replace("Deploy on Fridays never", "Deploy on Fridays only after review")},
                          {"context.md": BASE.replace("- Deploy on Fridays never\n", "")})
    assert result.returncode == 1
    data = repo.read()
    assert conflict_blocks(data) == [(["- Deploy on Fridays only after review"], [])]
    assert outside_conflicts(data) == FM + "## Conventions\n\n- Use pytest\n- Run ruff before committing\n"


def test_frontmatter_tags_on_both_sides(repo):
    ours = BASE.replace("tags: [team]", "tags: [team, python]")
    theirs = BASE.replace("tags: [team]", "tags: [team, ci]").replace("2026-01-01", "2026-02-03")
    result = repo.diverge({"context.md": BASE}, {"context.md": ours + "- Ours added\n"}, {"context.md": theirs})
    assert_merged_cleanly(repo, result)
    merged = parse_text(repo.read().decode())
    assert merged.meta["tags"] == ["team", "python", "ci"]
    assert str(merged.meta["updatedAt"]) == "2026-02-03"
    assert [e.text for e in merged.entries][-1] == "Ours added"


def test_a_file_only_one_side_has(repo):
    result = repo.diverge({"context.md": BASE}, {"ours.md": "- only ours\n"}, {"team/theirs.md": "- only theirs\n"})
    assert_merged_cleanly(repo, result)
    assert repo.read("ours.md") == b"- only ours\n" and repo.read("team/theirs.md") == b"- only theirs\n"


def test_a_file_both_sides_created(repo):
    result = repo.diverge({"context.md": BASE}, {"new.md": FM + "- from ours\n"}, {"new.md": FM + "- from theirs\n"})
    assert_merged_cleanly(repo, result)
    assert repo.read("new.md").decode() == FM + "- from ours\n- from theirs\n"


def test_crlf_files(repo):
    crlf = BASE.replace("\n", "\r\n")
    result = repo.diverge({"context.md": crlf.encode()}, {"context.md": (crlf + "- Ours added\r\n").encode()},
                          {"context.md": (crlf + "- Theirs added\r\n").encode()})
    assert_merged_cleanly(repo, result)
    assert repo.read() == (crlf + "- Ours added\r\n- Theirs added\r\n").encode()


def test_a_file_memtui_would_skip_gets_gits_own_conflict(repo, tmp_path):
    bad = "---\nupdatedAt: 2026-13-45\n---\n\n- a\n"
    ours, theirs = bad + "- ours\n", bad + "- theirs\n"
    result = repo.diverge({"context.md": bad}, {"context.md": ours}, {"context.md": theirs})
    assert result.returncode == 1
    assert "merged line by line by git" in result.stdout + result.stderr
    for name, text in (("b", bad), ("o", ours), ("t", theirs)):
        (tmp_path / name).write_text(text)
    expected = subprocess.run(["git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs",
                               str(tmp_path / "o"), str(tmp_path / "b"), str(tmp_path / "t")],
                              capture_output=True, check=False).stdout
    assert repo.read() == expected
    assert conflict_blocks(expected) == [(["- ours"], ["- theirs"])]


def test_without_the_driver_config_git_merges_as_before(tmp_path):
    r = _init(tmp_path)
    (r.root / ".gitattributes").write_text(".muse/memory/**/*.md merge=memtui\n")  # committed, but this clone never installed
    result = r.diverge({"context.md": BASE}, {"context.md": BASE + "- a\n"}, {"context.md": BASE + "- b\n"})
    assert result.returncode == 1
    assert "<<<<<<< HEAD" in r.read().decode()


def test_gits_clean_line_merge_that_would_join_entries_is_one_conflict_instead(repo):
    # ours opens a code fence it never closes; git's clean line merge would put theirs' new
    # entry inside it (one entry, not two): the driver marks the file as one conflict instead
    base = "- a\n- m\n- z\n"
    ours = "- a\n\n```\ncode\n- m\n- z\n"
    theirs = base + "- y\n"
    result = repo.diverge({"context.md": base}, {"context.md": ours}, {"context.md": theirs})
    assert result.returncode == 1
    assert "marked as one conflict" in result.stdout + result.stderr
    assert conflict_blocks(repo.read()) == [(ours.splitlines(), theirs.splitlines())]


def test_ours_a_symlink_is_a_clear_error_and_nothing_is_written(tmp_path):
    for name, text in (("base", "- a\n"), ("real", "- a\n- b\n"), ("theirs", "- a\n- c\n")):
        (tmp_path / name).write_text(text)
    (tmp_path / "ours").symlink_to(tmp_path / "real")
    done = run_cli(["merge-driver", str(tmp_path / "base"), str(tmp_path / "ours"), str(tmp_path / "theirs"),
                    ".muse/memory/context.md"], real=True)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "is a symlink" in done.stderr, done.stderr
    assert (tmp_path / "real").read_text() == "- a\n- b\n" and (tmp_path / "ours").is_symlink()


def test_a_single_entry_file_edited_on_different_lines_merges_cleanly(repo):
    base = "---\nname: Testing\n---\n\n# Testing\n\nUse vitest.\n\nMock the network.\n\nRun it in CI.\n"
    ours = base.replace("Use vitest.", "Use vitest, not jest.")
    theirs = base.replace("Run it in CI.", "Run it in CI on every push.")
    result = repo.diverge({"testing.md": base}, {"testing.md": ours}, {"testing.md": theirs})
    assert_merged_cleanly(repo, result, "testing.md")
    assert repo.read("testing.md").decode() == ours.replace("Run it in CI.", "Run it in CI on every push.")
