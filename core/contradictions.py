"""Contradictions (SPEC §17): two memories that state different values for the same thing — a
port, a version, a tool, a day, a person, a duration, a path, a command, a number.

Offline and deterministic, and precise before it is thorough (a false contradiction costs
trust). Each text is read as a *fact*: its values (typed tokens: `8080`, `localhost:3000`,
`3.12`, `Node 20`, `pnpm`, `Alice`, `@marta`, `Friday`, `30 minutes`, `src/db/pool.ts`,
`` `uv run pytest` ``) and its *subject*: the set of its other words, casefolded, lightly
stemmed, without stop words and filler (`now`, `always`, `use`, `is`). Two facts contradict
when

- their subjects are the same set of at least two words (a qualifier on one side —
  `in staging`, `backend`, `for e2e tests` — makes another subject, never a contradiction);
- they hold the same number of values of each class (numbers, names, days, durations,
  amounts, paths, commands, dates), in the same order; and
- their values differ in one class only (a date *and* a version that differ are two events,
  not one fact said twice); equal values in other words (`30 min`, `30 minutes`; `1 hour`,
  `60 minutes`) are equal.

Blocking is by subject (a dictionary, linear in the number of memories): only texts with the
same subject are ever compared, so 50,000 memories cost one pass.

Near-duplicates (`similarity`) use `same_statement`: two texts close in characters are still
not the same statement when one is a bare label (`**NEVER**:`) or when they differ in a value
or a word of substance (`uv run pytest` / `pnpm test`, `backend` / `frontend`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .relevance import STOP_WORDS

# ---------------------------------------------------------------------- vocabulary
# Words that carry no subject: the injection's stop words, and the verbs and adverbs with which
# a fact is stated or restated ("now listens on", "always use", "is set to").
FILLER = frozenset(STOP_WORDS) | frozenset("""
now currently current always still also just only actually really please default defaults by should must
use uses used using prefer prefers preferred run runs running ran listen listens listening set sets setting
configured configure lives live located sits go goes via through value new latest today us my me they their
which who what should can could would may might been being do does did done get gets got here
""".split())
# Negations and their kin are never filler: "use X" and "never use X" are two facts.
NEGATIONS = frozenset("not no never don't dont avoid without neither nor cannot can't won't isn't aren't".split())
# Lower-case names of tools people write in lower case (a capitalised word is a name anyway).
TOOLS = frozenset("""
npm pnpm yarn bun deno node nodejs npx pip pipx uv poetry conda pdm hatch rye pipenv pytest unittest nose tox nox
vitest jest mocha jasmine ava cypress playwright puppeteer selenium ruff black flake8 pylint isort mypy pyright
eslint prettier biome tslint webpack vite esbuild rollup parcel turbopack babel swc tsc docker podman kubectl helm
terraform pulumi ansible cmake bazel gradle maven cargo rustc gofmt git postgres postgresql mysql mariadb sqlite
redis memcached mongodb mongo cassandra kafka rabbitmq nats celery sidekiq nginx caddy traefik gunicorn uvicorn
fastapi flask django react vue svelte angular nextjs nuxt tailwind bootstrap zsh bash vim neovim emacs vscode tmux
heroku vercel netlify aws gcp azure circleci jenkins travis sentry datadog grafana prometheus loki mkdocs sphinx
docusaurus storybook alembic prisma sqlalchemy drizzle typeorm knex httpx requests axios ky graphql trpc grpc
""".split())
# Words that open a sentence and are no names (a capitalised first word that is not one of
# these, and never appears in lower case in the memories, is taken for a name: "Alice owns …").
COMMON = frozenset("""
use run prefer always never avoid keep make add set write put call check when if for in on all every each no only
the a an we our my this that these those it its they there here do don't dont please ask see note remember tests
test deploy deploys deployment deployments release releases build builds start stop install update upgrade
migrate migration migrations backups backup logs log sessions session tokens token access refresh error errors
production staging development dev local ci cd api apis backend frontend database db server servers service
services docs documentation code commit commits branch branches pull merge review reviews security design
team on-call standup the lint format type types unit integration e2e end-to-end max min minimum maximum limit
rate line upload uploads cache caching feature features config configuration environment environments supported
step steps sprint incident fixed fix bug bugs retry rotate seeds seed cache regenerate lint serve minimum mobile
public private internal admin user users customer customers job jobs queue queues worker workers web app apps
""".split())
# Upper-case words that are words, not names.
ACRONYMS = frozenset("""
api apis cli ci cd db ui ux pr prs qa sql http https url urls json yaml toml csv id ids os io sdk ssh tls ssl dns
todo note never always important gotcha fixme must should warning tip nb pm eng hr ok vm vms env
""".split())
DAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
MONTHS = frozenset("january february march april may june july august september october november december".split())
FREQUENCIES = {"hourly": 3600, "nightly": 86400, "daily": 86400, "weekly": 604800, "biweekly": 1209600,
               "fortnightly": 1209600, "monthly": 2592000, "quarterly": 7776000, "yearly": 31536000,
               "annually": 31536000}
_UNIT_SECONDS = {"ms": 0.001, "millisecond": 0.001, "s": 1, "sec": 1, "second": 1, "m": 60, "min": 60,
                 "minute": 60, "h": 3600, "hr": 3600, "hour": 3600, "d": 86400, "day": 86400, "w": 604800,
                 "wk": 604800, "week": 604800, "mo": 2592000, "month": 2592000, "y": 31536000, "yr": 31536000,
                 "year": 31536000}
FILE_SUFFIXES = ("py pyi ts tsx js jsx mjs cjs json jsonc yaml yml toml ini cfg conf env md mdx mdc rst txt csv sql "
                 "graphql proto rs go java kt rb php sh lock tf hcl lock xml html css scss vue svelte").split()

_TOKEN = re.compile(r"""
 (?P<code>`[^`\n]+`)
|(?P<url>\b[a-z][a-z0-9+.\-]*://[^\s`]+)
|(?P<hostport>(?:\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|[a-z][\w\-]*(?:\.[\w\-]+)+))?:\d{2,5}\b)
|(?P<date>\b\d{4}-\d{2}-\d{2}\b)
|(?P<path>(?:~|\.{1,2})?/?[\w.@\-]+(?:/[\w.@\-]+)+/?|\b[\w\-]+\.(?:""" + "|".join(FILE_SUFFIXES) + r""")\b)
|(?P<duration>\b\d+(?:\.\d+)?\s?(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?
   |weeks?|mo|months?|y|yrs?|years?)\b)
|(?P<amount>\b\d+(?:\.\d+)?\s?(?:[kmgt]i?b|[kmgt]|%|percent)(?![\w]))
|(?P<version>\bv?\d+(?:\.\d+)+(?:[\-+][\w.]+)?\b|\bv\d+\b)
|(?P<ref>\#\d+)
|(?P<number>\b\d+(?:,\d{3})*\b)
|(?P<handle>@[\w\-]+)
|(?P<word>[^\W\d_](?:[\w'’\-]*\w)?)
|(?P<stop>[.!?;:])
""", re.VERBOSE | re.IGNORECASE)
_MARKUP = re.compile(r"\*\*|__|^\s*(?:[-*+]\s+|\d+[.)]\s+|#{1,6}\s+|>\s*)", re.MULTILINE)
_WIDE = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


@dataclass(frozen=True, slots=True)
class Value:
    """One value a text states: its class (what must match to be compared), its kind (what
    the finding calls it), the value compared (normalised) and as written."""

    cls: str  # number | name | day | duration | amount | path | command | date
    kind: str  # port | version | number | tool | person | day | date | duration | amount | path | command
    norm: str
    shown: str


@dataclass(frozen=True, slots=True)
class Fact:
    subject: frozenset[str]
    values: tuple[Value, ...]

    def classes(self) -> tuple[str, ...]:
        return tuple(sorted(v.cls for v in self.values))


def stem(word: str) -> str:
    """A light stemmer, the same on both sides: plural, -ing and -ed endings off."""
    w = word.casefold().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 5 and w.endswith("ing"):
        return w[:-3]
    if len(w) > 4 and w.endswith("ed"):
        return w[:-2]
    if len(w) > 4 and w.endswith(("ses", "xes", "ches", "shes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def _seconds(text: str) -> str:
    m = re.match(r"(\d+(?:\.\d+)?)\s?([a-z]+)", text.casefold())
    if not m:
        return text.casefold()
    unit = m.group(2)
    base = unit if unit in _UNIT_SECONDS else unit.rstrip("s") if unit.rstrip("s") in _UNIT_SECONDS else unit
    if base.endswith("second") or base == "secs":
        base = "second"
    factor = _UNIT_SECONDS.get(base, _UNIT_SECONDS.get(base[:-1], 0))
    return f"{float(m.group(1)) * factor:g}s" if factor else text.casefold()


def _classify_code(inner: str) -> Value:
    """A backticked span: a command when it has a space, else what its inside looks like."""
    inner = inner.strip()
    if " " in inner:
        return Value("command", "command", " ".join(inner.split()), f"`{inner}`")
    m = _TOKEN.fullmatch(inner)
    if m and m.lastgroup in ("hostport",):
        return Value("number", "port", inner.rsplit(":", 1)[1], f"`{inner}`")
    if m and m.lastgroup in ("path", "url"):
        return Value("path", "path", inner.rstrip("/"), f"`{inner}`")
    if m and m.lastgroup in ("version", "number"):
        return Value("number", "version", inner.lstrip("vV"), f"`{inner}`")
    return Value("name", "tool", inner.casefold(), f"`{inner}`")


class Reader:
    """Reads texts into facts. `lower` is every word seen in lower case in the memories at
    hand: a capitalised first word that is one of them is a word, not a name."""

    def __init__(self, lower: frozenset[str] = frozenset()):
        self.lower = lower
        self.asked: list[tuple[str, bool]] | None = None  # when a list: each look-up in `lower` and its answer

    @staticmethod
    def lower_words(texts: Iterable[str]) -> frozenset[str]:
        out: set[str] = set()
        for text in texts:
            out.update(w for w in re.findall(r"(?<![\w`])[a-z][a-z'\-]*", text))
        return frozenset(out)

    def fact(self, text: str) -> Fact:
        text = unicodedata.normalize("NFKC", _MARKUP.sub(" ", text))
        subject: set[str] = set()
        values: list[Value] = []
        at_start = True
        prev_word, prev_name = "", False
        for m in _TOKEN.finditer(text):
            kind, tok = m.lastgroup, m.group()
            if kind == "stop":
                at_start = tok != ":" and tok != ";"
                prev_word, prev_name = "", False
                continue
            start, at_start = at_start, False
            if kind == "code":
                values.append(_classify_code(tok[1:-1]))
            elif kind == "url":
                values.append(Value("path", "url", tok.rstrip("/.,"), tok))
            elif kind == "hostport":
                values.append(Value("number", "port", tok.rsplit(":", 1)[1], tok))
            elif kind == "date":
                values.append(Value("date", "date", tok, tok))
            elif kind == "path":
                tok = tok.rstrip(".,;:")  # a sentence's end is not the path's
                values.append(Value("path", "path", tok.rstrip("/").removeprefix("./"), tok))
            elif kind == "duration":
                values.append(Value("duration", "duration", _seconds(tok), tok))
            elif kind == "amount":
                values.append(Value("amount", "amount", tok.casefold().replace(" ", ""), tok))
            elif kind in ("version", "number"):
                v_kind = "port" if prev_word == "port" else "version" if kind == "version" or (
                    values and values[-1].cls == "name" and m.start() - text.rfind(values[-1].shown.strip("`"), 0, m.start())
                    <= len(values[-1].shown) + 2) else "number"
                values.append(Value("number", v_kind, tok.lstrip("vV").replace(",", ""), tok))
            elif kind == "ref":
                subject.add(tok)  # `#482` names a thing: it is part of the subject
            elif kind == "handle":
                values.append(Value("name", "person", tok.casefold(), tok))
            elif kind == "word":
                before = len(values)
                self._word(tok, start, subject, values)
                named = len(values) > before and values[-1].cls == "name"
                if named and prev_name:  # `GitHub Actions`, `Alice Smith`: one name
                    last, this = values[-2], values.pop()
                    values[-1] = Value("name", "name", f"{last.norm} {this.norm}", f"{last.shown} {this.shown}")
                prev_word, prev_name = tok.casefold(), named
                continue
            prev_word, prev_name = "", False
        for wide in _WIDE.findall(text):
            subject.add(wide)  # a run of CJK text is compared whole
        return Fact(frozenset(subject), tuple(values))

    def _word(self, tok: str, start: bool, subject: set[str], values: list[Value]) -> None:
        low = tok.casefold()
        if _WIDE.fullmatch(tok):
            return
        if low in DAYS or low.rstrip("s") in DAYS:
            values.append(Value("day", "day", low.rstrip("s"), tok))
            return
        if low in FREQUENCIES:
            values.append(Value("duration", "duration", f"{FREQUENCIES[low]}s", tok))
            return
        if low in MONTHS and tok[0].isupper():
            values.append(Value("date", "date", low, tok))
            return
        if self._is_name(tok, low, start):
            values.append(Value("name", "tool" if low in TOOLS else "name", low, tok))
            return
        if low in NEGATIONS:
            subject.add(low)
            return
        if low in FILLER or len(low) < 2:
            return
        subject.add(stem(low))

    def _is_name(self, tok: str, low: str, start: bool) -> bool:
        if low in TOOLS:
            return True
        rest = tok[1:]  # (a lower-case rest has no upper-case letter: the common case, without the walk)
        if not tok[0].isupper() and (rest.islower() or not any(ch.isupper() for ch in rest)):
            return False
        if low in ACRONYMS or low in NEGATIONS or low in FILLER:
            return False
        if start:
            if low in COMMON:
                return False
            seen = low in self.lower
            if self.asked is not None:
                self.asked.append((low, seen))
            return not seen and stem(low) not in COMMON
        return True


# ---------------------------------------------------------------------- the rule
@dataclass(frozen=True, slots=True)
class Disagreement:
    """Where two facts disagree: the first differing value on each side."""

    kind: str
    mine: Value
    theirs: Value


MIN_SUBJECT = 2  # a subject of fewer words ("port", "step") says too little to be one thing
WEIGHTY = frozenset({"path", "command", "day", "duration", "date"})  # enough with a one-word subject


def disagreement(a: Fact, b: Fact) -> Disagreement | None:
    """The values on which `a` and `b` disagree, when they state different values for the
    same thing (the module's rule); else None.

    The subject must be the same set of words. What they agree on counts to what the subject
    says: its words and the values equal on both sides (`PostgreSQL` in `PostgreSQL 14` /
    `PostgreSQL 16`) must be at least two, or one word with a path, command, day or duration
    at stake. Exactly one value may differ — or two values trade places (`use vitest, not
    jest` / `use jest, not vitest`): two values that change independently are two facts."""
    if a.subject != b.subject or not a.subject or not a.values or a.classes() != b.classes():
        return None
    differing: list[tuple[Value, Value]] = []
    equal = 0
    for cls in sorted(set(a.classes())):
        mine = [v for v in a.values if v.cls == cls]
        theirs = [v for v in b.values if v.cls == cls]
        for x, y in zip(mine, theirs):
            if x.norm != y.norm:
                differing.append((x, y))
            else:
                equal += 1
    if not differing:
        return None
    swapped = len(differing) == 2 and differing[0][0].norm == differing[1][1].norm \
        and differing[0][1].norm == differing[1][0].norm
    if len(differing) > 1 and not swapped:
        return None
    x, y = differing[0]
    said = len(a.subject) + equal
    if said < MIN_SUBJECT and not swapped and not (x.cls in WEIGHTY and len(next(iter(a.subject))) >= 5):
        return None
    kind = x.kind if x.kind == y.kind else y.kind if x.kind == "number" else x.kind
    if kind == "name":
        kind = "tool" if {x.norm, y.norm} & TOOLS else "person"
    return Disagreement(kind, x, y)


def contradiction(a: str, b: str, reader: Reader | None = None) -> Disagreement | None:
    """Whether texts `a` and `b` contradict (one pair; the doctor uses `contradiction_pairs`)."""
    reader = reader or Reader(Reader.lower_words((a, b)))
    return disagreement(reader.fact(a), reader.fact(b))


# code, and words with / @ # a digit or an inner colon (`localhost:3000`, a URL; not `Note:`)
_VALUE_SPANS = re.compile(r"`[^`\n]*`|(?<!\S)[^\s/:@#\d`]*(?:[/@#\d`]|:(?=\S))\S*")
_HAS_VALUE = re.compile(r"[/:@#\d`]")
_ROUGH = re.compile(r"\b([a-z]{1,6})[a-z]*")  # a lower-case word's first six letters
_FIRST = re.compile(r"[\W\d_]*([A-Z][a-z]{0,5})")  # after list marks and emphasis
_UNITS = frozenset(_UNIT_SECONDS) | frozenset(u + "s" for u in _UNIT_SECONDS) | frozenset(
    "milliseconds secs mins hrs wks yrs kb mb gb tb kib mib gib percent".split())  # "30 minutes": one value
_NOT_SUBJECT = FILLER | TOOLS | DAYS | frozenset(FREQUENCIES) | frozenset(d + "s" for d in DAYS) | _UNITS
_NOT_ROUGH = frozenset(w[:6] for w in _NOT_SUBJECT)


def rough_keys(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Two cheap keys that texts of one subject share (one or the other): the first six
    letters of its lower-case words outside code, paths and numbers, without filler, tools and
    days — with its first word lower-cased, and without it (`Release day is …` beside
    `release day is …`; `Alice owns …` beside `Bob owns …`). Capitalised words elsewhere may be
    names (values), so they are left out of both. The blocking of `contradiction_pairs`: it
    drops more than the subject does, never less, so texts of one subject share a key."""
    bare = _VALUE_SPANS.sub(" ", text) if _HAS_VALUE.search(text) else text
    rest = frozenset(_ROUGH.findall(bare)) - _NOT_ROUGH
    m = _FIRST.match(bare)
    first = m.group(1).lower() if m else ""
    return (rest | {first} if first and first not in _NOT_ROUGH else rest), rest


def rough_groups(text: str) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """The groups of `rough_keys` a text joins in `contradiction_pairs`: the one of its words
    without the first (None when there are none) and the one with it (None when the same
    set; a text whose first word is among the others joins its one group twice)."""
    with_first, rest = rough_keys(text)
    return rest or None, with_first if with_first is not rest else None


def _digest(words: frozenset[str] | None) -> bytes | None:
    import hashlib

    return None if words is None else hashlib.blake2b("\0".join(sorted(words)).encode(), digest_size=16).digest()


def rough_digests(text: str) -> tuple[bytes | None, bytes | None]:
    """`rough_groups` as digests (the words are letters: joined by NUL, no two sets alike):
    what the doctor keeps per text between runs (`text_memo`)."""
    rest, with_first = rough_groups(text)
    return _digest(rest), _digest(with_first)


Saved = tuple[tuple[str, ...], tuple[tuple[str, str, str, str], ...], tuple[tuple[str, bool], ...]]


class SavedFacts:
    """`Reader.fact` through values kept by text (`get`, `put`: the doctor's `TextMemo`): a
    fact depends on its text and on whether some of its words are in the reader's `lower`,
    so a kept fact is taken when those look-ups still give the same answers."""

    def __init__(self, get: Callable[[str], Saved | None], put: Callable[[str, Saved], None]):
        self.get, self.put = get, put

    def __call__(self, reader: Reader, text: str) -> Fact:
        kept = self.get(text)
        if kept is not None and all((low in reader.lower) == seen for low, seen in kept[2]):
            return Fact(frozenset(kept[0]), tuple(Value(*v) for v in kept[1]))
        reader.asked = []
        try:
            fact = reader.fact(text)
            asked = tuple(reader.asked)
        finally:
            reader.asked = None
        self.put(text, (tuple(sorted(fact.subject)), tuple((v.cls, v.kind, v.norm, v.shown) for v in fact.values), asked))
        return fact


def contradiction_pairs(texts: Sequence[str], skip: Callable[[int, int], bool] | None = None,
                        per_entry: int = 8,
                        groups_of: Callable[[str], tuple[object, object]] = rough_groups,
                        fact_of: Callable[[Reader, str], Fact] | None = None,
                        ) -> list[tuple[int, int, Disagreement]]:
    """(first, later, disagreement) for texts that contradict an earlier one, in the order
    given. Blocked twice, never all pairs: texts are first grouped by `rough_keys` (regular
    expressions and a set each: cheap), and only those that share a key with another text are
    read as facts; those are grouped by subject and value classes, and each is compared with
    the first text of each earlier distinct set of values in its group (at most `per_entry`
    of them), so the work is linear in the texts. `skip(i, j)` leaves a pair out (one
    remembered as not contradicting). `groups_of` gives a text's rough groups
    (`rough_groups`, or the same as digests); `fact_of(reader, text)` its fact (`reader.fact`,
    or `SavedFacts`)."""
    rough: dict[object, list[int]] = {}
    for j, text in enumerate(texts):
        rest, with_first = groups_of(text)
        if rest is not None:
            rough.setdefault(rest, []).append(j)
        if with_first is not None:
            rough.setdefault(with_first, []).append(j)
    shared = sorted({j for group in rough.values() if len(group) > 1 for j in group})
    if not shared:
        return []
    reader = Reader(Reader.lower_words(texts[j] for j in shared))
    groups: dict[tuple[frozenset[str], tuple[str, ...]], list[tuple[tuple[str, ...], int, Fact]]] = {}
    out: list[tuple[int, int, Disagreement]] = []
    for j in shared:
        fact = reader.fact(texts[j]) if fact_of is None else fact_of(reader, texts[j])
        if not fact.subject or not fact.values:
            continue
        key = (fact.subject, fact.classes())
        norms = tuple(v.norm for v in fact.values)
        firsts = groups.setdefault(key, [])
        found = 0
        for seen_norms, i, earlier in firsts:
            if seen_norms == norms or found >= per_entry:
                continue
            if skip is not None and skip(i, j):
                continue
            found_at = disagreement(earlier, fact)
            if found_at is not None:
                out.append((i, j, found_at))
                found += 1
        if all(seen != norms for seen, _, _ in firsts):
            firsts.append((norms, j, fact))
    return out


# ---------------------------------------------------------------------- near-duplicates
_LABEL = re.compile(r"^\W*[\w][\w\s/&'\-]{0,40}?\W*:\W*$")


def is_label(text: str) -> bool:
    """A bare label (`**NEVER**:`, `Rules:`, `### Testing:`): it says nothing until what follows."""
    return ":" in text and bool(_LABEL.match(text.strip())) and len(text.split()) <= 5  # (no colon: no label)


def _words(text: str) -> tuple[str, ...]:
    """The words of a text as `same_statement` compares them: filler left out, words stemmed,
    durations in seconds; a value (a number, code, a path) is marked so that it is never taken
    for a typo of another. The last 8,192 texts' are kept, when short (a memory is ~80
    characters): the doctor's near-duplicate search compares one text with many (1,500 alike
    rows: 450,000 calls for 1,500 texts)."""
    return _kept_words(text) if len(text) <= 2000 else _text_words(text)


@lru_cache(maxsize=8192)
def _kept_words(text: str) -> tuple[str, ...]:
    return _text_words(text)


def _text_words(text: str) -> tuple[str, ...]:
    out = []
    for m in _TOKEN.finditer(unicodedata.normalize("NFKC", _MARKUP.sub(" ", text))):
        kind, tok = m.lastgroup, m.group().casefold()
        if kind == "stop":
            continue
        if kind == "word":
            if tok not in FILLER:
                out.append(tok if tok in NEGATIONS else stem(tok))
        elif kind == "duration":
            out.append("\0" + _seconds(tok))
        elif kind in ("path", "url"):
            out.append("\0" + tok.rstrip(".,;:/"))
        else:
            out.append("\0" + tok)
    return tuple(out)


def _typo(a: str, b: str) -> bool:
    from rapidfuzz.distance import OSA

    return not a.startswith("\0") and not b.startswith("\0") and min(len(a), len(b)) >= 4 \
        and OSA.distance(a, b) <= 1


def same_statement(a: str, b: str) -> bool:
    """Whether two texts whose characters are close (a rapidfuzz ratio at the near-duplicate
    cutoff) still say the same thing: a bare label is only the same as itself, and where their words differ,
    the words are filler, a typo of each other, or the same word in another form — never a
    different value (`uv run pytest` / `pnpm test`, `8080` / `9090`) or a different word of
    substance (`backend` / `frontend`, `always` / `never`)."""
    if is_label(a) or is_label(b):
        return a == b  # the same label again is the same text (an import run twice); the doctor leaves labels out
    from difflib import SequenceMatcher

    wa, wb = _words(a), _words(b)
    for op, i1, i2, j1, j2 in SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        left, right = wa[i1:i2], wb[j1:j2]
        if any(w in NEGATIONS for w in left + right):
            return False
        if not left and not right:
            continue
        if op == "replace" and len(left) == len(right) and all(x == y or _typo(x, y) for x, y in zip(left, right)):
            continue
        if op == "replace" and _typo("".join(left), "".join(right)):
            continue  # a word split or joined ("set up" / "setup"), with at most a typo
        return False
    return True
