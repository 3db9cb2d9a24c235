"""Secret redaction (SPEC §8): secrets in a memory's one-line text become `[REDACTED]`.

Detection is done by the plugins of Yelp's detect-secrets (`detect_secrets.plugins`), used as
a library on one string: every regex-based plugin's `denylist` and the keyword plugin's
assignment patterns, run with `finditer`/`match` so that we know *where* each secret is (its
`analyze_line` only says *what*), plus the library's false-positive heuristics
(`detect_secrets.filters.heuristic`). Only the value is
replaced: `password=hunter2` becomes `password=[REDACTED]`, `postgres://u:p@h/db` becomes
`postgres://u:[REDACTED]@h/db`; everything else in the line stays byte for byte.

Deliberately *not* used: the entropy-only plugins (Base64/Hex high-entropy strings), which
flag git SHAs, UUIDs and content hashes that memories mention all the time, and the public-IP
plugin (an address is not a credential). A few formats the library lacks or matches only in
part are added in `secret_rules._own_rules()`, each with the issuer's documented shape, and the
assignment forms it misses (spaced or full-width separators, Chinese and Japanese keys,
passwords said in prose). Values that are code rather than literals (`settings.API_KEY`,
`expected_token`, `str`) are left alone. tests/core/secrets_corpus.py measures recall and
false positives; every rule here is there for an entry of it.

Callers outside this module go through `memtui.core.outbound`, the one gate for what leaves.

Speed: importing detect-secrets costs ~0.1 s (it pulls in `requests` and its scan machinery),
so it is imported on the first line that might hold a secret. A line passes that pre-filter
only if it contains one of the literal markers every detector needs (`secret_rules._MARKERS`), a long
unbroken token, or a word such as "token" or "secret" together with a sign that every rule
for that word needs (`_WORDS`, `_SIGNS`); ordinary lines cost a microsecond or two.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from functools import cache

from .secret_rules import LONG_RUN, REDACTED, Library, Rule, library, load_rules, may_hold_secret, may_hold_secret_many

__all__ = ["REDACTED", "load_rules", "redact", "redact_many"]


# An assignment is matched within this many characters of its keyword, so that a long line full
# of keywords costs linear time, not quadratic; a longer unquoted value is still replaced whole.
_WINDOW = 1024
_VALUE_END = re.compile(r"[\s;]")
_NOT_SECRETS = {"true", "false", "null", "none", "nil", "yes", "no", "on", "off", "undefined", "redacted",
                "enabled", "disabled", "required", "optional",
                # a parameter's default in code: `CancellationToken cancellationToken = default)`
                "default",
                # code, not a value: `token = await getToken()`, `expected_token: return True`
                "await", "async", "return", "new", "function", "lambda", "self", "this", "super", "typeof", "yield",
                # a type in a signature: `def check(password: str)`, `secretKey: string;`
                "str", "string", "bytes", "int", "bool", "boolean", "number", "any", "secretstr", "object"}
# An unquoted value that is code rather than a literal: an attribute path (settings.API_KEY,
# req.body.password) or a name that itself says what it holds (expected_token, confirmPassword).
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_NAMED = re.compile(r"[A-Za-z_]*(?:_|[a-z][A-Z])[A-Za-z_]*")
_NAMING_WORDS = ("password", "passwd", "pwd", "token", "secret", "key", "pass")
# A password said in prose is one word that looks like one: a digit, a symbol or an inner capital
# ("is hunter2", "is Winter-Sky"), not "is stored", "is required".
_PASSWORD_LIKE = re.compile(r"\d|[^A-Za-z0-9'’-]|.[A-Z]")
_MEASURE = re.compile(r"\d+[+]?(?:-?[a-z]+)*")  # "128-bit", "16+", "12chars": a size, not a password
# "password: same as staging", "token: rotate weekly": a lower-case word after a colon that the
# sentence goes on from is prose, not a YAML value.
_PROSE_WORD = re.compile(r"[a-z]+")
_GOES_ON = re.compile(r"(?:['’][a-z]+)?[ \t]+\w")
_COLON_BEFORE = re.compile(r"[:：][ \t]*$")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # `GITHUB_TOKEN` in backticks names a variable


def _is_code(value: str) -> bool:
    """Is this unquoted value a name or attribute path in code rather than a literal?"""
    if value.endswith(")") and "(" not in value:  # `password === confirmPassword)`
        value = value.rstrip(")")
    if _DOTTED.fullmatch(value):
        return True
    return _NAMED.fullmatch(value) is not None and any(w in value.lower() for w in _NAMING_WORDS)


def _prose_value(text: str, m: re.Match[str]) -> tuple[int, int] | None:
    """The span of a password said in prose ("the password is hunter2"), or None."""
    start, end = m.span("value")
    quote = m.groupdict().get("q")
    quoted = bool(quote) and quote != "「"
    value = text[start:end]
    if not quoted:
        value = value.rstrip(".,;:!?)」")
        if value.lower() in _NOT_SECRETS or not _PASSWORD_LIKE.search(value) or _MEASURE.fullmatch(value):
            return None
    lib = library()
    if not value or REDACTED in value or lib.templated(value) or lib.dollar(value):
        return None
    return start, start + len(value)
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_ANNOTATED = re.compile(r"\s*=(?![=>])")


def _key_starting_at(text: str, start: int) -> str:
    end = start
    while end < len(text) and (text[end].isalnum() or text[end] in "_.-"):
        end += 1
    return text[start:end]


def _key_ending_at(text: str, end: int) -> str:
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    return text[start:end]


def _assignment_key(lib: Library, text: str, m: re.Match[str], group: int | str) -> str:
    if group == "value":  # ours: the key ends where the value pattern starts
        return _key_ending_at(text, m.start())
    if m.group(1) and m.group(1)[0].isalpha():           # keyword first: password_x = "..."
        return _key_starting_at(text, m.start(1))
    return _key_ending_at(text, m.end())                 # keyword last: "..." == my_password


def _assignment_value(text: str, m: re.Match[str], group: int | str) -> tuple[int, int] | None:
    """The span of an assignment's value, or None when the library's heuristics (or ours) say
    the value is not a secret."""
    start, end = m.span(group)
    if _EXPANSION_KEY.search(text, max(0, start - 128), start):  # `${DB_PASS:-password}`
        return _expansion_default(text, start)
    value = text[start:end]
    quoted = start > 0 and text[start - 1] in "\"'`" and end < len(text) and text[end] == text[start - 1]
    if not quoted:
        # The keyword plugin scans a file line by line and lets an unquoted value run to the end
        # of the line; in one-line memory text it ends at the first space (or at a ";" that
        # separates the fields of a connection string).
        cut = _VALUE_END.search(text, start, end)
        if cut:
            value = text[start:cut.start()]
        elif m.end() - m.start() >= _WINDOW:  # the match stopped at the window: the value goes on
            cut = _VALUE_END.search(text, end)
            value = text[start:cut.start() if cut else len(text)]
        value = value.rstrip(",;")
        end = start + len(value)
    bare = value.rstrip(")") if not quoted and "(" not in value else value  # `check(password: str)`
    if not value.strip() or REDACTED in value or bare.lower() in _NOT_SECRETS:
        return None
    if not _ASCII_ALNUM.search(value) or (not quoted and _is_code(value)):  # "********", "请向管理员索取"
        return None
    if not quoted and _ANNOTATED.match(text, end):  # `PASSWORD: str = "x"`: a type, the value follows
        return None
    if (not quoted and _PROSE_WORD.fullmatch(value) and _GOES_ON.match(text, end)
            and _COLON_BEFORE.search(text, max(0, start - 8), start)):
        return None
    if quoted and text[start - 1] == "`" and _ENV_NAME.fullmatch(value):
        return None
    token_start = max(text.rfind(c, 0, m.start()) for c in " \t\r\n\"'`") + 1
    if text.startswith(("arn:", "ARN:"), token_start):  # an AWS ARN names a secret (…:secret:prod/db)
        return None
    # the library's filters for templates ({x}, <x>, ${x}) and $VARIABLES; a one-character value
    # is still a password (the library drops those as "weak")
    lib = library()
    if (len(value) > 1 and lib.templated(value)) or lib.dollar(value) or (not quoted and lib.indirect.match(value)):
        return None
    key = _assignment_key(lib, text, m, group)
    if lib.reference_key.search(key):
        return None
    if not quoted and value.lower() == key.lower():  # `Client(token=token)`: a variable passed on
        return None
    return start, end


# `${NAME:-default}` (or `:=`, `-`, `=`): a shell expansion names a variable; only a default that
# looks like a password (not a plain word such as `password` or `postgres`) is one.
_EXPANSION_KEY = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=?+]?$")


def _expansion_default(text: str, start: int) -> tuple[int, int] | None:
    """The span of the default of the `${NAME:-…}` whose value starts at `start`, or None."""
    j = start
    while j < len(text) and text[j] in "-=?+":
        j += 1
    close = text.find("}", j)
    value = text[j:close] if close != -1 else ""
    lib = library()
    if (not value or _PROSE_WORD.fullmatch(value) or not _ASCII_ALNUM.search(value) or lib.templated(value)
            or lib.dollar(value) or any(c.isspace() for c in value)):
        return None
    return j, close


def _closers_kept(text: str, start: int, end: int) -> int:
    """`end` moved left past closing brackets the span does not open: a secret never takes the
    code around it (`connect(password=x)` keeps its `)`)."""
    while end > start and text[end - 1] in ")]}":
        opener = "([{"[")]}".index(text[end - 1])]
        if text.count(opener, start, end) >= text.count(text[end - 1], start, end):
            break
        end -= 1
    return end


@cache
def _widener(chars: str) -> re.Pattern[str]:
    return re.compile(f"[{chars}]+")


def _starts(pattern: re.Pattern[str], text: str) -> Iterator[int]:
    """Every index where `pattern` matches, overlapping ones included."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        yield m.start()
        pos = m.start() + 1


def _matches(text: str, exhaustive: bool) -> Iterator[tuple[Rule, re.Match[str]]]:
    """Every rule's matches. Each rule is only tried where it can match: on lines holding its
    literal text or a long token, and the keyword patterns only where a keyword starts.
    `exhaustive` tries every rule everywhere (the tests compare the two)."""
    lib = library()
    lowered = text.lower()
    same_length = len(lowered) == len(text)
    has_long = exhaustive or LONG_RUN.search(text) is not None
    if exhaustive:
        keyword_starts = own_starts = list(range(len(text)))
    elif same_length:
        keyword_starts = list(_starts(lib.keyword_start, lowered))
        own_starts = list(_starts(lib.own_keyword, lowered))
    else:  # lower() changed the length (e.g. "İ"): indices differ, search the text itself
        keyword_starts = list(_starts(lib.keyword_start_i, text))
        own_starts = list(_starts(lib.own_keyword_i, text))
    for start in keyword_starts:
        for rule in lib.keyword_rules:
            m = rule.regex.match(text, start, start + _WINDOW)
            if m:
                yield rule, m
    if exhaustive:
        groups: Iterable[int] = range(len(lib.gated))
    else:  # the groups whose literal text the line holds (each marker looked for once), in their order
        wanted = {at for marker in lib.markers if marker in lowered for at in lib.by_marker[marker]}
        if has_long:
            wanted.update(lib.unconditional)
        groups = sorted(wanted)
    for at in groups:
        for rule in lib.gated[at][1]:
            for m in rule.regex.finditer(text):
                yield rule, m
    own = Rule(lib.own_value, "value", kind="assignment")
    for start in own_starts:
        key = lib.own_keyword_i.match(text, start)
        if key and _inside_word(text, start, key.end()):
            continue
        if key:
            m = lib.own_value.match(text, key.end(), key.end() + _WINDOW)
            if m:
                yield own, m


def _inside_word(text: str, start: int, end: int) -> bool:
    """Is the short keyword "pass" at text[start:end] the tail of another word (compass,
    bypass, COMPASS)? It counts after a non-letter or as a camel-case part (DB_PASS, dbPass)."""
    if end - start != 4 or start == 0:
        return False
    before = text[start - 1]
    return before.isalpha() and not (before.islower() and text[start].isupper())


def _spans(text: str, exhaustive: bool = False) -> Iterator[tuple[int, int]]:
    for rule, m in _matches(text, exhaustive):
        if rule.kind == "prose":
            span = _prose_value(text, m)
            if span:
                yield span
            continue
        if rule.kind in ("assignment", "keyword"):
            span = _assignment_value(text, m, rule.group)
            if span:
                yield span
            continue
        start, end = m.span(rule.group)
        if rule.kind == "pem":
            # The library flags the header; the whole block goes, up to its END line or, when
            # it was cut off, the end of the text.
            begin = text.rfind("-----", 0, start)
            start = begin if begin != -1 and begin >= start - 6 else start
            close = library().pem_end.search(text, end)
            yield start, close.end() if close else len(text)
            continue
        if rule.group == 0:
            if rule.after:
                start = text.index(rule.after, start, end) + 1
            # trim the delimiters some patterns include (Artifactory: a leading space or "=")
            while start < end and text[start] in " \t=:\"'":
                start += 1
            while end > start and text[end - 1] in " \t\"'":
                end -= 1
            if rule.extend:
                wider = _widener(rule.extend).match(text, end)
                end = wider.end() if wider else end
                while end > start and text[end - 1] == ".":
                    end -= 1
            if end - start < rule.min_len:
                continue
        if end > start and text[start:end] != REDACTED:  # already redacted: nothing more to find
            yield start, end


def _scan(text: str, exhaustive: bool = False) -> tuple[str, int]:
    """Redact without the pre-filter (what `redact` does for a line that passes it)."""
    merged: list[list[int]] = []
    spans = ((start, _closers_kept(text, start, end)) for start, end in _spans(text, exhaustive))
    for start, end in sorted((start, end) for start, end in spans if end > start):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    if not merged:
        return text, 0
    out, last = [], 0
    for start, end in merged:
        out += [text[last:start], REDACTED]
        last = end
    out.append(text[last:])
    return "".join(out), len(merged)


def redact(text: str) -> tuple[str, int]:
    """Return `text` with each secret replaced by `[REDACTED]`, and how many were replaced.

    Only the secret value changes; the same text always gives the same result."""
    if not isinstance(text, str):
        raise TypeError(f"redact() needs a str, not {type(text).__name__}")
    if not may_hold_secret(text):
        return text, 0
    return _scan(text)


def redact_many(lines: Sequence[str]) -> dict[int, tuple[str, int]]:
    """`redact` of each line, kept only where it replaced something: {position: (line, count)}.
    The pre-filter looks over all of them at once (`may_hold_secret_many`); the detectors see
    only those it passes."""
    found = {}
    for at in may_hold_secret_many(lines):
        line, n = _scan(lines[at])
        if n:
            found[at] = (line, n)
    return found
