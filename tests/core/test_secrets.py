"""Secret redaction (SPEC §8, §5 step 8) over a corpus of real-format (fake) secrets and of
look-alikes (tests/core/secrets_corpus.py).

    python -m tests.core.test_secrets     # recall, false positives and per-line cost
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.core import secret_rules, secrets
from memtui.core.secrets import REDACTED, redact

from .secrets_corpus import AWS_ID, LOOK_ALIKES, SECRETS

_MARK = re.compile("⟦(.*?)⟧")


def _split(marked: str) -> tuple[str, str, int]:
    return _MARK.sub(lambda m: m.group(1), marked), _MARK.sub(lambda m: REDACTED, marked), len(_MARK.findall(marked))


@pytest.mark.parametrize("marked", SECRETS.values(), ids=SECRETS.keys())
def test_every_secret_is_replaced_and_nothing_else(marked):
    line, expected, n = _split(marked)
    assert redact(line) == (expected, n)


@pytest.mark.parametrize("line", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_look_alikes_are_left_alone(line):
    assert redact(line) == (line, 0)


def test_the_corpora_are_large_enough():
    assert len(SECRETS) >= 100 and len(LOOK_ALIKES) >= 50


def quality() -> tuple[list[str], list[str]]:
    """(secrets that leak: any marked part left in the output, look-alikes changed)."""
    leaks = []
    for name, marked in SECRETS.items():
        line = _MARK.sub(lambda m: m.group(1), marked)
        out, _ = redact(line)
        if any(part in out for part in _MARK.findall(marked)):
            leaks.append(name)
    changed = [name for name, line in LOOK_ALIKES.items() if redact(line) != (line, 0)]
    return leaks, changed


def test_recall_and_false_positive_rate(capsys):
    leaks, changed = quality()
    recall = 1 - len(leaks) / len(SECRETS)
    false_positives = len(changed) / len(LOOK_ALIKES)
    with capsys.disabled():
        print(f"\nredaction: recall {recall:.1%} ({len(SECRETS) - len(leaks)}/{len(SECRETS)} secrets), "
              f"false positives {false_positives:.1%} ({len(changed)}/{len(LOOK_ALIKES)} look-alikes)")
    assert recall >= 0.98, f"leaking: {leaks}"
    assert false_positives <= 0.02, f"redacted look-alikes: {changed}"


def test_secrets_inside_an_entry_of_several_lines_joined_as_injection_does():
    # §5 step 8: the text is first made one line; prose around the secrets must survive.
    text = f"Deploy notes:\n\n  DB_PASSWORD=hunter2\n  key id {AWS_ID}\nask ops for access."
    one_line = " ".join(text.split())
    assert redact(one_line) == ("Deploy notes: DB_PASSWORD=[REDACTED] key id [REDACTED] ask ops for access.", 2)


def test_deterministic_and_idempotent():
    lines = [_split(m)[0] for m in SECRETS.values()] + list(LOOK_ALIKES.values())
    first = [redact(line) for line in lines]
    assert [redact(line) for line in lines] == first
    # redacting redacted text finds nothing more
    assert all(redact(text) == (text, 0) for text, _ in first)


def test_text_whose_lower_case_changes_length():
    # "İ".lower() is two code points: the keyword search must still find the right places
    assert redact("İstanbul DB_PASSWORD=hunter2 İ") == ("İstanbul DB_PASSWORD=[REDACTED] İ", 1)
    assert redact("İ TOKEN=abc İ") == ("İ TOKEN=[REDACTED] İ", 1)


@pytest.mark.parametrize("unit, count", [("TOKEN=c ", 2_500), ("password=a ", 2_500), ('"a" == password ', 1_250),
                                         ("z", 25_000)], ids=["token", "password", "compared", "long-value"])
def test_long_lines_full_of_keywords_cost_linear_time(unit, count):
    """Each assignment is matched within a window, not to the end of the line (matching to
    the end took 20 s for the first shape at 4 × `count`). Linear, not quadratic: four times
    the line costs about four times the CPU (a quadratic rule, sixteen). CPU time of this
    thread, the least of three runs, so other processes on the machine change neither."""
    import time

    def line(n: int) -> str:
        return "password=" + unit * n + " tail" if unit == "z" else unit * n

    def cost(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.thread_time()
            redact(text)
            best = min(best, time.thread_time() - started)
        return max(best, 1e-4)

    small, large = line(count), line(4 * count)
    out, n = redact(large)
    assert n == large.count("=") - large.count("==") and "z" not in out
    assert cost(large) / cost(small) < 9, "redaction grows faster than the line"


def test_non_text_is_a_clear_error():
    with pytest.raises(TypeError, match="needs a str"):
        redact(b"password=hunter2")  # type: ignore[arg-type]


# Short lines at the edges of the pre-filter and of each rule's gate: the smallest text each
# rule can match, and short look-alikes of the patterns that need a long token.
EDGE_LINES = ["xoxb-1-a", "xoxp-12-3-x9", "//r.example/:_authToken=npm_x", "redis://:p@h", "u://a:b@c",
              "eyJhbGciOiJub25lIn0.eyJ4IjoxfQ.", "BEGIN RSA PRIVATE KEY", "PuTTY-User-Key-File-2: ssh-rsa",
              "AccountKey=" + "a" * 88, "aws key = '" + "A" * 40 + "'", "Authorization: Basic dTpw", "bearer 1234567890abcdef",
              "deploy APACHE2KAFKA now", "x AKC1234567890 y", "\"p\" != db_pass", "pw = 'x'", "pwd: x", "PWD=x", "contraseña: x",
              "clpass = " + "a" * 24, "https://hooks.slack.com/services/T1/B2/x", "İ password=x", "key-" + "0" * 32]


@pytest.mark.parametrize("line", EDGE_LINES)
def test_prefilter_and_gates_at_their_edges(line):
    assert redact(line) == secrets._scan(line, exhaustive=True)


# Fragments a line may be made of: pieces of secrets and look-alikes, markers cut short, quotes
# and separators, so that the generated lines hit the edges of the pre-filter.
_FRAGMENTS = sorted({part for marked in SECRETS.values() for part in re.split("[⟦⟧]", marked) if part}
                    | set(LOOK_ALIKES.values())
                    | {"password", "pass", "pw", "token", "TOKEN", "api_key", "AccountKey=", "://", "@", ":", "=",
                       '"', "'", "-----BEGIN", "PRIVATE KEY", "Bearer ", "AKIA", "ghp_", "AC", "SK", "xoxb-", "eyJ",
                       "İ", "==", "!=", ";", "(", "db_pass", "Api-Key", "secret_key", "aws", *EDGE_LINES})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS) | st.text(alphabet="aA0_-:=@/. '\"", max_size=24), max_size=6),
       st.sampled_from(["", " "]))
def test_prefilter_and_gates_never_change_the_result(parts, sep):
    # redact() skips lines and rules that cannot match; trying every rule at every position
    # must give the same answer
    line = sep.join(parts)
    assert redact(line) == secrets._scan(line, exhaustive=True)


# Words that pass the pre-filter only beside a sign (`secret_rules._WORDS`, `secret_rules._SIGNS`), among
# prose, values, the signs themselves and look-alike punctuation: without a sign, no rule matches.
_WORDING = sorted({*secret_rules._WORDS, "SECRET", "Token", "client_secret", "contraseña", "is", "was", "now", "the",
                   "hunter2", "Winter-Sky", "x9Y!", "abc", "值", "管理", "是", "为", "為", "は", "「", "<", ">", ":", "=",
                   "＝", "：", '"', "'", "`", ";", "(", ")", "[", "]", "{", "}", ",", ".", "!", "?", "/", "-", "_",
                   "$", "#", "%", "&", "*", "+", "|", "~", "，", "。"})


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_WORDING) | st.text(alphabet="aZ9_-.,;!?()/$ ", max_size=12), max_size=8),
       st.sampled_from(["", " "]))
def test_words_that_need_a_sign_never_change_the_result(parts, sep):
    line = sep.join(parts)
    assert redact(line) == secrets._scan(line, exhaustive=True)


@pytest.mark.parametrize("line", ["token=abc123", "secret: hunter2", "client_secret = 'x9'", "<token>abc123</token>",
                                  "密码是 hunter2", "密钥：abc123", "パスワードは abc123", "TOKEN＝abc123",
                                  "contraseña: x", '"v" == my_secret'])
def test_a_word_with_its_sign_is_still_scanned(line):
    assert secret_rules.may_hold_secret(line)
    assert redact(line) == secrets._scan(line, exhaustive=True)
    assert redact(line)[1] >= 1


def test_ordinary_lines_do_not_import_the_library():
    import subprocess
    import sys

    code = ("import sys; from memtui.core.secrets import redact; "
            "line = 'Use vitest, not jest; rotate the secret token weekly, 数据库连接池配置过小, 密钥管理'; "
            "assert redact(line) == (line, 0); "
            "print('detect_secrets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_declared_dependency_matches_the_plugins_used():
    # the redaction relies on these library objects; a detect-secrets that drops them must fail here
    from detect_secrets.plugins import keyword

    rules = secret_rules.rules()
    assert keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP and keyword.REGEX_BY_FILETYPE
    names = {r.regex.pattern for r in rules}
    assert any("ghp|gho" in p for p in names) and any("glpat" in p for p in names)
    assert not any("Entropy" in type(r).__name__ for r in rules)


# ------------------------------------------------------------------ measurement (not a test)

def main() -> None:  # pragma: no cover
    import random
    import statistics
    import time

    from tests.benchmarks.corpus import sentence

    hits = sum(redact(_split(m)[0]) == _split(m)[1:] for m in SECRETS.values())
    false = sum(redact(line)[1] > 0 for line in LOOK_ALIKES.values())
    print(f"recall {hits}/{len(SECRETS)}; false positives {false}/{len(LOOK_ALIKES)}")
    rnd = random.Random(7)
    lines = [sentence(rnd) for _ in range(10_000)]
    passing = [x for x in lines if secret_rules.may_hold_secret(x)]
    print(f"{len(lines)} ordinary lines (tests/benchmarks/corpus.py sentences), {len(passing)} pass the pre-filter")
    redact("warm up: password=x")

    def per_line(fn, sample):  # median over lines of the best of 5 timings of one call, in µs
        out = []
        for x in sample:
            best = min(_timed(fn, x) for _ in range(5))
            out.append(best)
        return statistics.median(out) * 1e6, statistics.mean(out) * 1e6

    def _timed(fn, x):
        t = time.perf_counter()
        fn(x)
        return time.perf_counter() - t

    for name, fn, sample in (("redact, all lines", redact, lines), ("redact, lines past the pre-filter", redact, passing),
                             ("pre-filter only", secret_rules.may_hold_secret, lines)):
        med, mean = per_line(fn, sample)
        print(f"{name}: median {med:.2f} µs/line, mean {mean:.2f} µs/line ({len(sample)} lines)")


if __name__ == "__main__":  # pragma: no cover
    main()


# pieces of every kind the pre-filter looks for, near misses, signs, and characters that lower-case
# to ASCII or to more than one character (K, İ), that are not UTF-8 alone (a lone surrogate)
_PREFILTER_PIECES = st.sampled_from([
    "pass", "PASSWORD", "pwd", "p w", "AWS", "xox", "xapp", "hooks.slack.com", "Authorization", "bearer", "eyJ", "curl",
    "mysql", "private key", "putty-user-key", "API_KEY", "db.key", "Key", "ke y", "://", "@", "http://u:p@h", "secret",
    "Token", "contraseña", "密码", "口令", "密钥", "パスワード", "是", "=", ":", "＝", "'", "<", "a" * 19, "b" * 20,
    "x-y_z" * 4, "数" * 20, "K", "İ", "\ud800", " ", "-", "\n", "é"])
_PREFILTER_LINE = st.lists(_PREFILTER_PIECES | st.text(max_size=5), max_size=8).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PREFILTER_LINE, max_size=12))
def test_the_prefilter_over_many_lines_is_the_prefilter_of_each(lines):
    """`may_hold_secret_many` (every literal looked for once in all the lines) lets through
    exactly the lines `may_hold_secret` lets through, one by one."""
    assert secret_rules.may_hold_secret_many(lines) == [at for at, line in enumerate(lines)
                                                        if secret_rules.may_hold_secret(line)]
    one_line = [" ".join(line.split()) for line in lines]  # (as the injection's lines are: no newline)
    assert secret_rules.may_hold_secret_many(one_line) == [at for at, line in enumerate(one_line)
                                                           if secret_rules.may_hold_secret(line)]
