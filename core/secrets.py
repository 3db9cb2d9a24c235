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
part are added in `_own_rules()` below, each with the issuer's documented shape, and the
assignment forms it misses (spaced or full-width separators, Chinese and Japanese keys,
passwords said in prose). Values that are code rather than literals (`settings.API_KEY`,
`expected_token`, `str`) are left alone. tests/core/secrets_corpus.py measures recall and
false positives; every rule here is there for an entry of it.

Callers outside this module go through `memtui.core.outbound`, the one gate for what leaves.

Speed: importing detect-secrets costs ~0.1 s (it pulls in `requests` and its scan machinery),
so it is imported on the first line that might hold a secret. A line passes that pre-filter
only if it contains one of the literal markers every detector needs (`_MARKERS`), a long
unbroken token, or a word such as "token" or "secret" together with a sign that every rule
for that word needs (`_WORDS`, `_SIGNS`); ordinary lines cost a microsecond or two.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache, lru_cache
from itertools import compress
from typing import Any, NamedTuple, cast

REDACTED = "[REDACTED]"

__all__ = ["REDACTED", "load_rules", "redact", "redact_many"]


class _Rule(NamedTuple):
    regex: re.Pattern[str]
    group: int | str = 0      # the group that holds the secret (0: the whole match)
    extend: str = ""          # characters a whole-match secret is widened over, to the right
    kind: str = "token"       # "token"; "assignment" (value checked by the filters); "keyword"
                              # (an assignment that starts with a library keyword); "pem";
                              # "prose" (a password said in words, checked by `_prose_value`)
    min_len: int = 0          # shorter whole-match secrets are ignored
    after: str = ""           # a whole match starts with a key name up to this character
    needs: tuple[str, ...] = ()  # lower-cased text one of which the line must hold; with
                                 # none, the line must hold a long token (`_LONG_RUN`)


# ------------------------------------------------------------------ pre-filter

# Literal text (lower-cased) that every rule below needs one of, or else a long unbroken token.
# A line with none of them cannot match any rule: it is returned as is, without importing
# detect-secrets. tests/core/test_secrets.py checks this against trying every rule everywhere.
_MARKERS = (
    # keyword assignments: the library's password, passwd, pwd, db_pass, ...; ours: pass, passphrase
    # (and "the password is hunter2", said in prose without any sign)
    "pass", "pwd",
    # context words and short-token prefixes
    "aws", "xox", "xapp", "hooks.slack.com", "authorization", "bearer", "private key", "putty-user-key", "eyj",
    # ours: curl -u user:pass
    "curl", "pw", "mysql",
)
# Words whose every rule also needs a sign in the line (`_SIGNS`): the library's secret and
# contraseña keyword assignments (`:`, `=` or a quote), ours for token, secret and "password"
# in Chinese and Japanese (密码, 口令, 密钥, パスワード: `=`, `:`, `＝` or `：`), an XML element
# (`<secret>`), and "password is ..." in Chinese or Japanese (密码是, パスワードは). Ordinary
# prose mentions these words all the time ("rotate the token", "密钥管理") without any of them.
_WORDS = ("secret", "contrase", "token", "密码", "口令", "密钥", "パスワード")
_SIGNS = re.compile("[=:＝：\"'`<是为為は]")
# ..._key names: the library's api_key, auth_key, service_key, account_key, db_key, priv_key,
# client_key, ...; ours: api-key, access_key, secret_key; Azure's AccountKey / SharedAccessKey.
_KEY_NAME = re.compile(r"(?:api|auth|service|account|db|database|priv|private|client|access|secret)[_.-]?key")
# Every other rule (AWS key ids, GitHub, GitLab, Stripe, npm, Twilio, SendGrid, Google, OpenAI,
# Mailchimp, Mailgun, Discord, Telegram, PyPI, Square, IBM, Cloudant, SoftLayer, Artifactory)
# matches an unbroken token of at least this many characters.
_LONG_RUN = re.compile(r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{20}")  # tried where a run starts


def _may_hold_secret(text: str) -> bool:
    lowered = text.lower()
    for marker in _MARKERS:
        if marker in lowered:
            return True
    if "key" in lowered and _KEY_NAME.search(lowered):
        return True
    if "@" in text and "://" in text:  # user:password@ in a URL
        return True
    if _LONG_RUN.search(text) is not None:
        return True
    for word in _WORDS:
        if word in lowered:
            return _SIGNS.search(text) is not None
    return False


# ------------------------------------------------------------------ our own patterns

_TOKEN_CHARS = "A-Za-z0-9_-"
_B64URL_DOTTED = "A-Za-z0-9_=.+/-"

@lru_cache(maxsize=1)
def _own_rules() -> tuple[_Rule, ...]:
    """Our rules, compiled on first use (like the library's) to keep the import cheap."""
    return (
        # AWS secret access key: 40 characters of [A-Za-z0-9/+] (AWS IAM "Managing access keys",
        # e.g. wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY), bare, when the line is about AWS (names it
        # or holds an access key id). The library only finds it quoted right after "aws ... key".
        _Rule(re.compile(r"(?i:aws|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b).{0,80}?(?<![A-Za-z0-9/+=])"
                         r"((?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[0-9/+])"
                         r"[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"), group=1, needs=("aws", "akia", "asia")),
        # GitHub: fine-grained PATs github_pat_<22>_<59>; classic prefixes ghp_/gho_/ghu_/ghs_/ghr_
        # + 36 base62 ("About authentication to GitHub", token formats) in any case (GHP_...).
        _Rule(re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"), extend=_TOKEN_CHARS),
        _Rule(re.compile(r"(?i)\bgh[pousr]_[A-Za-z0-9]{30,}"), extend=_TOKEN_CHARS),
        # Stripe secret, restricted and webhook-signing keys, live and test (Stripe "API keys":
        # sk_live_, sk_test_, rk_live_, rk_test_, whsec_). Publishable pk_ keys are public.
        _Rule(re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,}|\bwhsec_[0-9A-Za-z]{24,}"), extend=_TOKEN_CHARS),
        # npm access tokens: npm_ + 36 base62 (npm docs "About access tokens").
        _Rule(re.compile(r"\bnpm_[A-Za-z0-9]{36}"), extend=_TOKEN_CHARS),
        # Google API keys: AIza + 35 (Google Cloud "API keys" / Firebase config).
        _Rule(re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), extend=_TOKEN_CHARS),
        # OpenAI (sk-..., sk-proj-..., sk-svcacct-..., sk-admin-...) and Anthropic (sk-ant-api03-...,
        # sk-ant-admin01-...) API keys; the library only knows OpenAI's legacy T3BlbkFJ form.
        # Random base62 of that length holds a digit; "sk-fading-circle-animation" (a CSS class) does not.
        _Rule(re.compile(r"\bsk-(?:proj-|svcacct-|admin-|ant-[a-z]+\d*-)?(?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{20,}"),
              extend=_TOKEN_CHARS),
        # Hugging Face user access tokens: hf_ + 34 letters and digits (no "_": hf_hub_download).
        _Rule(re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
        # Google OAuth client secrets: GOCSPX- + 28 (Google Cloud console, since 2021).
        _Rule(re.compile(r"\bGOCSPX-[A-Za-z0-9_-]{24,}"), extend=_TOKEN_CHARS),
        # DigitalOcean personal access, OAuth and refresh tokens: dop_v1_ / doo_v1_ / dor_v1_ + 64 hex.
        _Rule(re.compile(r"\bdo[por]_v1_[a-f0-9]{64}\b")),
        # Shopify admin API access tokens, shared secrets, custom and private app tokens: + 32 hex.
        _Rule(re.compile(r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b")),
        # A Twilio auth token is 32 bare hex characters: taken when the line says Twilio and auth
        # or token, or holds an Account SID (AC + 32 hex) before it.
        _Rule(re.compile(r"(?i:twilio.{0,60}?(?:auth|token)|\bAC[0-9a-f]{32}\b).{0,80}?(?<![0-9A-Za-z])([0-9a-f]{32})"
                         r"(?![0-9A-Za-z])"), group=1, needs=("twilio", "ac")),
        # PyPI API tokens: pypi- + a macaroon whose base64 starts with its header (AgEIcHlwaS5vcmc:
        # pypi.org, AgENdGVzdC5weXBpLm9yZw: test.pypi.org). The library wants 70+ characters after
        # the header; a project-scoped token can be much shorter.
        _Rule(re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{16,}"), extend=_TOKEN_CHARS),
        # HashiCorp Vault tokens (Vault 1.10+ "Token prefixes"): hvs. service, hvb. batch, hvr.
        # recovery, then at least 24 base62 characters (the short form; batch tokens run to ~100).
        _Rule(re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"), extend=_TOKEN_CHARS),
        # PKCS#8 encrypted private keys (RFC 5958), which the library's list lacks.
        _Rule(re.compile(r"BEGIN ENCRYPTED PRIVATE KEY"), kind="pem", needs=("private key",)),
        # curl -u / --user user:password (the credential, both halves).
        _Rule(re.compile(r"\bcurl\b.*?\s(?:-u|--user)(?:\s+|=)([\"']?)(?P<value>[^\s:\"'$]+:[^\s\"'$]+)\1"),
              group="value", needs=("curl",)),
        # The value of an HTML password input, <input type="password" value="...">, either order.
        _Rule(re.compile(r"(?i)<input\b(?=[^>]*\btype\s*=\s*[\"']?password\b)[^>]*?\bvalue\s*=\s*([\"'])(?P<value>[^\"']+)\1"),
              group="value", needs=("<input",)),
        # ... and of any input named for a credential (a hidden `token`, `api_key`, `secret`),
        # checked like an assignment's value (a template such as {{ csrf_token() }} stays).
        _Rule(re.compile(r"(?i)<input\b(?=[^>]*\bname\s*=\s*[\"']?[\w.-]*(?:token|secret|passw(?:or)?d|api[_-]?key)"
                         r"[\w.-]*[\"'\s/>])[^>]*?\bvalue\s*=\s*([\"'])(?P<value>[^\"']+)\1"),
              group="value", kind="assignment", needs=("<input",)),
        # Prose: "the password is hunter2", "pwd for the NAS is ...", "密码是 ..." (checked like
        # a password by `_prose_value`: quoted, or holding a digit, a symbol or a capital).
        _Rule(re.compile(r"(?i)\b(?:password|passwd|passphrase|pwd|pw)\b[^.;:!?\n]{0,30}?\s(?:is|was)\s*:?\s+(?:now\s+)?"
                         r"(?P<q>[\"'`]?)(?P<value>[^\s\"'`]{3,})(?P=q)"), group="value", kind="prose",
              needs=("pass", "pwd", "pw")),
        # ... or quoted right after the word: `mongo password "r00t"`.
        # (the quote is not taken as a sign here: `the password 'reset' link` is prose)
        _Rule(re.compile(r"(?i)\b(?:password|passwd|passphrase)\s+(?P<quote>[\"'`])(?P<value>[^\s\"'`]{3,})(?P=quote)"),
              group="value", kind="prose", needs=("pass",)),
        # mysql -pPASSWORD (the password glued to -p; a bare -p asks for it).
        # (not code around it: `mysql -u{user} -p`)`, `-p{password}`, `-p$PASS`)
        _Rule(re.compile(r"\bmysql(?:dump|admin|sh)?\b.*?\s-p(?P<value>[^\s\"'`(){}\[\]<$-][^\s\"'`]*)"), group="value",
              needs=("mysql",)),
        # XML elements: <password>...</password>, <apiKey>...</apiKey>, <secret>, <token>.
        _Rule(re.compile(r"(?i)<(?P<tag>[\w.-]*(?:password|passwd|secret|token|api[_-]?key))>(?P<value>[^<\s]+)</(?P=tag)>"),
              group="value", needs=("pass", "secret", "token", "key")),
        _Rule(re.compile(r"(?:密码|口令|密钥|パスワード)(?:是|为|為|は)\s*(?P<q>[\"'`「]?)(?P<value>[\x21-\x7e]{3,})"),
              group="value", kind="prose", needs=("密码", "口令", "密钥", "パスワード")),
        # Slack tokens of other shapes than the library's (xoxe-, refresh, app-level xapp-). Every
        # Slack token has a number right after its prefix; "#xoxo-team-channel" is a channel name.
        _Rule(re.compile(r"\bxox[abposre]-\d[A-Za-z0-9-]{9,}|\bxapp-\d-[A-Za-z0-9-]{10,}"), extend=_TOKEN_CHARS,
              needs=("xox", "xapp")),
        # Mailgun private API keys: key- + 32 (Mailgun "API keys").
        _Rule(re.compile(r"\bkey-[0-9a-zA-Z]{32}\b")),
        # HTTP Authorization headers (RFC 6750 Bearer, RFC 7617 Basic): the credential only. A bare
        # "Bearer <token>" outside a header counts when the token is long and has a digit.
        _Rule(re.compile(r"(?i)\bauthorization\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+([A-Za-z0-9._~+/-]+=*)"), group=1,
              needs=("authorization",)),
        _Rule(re.compile(r"(?i)\bbearer\s+((?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*)"), group=1,
              needs=("bearer",)),
        # Password in a URL with an empty user name (redis://:password@host); the library's
        # basic-auth pattern needs a user name.
        _Rule(re.compile(r"://:([^\s:/?#\[\]@]+)@"), group=1, needs=("://:",)),
        # Azure connection strings (Storage AccountKey=, Service Bus / Event Hubs SharedAccessKey=):
        # the value; the library only knows an 88-character AccountKey and replaces the key name too.
        _Rule(re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}=*)"), group=1,
              needs=("accountkey=", "sharedaccesskey=")),
    )

# key=value / key: value assignments for key names the library's keyword list lacks (TOKEN=,
# pass:, x-api-key:). The key must *end* with the word, so counters such as MAX_TOKENS=4096 or
# TOKEN_LIMIT=4096 stay. Found by `_OWN_KEYWORD` in the lower-cased line, then `_OWN_VALUE`.
# (Patterns used only once the library is loaded are compiled with it, in `_library()`.)
# Also password, secret and their Chinese and Japanese names, for the forms the library's
# patterns miss: `"password" : "x"`, `password : x`, full-width `＝`/`：`, `PASSWORD: str = "x"`.
# A comparison (`token == expected`) is no assignment.
_OWN_KEYWORD = (r"token|passphrase|password|passwd|pass|secret[_-]?key|secret|api[_-]?key|access[_-]?key"
                r"|密码|口令|密钥|パスワード")
_OWN_VALUE = (r"""(?![\w-])["'\]]{0,2}(?:\s*:\s*[A-Za-z_][\w.]*(?:\[[\w., |]*\])?(?=\s*=))?"""
              r"""\s*(?::=|=>|=(?![=>])|:(?!:)|＝|：)\s*(?P<q>["'`]?)(?P<value>(?(q)[^"'`]+|[^\s"'`,;]+))(?P=q)""")


# ------------------------------------------------------------------ the library's detectors

# Plugins left out on purpose: entropy-only ones (git SHAs, UUIDs, hashes) and public IPs.
_SKIPPED_PLUGINS = {"Base64HighEntropyString", "HexHighEntropyString", "PublicIPDetector", "IPPublicDetector"}
# Plugins whose first capturing group is the secret value (the rest is context: a URL's user
# name, "aws_secret_key = '", "cloudant_password: "). Elsewhere a group is a prefix ("ghp").
_VALUE_GROUP_PLUGINS = {"AWSKeyDetector", "BasicAuthDetector", "CloudantDetector", "IbmCloudIamDetector",
                        "IbmCosHmacDetector", "SoftlayerDetector", "NpmDetector"}
# Whole-match secrets are widened over the token's own alphabet, so a key longer than the
# library's fixed length (Stripe's are) is replaced entirely; JWTs also over dots and base64.
_EXTEND = {"JwtTokenDetector": _B64URL_DOTTED}
# Artifactory's "AP[0-9A-F]..." pattern also fits 11-character upper-case identifiers; its real
# API keys (AKC...) are 73 characters and its encrypted passwords (AP...) about 60.
_MIN_LEN = {"ArtifactoryDetector": 20}
# The Azure pattern's match starts with its key name, which stays.
_AFTER = {"AzureStorageKeyDetector": "="}
# Text a plugin's patterns cannot match without; every other plugin matches a long token only.
_NEEDS = {"AzureStorageKeyDetector": ("accountkey=",), "BasicAuthDetector": ("@",), "JwtTokenDetector": ("eyj",),
          "NpmDetector": ("_authtoken",), "PrivateKeyDetector": ("private key", "putty-user-key"),
          "SlackDetector": ("xox", "hooks.slack.com")}


class _Library(NamedTuple):
    rules: tuple[_Rule, ...]
    keyword_rules: tuple[_Rule, ...]                             # tried where a keyword starts
    gated: tuple[tuple[tuple[str, ...], tuple[_Rule, ...]], ...]  # the others, by what they need
    markers: tuple[str, ...]                 # every text some group of `gated` needs
    by_marker: dict[str, tuple[int, ...]]    # marker -> the groups of `gated` that need it
    unconditional: tuple[int, ...]           # the groups that need a long token instead
    keyword_start: re.Pattern[str]       # where the keyword plugin's patterns can start (lower-cased)
    keyword_start_i: re.Pattern[str]     # the same, case-insensitive, for text whose length lower() changes
    templated: Callable[[str], bool]
    dollar: Callable[[str], bool]
    own_keyword: re.Pattern[str]
    own_keyword_i: re.Pattern[str]
    own_value: re.Pattern[str]
    indirect: re.Pattern[str]
    reference_key: re.Pattern[str]
    pem_end: re.Pattern[str]


@lru_cache(maxsize=1)
def _library() -> _Library:
    """The library's rules (imported on first use: ~0.1 s) followed by ours."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import RegexBasedDetector

    rules: list[_Rule] = []
    plugins: list[type[Any]] = sorted(get_mapping_from_secret_type_to_class().values(), key=lambda c: c.__name__)
    for plugin in plugins:
        name = plugin.__name__
        if name in _SKIPPED_PLUGINS or not issubclass(plugin, RegexBasedDetector):
            continue
        kind = "pem" if name == "PrivateKeyDetector" else "token"
        denylist = cast(Iterable[re.Pattern[str]], plugin.denylist)  # a class attribute on every concrete plugin
        for regex in denylist:
            group = 1 if name in _VALUE_GROUP_PLUGINS and regex.groups else 0
            extend = _EXTEND.get(name, _TOKEN_CHARS if group == 0 else "")
            needs = ("aws",) if name == "AWSKeyDetector" and regex.groups else _NEEDS.get(name, ())
            rules.append(_Rule(regex, group, extend, kind, _MIN_LEN.get(name, 0), _AFTER.get(name, ""), needs))
    # The keyword plugin picks its patterns by file type; a memory line can be any of them
    # (.env, YAML, JSON, code), so every pattern of every type is used, with its value group.
    # All but one start with the keyword: those are tried only where a keyword starts.
    seen: set[re.Pattern[str]] = set()
    for table in (keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, *keyword.REGEX_BY_FILETYPE.values()):
        for regex, group in table.items():
            if regex in seen:
                continue
            seen.add(regex)
            if regex.pattern.startswith(keyword.DENYLIST_REGEX):
                rules.append(_Rule(regex, group, kind="keyword"))
            else:  # "value" == my_password
                rules.append(_Rule(regex, group, kind="assignment", needs=("==", "!=")))
    starts = "|".join(keyword.DENYLIST)
    rules += _own_rules()
    by_needs: dict[tuple[str, ...], list[_Rule]] = {}
    for rule in rules:
        if rule.kind != "keyword":
            by_needs.setdefault(rule.needs, []).append(rule)
    gated = tuple((needs, tuple(group)) for needs, group in by_needs.items())
    by_marker: dict[str, list[int]] = {}
    for at, (needs, _) in enumerate(gated):
        for marker in needs:
            by_marker.setdefault(marker, []).append(at)
    return _Library(tuple(rules), tuple(r for r in rules if r.kind == "keyword"), gated,
                    tuple(by_marker), {marker: tuple(ats) for marker, ats in by_marker.items()},
                    tuple(at for at, (needs, _) in enumerate(gated) if not needs),
                    re.compile(starts), re.compile(starts, re.IGNORECASE),
                    heuristic.is_templated_secret, heuristic.is_prefixed_with_dollar_sign,
                    re.compile(_OWN_KEYWORD), re.compile(_OWN_KEYWORD, re.IGNORECASE), re.compile(_OWN_VALUE),
                    re.compile(_INDIRECT), re.compile(_REFERENCE_KEY),
                    re.compile(_PEM_END))


def _rules() -> tuple[_Rule, ...]:
    return _library().rules


def load_rules() -> None:
    """Import detect-secrets and compile every rule now (otherwise done on the first line
    that passes the pre-filter)."""
    _library()


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
    lib = _library()
    if not value or REDACTED in value or lib.templated(value) or lib.dollar(value):
        return None
    return start, start + len(value)
_INDIRECT = r"^[\w.$-]+[\[(].*[\])]?$"   # a call or subscript: get_password(), env["X"]
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_ANNOTATED = re.compile(r"\s*=(?![=>])")
# Keys that name, size or locate a secret rather than hold it (secretName, PASSWORD_MIN_LENGTH,
# token_ttl, password_file, SECRET_REF), and plurals, which in a memory head prose
# ("Passwords: never commit them") or a YAML mapping whose values are on other lines.
_REFERENCE_KEY = (r"(?i)(?:name|names|ref|path|file|dir|length|len|min|max|count|limit|size|ttl|timeout"
                  r"|expiry|expires|age|days|type|policy|policies|url|uri|endpoint|header|field|prompt"
                  r"|words|secrets|tokens|keys|manager|arn|id)$")


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


def _assignment_key(lib: _Library, text: str, m: re.Match[str], group: int | str) -> str:
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
    lib = _library()
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
    lib = _library()
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


_PEM_END = r"-----END[A-Z0-9 ]*(?:PRIVATE KEY(?: BLOCK)?|KEY FILE)-----"


@cache
def _widener(chars: str) -> re.Pattern[str]:
    return re.compile(f"[{chars}]+")


def _starts(pattern: re.Pattern[str], text: str) -> Iterator[int]:
    """Every index where `pattern` matches, overlapping ones included."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        yield m.start()
        pos = m.start() + 1


def _matches(text: str, exhaustive: bool) -> Iterator[tuple[_Rule, re.Match[str]]]:
    """Every rule's matches. Each rule is only tried where it can match: on lines holding its
    literal text or a long token, and the keyword patterns only where a keyword starts.
    `exhaustive` tries every rule everywhere (the tests compare the two)."""
    lib = _library()
    lowered = text.lower()
    same_length = len(lowered) == len(text)
    has_long = exhaustive or _LONG_RUN.search(text) is not None
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
    own = _Rule(lib.own_value, "value", kind="assignment")
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
            close = _library().pem_end.search(text, end)
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
    if not _may_hold_secret(text):
        return text, 0
    return _scan(text)


def redact_many(lines: Sequence[str]) -> dict[int, tuple[str, int]]:
    """`redact` of each line, kept only where it replaced something: {position: (line, count)}.
    The pre-filter runs over all of them in one C loop; the detectors see only those it passes."""
    found = {}
    for at in compress(range(len(lines)), map(_may_hold_secret, lines)):
        line, n = _scan(lines[at])
        if n:
            found[at] = (line, n)
    return found
