"""What the doctor keeps between runs (the near-duplicate pairs, each text's line sizes and
contradiction groups) never changes a finding: after every change, a run that finds them
saved reports what a run without them reports."""

from __future__ import annotations

import random
import shutil

from memtui.core import doctor
from memtui.core.near_pairs import cache_path as pairs_path
from memtui.core.paths import Paths
from memtui.core.text_memo import TextMemo
from memtui.core.text_memo import cache_path as memo_path

from ..helpers import enable, write
from .test_similarity import _mutate, corpus

FACTS = ["The API listens on port {n}", "Deploys happen on {day}", "Use {tool} for the unit tests",
         "The staging database is Postgres {n}", "Alice owns the {tool} pipeline", "Release day is {day}"]


def _lines(rnd: random.Random, n: int) -> list[str]:
    out = [t for t in corpus(rnd.randint(0, 10_000), n) if t.strip()]
    for _ in range(n // 4):
        out.append(rnd.choice(FACTS).format(n=rnd.choice([8080, 9090, 14, 16]), day=rnd.choice(["Friday", "Monday"]),
                                            tool=rnd.choice(["vitest", "jest", "pnpm"])))
    return out


def _plant(paths: Paths, rnd: random.Random, files: dict[str, list[str]]) -> None:
    for name, lines in files.items():
        root = paths.user_root if name.startswith("u") else paths.project_root
        write(root / name, "".join(f"- {line}\n" for line in lines))


def _fresh(paths: Paths) -> list:
    """The findings of a doctor that finds nothing saved."""
    held = {p: p.read_bytes() for p in (pairs_path(paths), memo_path(paths)) if p.exists()}
    for p in held:
        p.unlink()
    try:
        return doctor.findings(paths)
    finally:
        for p, data in held.items():
            p.write_bytes(data)


def test_saved_values_give_the_findings_of_a_run_without_them(paths):
    enable(paths, {"memory": {"budget": {"total": 3000, "user": 200, "project": 400, "conversation": 600}}})
    rnd = random.Random(3)
    files = {f"{'u' if i % 2 else 'p'}{i}.md": _lines(rnd, 40) for i in range(6)}
    _plant(paths, rnd, files)
    first = doctor.findings(paths)
    assert {"duplicate", "contradiction", "over_limit"} <= {f.kind for f in first}
    assert pairs_path(paths).is_file() and memo_path(paths).is_file()
    assert first == _fresh(paths)

    for _ in range(3):  # edits, new lines, lines gone, a file gone
        name = rnd.choice(sorted(files))
        lines = files[name]
        lines[rnd.randrange(len(lines))] = _mutate(rnd, rnd.choice(lines))
        lines += _lines(rnd, 6)
        del lines[rnd.randrange(len(lines))]
        gone = rnd.choice(sorted(files))
        if gone != name and len(files) > 3:
            (paths.user_root / gone if gone.startswith("u") else paths.project_root / gone).unlink()
            del files[gone]
        _plant(paths, rnd, files)
        memo = TextMemo(paths)
        assert memo.has("rough groups")
        assert doctor.findings(paths) == _fresh(paths)


def test_a_memo_of_other_code_or_damaged_is_not_taken(paths, monkeypatch):
    enable(paths)
    write(paths.project_root / "a.md", "- The API listens on port 8080\n- The API listens on port 9090\n")
    expected = doctor.findings(paths)
    assert [f.kind for f in expected] == ["contradiction", "contradiction"]
    target = memo_path(paths)
    data = target.read_bytes()
    target.write_bytes(data[:-5])
    assert not TextMemo(paths).has("rough groups")
    assert doctor.findings(paths) == expected
    import memtui.core.text_memo as text_memo

    monkeypatch.setattr(text_memo, "_stamp", lambda: "other code")
    assert not TextMemo(paths).has("rough groups")
    assert doctor.findings(paths) == expected


def test_a_home_without_a_cache_folder_still_gets_its_findings(paths):
    enable(paths)
    write(paths.project_root / "a.md", "- use vitest, not jest\n- Use vitest, not JEST\n")
    shutil.rmtree(paths.home / "cache", ignore_errors=True)
    (paths.home / "cache").write_text("a file where the folder would be")
    assert [f.kind for f in doctor.findings(paths)] == ["duplicate"]


def test_contradiction_groups_as_digests_find_the_same_pairs():
    """The groups the doctor keeps per text (digests) block as the word sets do, a text whose
    first word is among its others included (it joins its one group twice)."""
    from memtui.core.contradictions import contradiction_pairs, rough_digests, rough_groups

    from .test_contradictions import CONTRADICTS, LOOK_ALIKES

    rnd = random.Random(8)
    texts = [t for _, a, b in CONTRADICTS + LOOK_ALIKES for t in (a, b)] + _lines(rnd, 400)
    texts += ["Release release day is Friday", "Release release day is Monday", "port port"]
    rnd.shuffle(texts)
    found = contradiction_pairs(texts)
    assert len(found) > 20
    assert contradiction_pairs(texts, groups_of=rough_digests) == found
    assert sum(1 for t in texts if (lambda g: g[0] is not None and g[0] == g[1])(rough_groups(t))) > 0


def test_kept_facts_are_taken_only_while_the_words_they_looked_up_say_the_same():
    """A fact depends on whether its capitalised first word is seen in lower case elsewhere
    ("Alice owns …" beside "alice …"): a fact kept from a run over other texts is made
    again when that changed, and the pairs are those of a reader without kept facts."""
    from memtui.core.contradictions import Reader, SavedFacts, contradiction_pairs

    kept: dict[str, object] = {}
    made: list[str] = []

    def put(text: str, value) -> None:
        made.append(text)
        kept[text] = value

    facts = SavedFacts(kept.get, put)  # type: ignore[arg-type]
    rnd = random.Random(4)
    base = _lines(rnd, 300) + ["Alice owns the billing service", "Bob owns the billing service",
                               "Release day is Friday", "Release day is Monday"]
    for extra in ([], ["alice owns the billing service", "release day is sunday"], []):
        texts = base + extra
        rnd.shuffle(texts)
        made.clear()
        assert contradiction_pairs(texts, fact_of=facts) == contradiction_pairs(texts)
        if extra:  # the look-up of "Alice" answers otherwise now
            assert "Alice owns the billing service" in made
            assert "Bob owns the billing service" not in made  # kept: its look-up answers as before
    reader = Reader(frozenset({"release"}))
    assert facts(reader, "Release day is Friday") == Reader(frozenset({"release"})).fact("Release day is Friday")
