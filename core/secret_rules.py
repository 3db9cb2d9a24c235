"""The rules secret redaction runs (SPEC §8, `core.secrets`): the detectors of Yelp's
detect-secrets (imported on first use, ~0.1 s), the formats and assignment forms memtui adds
(`_own_rules`), and the pre-filter (`may_hold_secret`) that lets an ordinary line through
without importing the library."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any, NamedTuple, cast

REDACTED = "[REDACTED]"


class Rule(NamedTuple):
    regex: re.Pattern[str]
    group: int | str = 0      # the group that holds the secret (0: the whole match)
    extend: str = ""          # characters a whole-match secret is widened over, to the right
    kind: str = "token"       # "token"; "assignment" (value checked by the filters); "keyword"
                              # (an assignment that starts with a library keyword); "pem";
                              # "prose" (a password said in words, checked by `_prose_value`)
    min_len: int = 0          # shorter whole-match secrets are ignored
    after: str = ""           # a whole match starts with a key name up to this character
    needs: tuple[str, ...] = ()  # lower-cased text one of which the line must hold; with
                                 # none, the line must hold a long token (`LONG_RUN`)


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
LONG_RUN = re.compile(r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{20}")  # tried where a run starts


def may_hold_secret(text: str) -> bool:
    lowered = text.lower()
    for marker in _MARKERS:
        if marker in lowered:
            return True
    if "key" in lowered and _KEY_NAME.search(lowered):
        return True
    if "@" in text and "://" in text:  # user:password@ in a URL
        return True
    if LONG_RUN.search(text) is not None:
        return True
    for word in _WORDS:
        if word in lowered:
            return _SIGNS.search(text) is not None
    return False


# Over many lines at once (`may_hold_secret_many`), looked for in the lower-cased lines joined:
# literals one of which every line the pre-filter lets through before `_WORDS` holds (each
# marker holds one: "pwd" holds "pw", "private key" "key"; every `_KEY_NAME` ends with "key";
# "://"), and `_WORDS`; the long tokens in the lines' UTF-8 bytes with every byte mapped to a
# token byte, a newline or neither (a token character is ASCII: any other character is bytes
# from 0x80, never one of them).
_LITERALS = tuple(literal.encode() for literal in ("pass", "pw", "aws", "xox", "xapp", "hooks.slack.com",
                                                  "authorization", "bearer", "eyj", "curl", "mysql", "key", "://"))
_WORDS_UTF8 = tuple(word.encode() for word in _WORDS)
_TOKEN_BYTES = bytes.maketrans(
    bytes(range(256)), bytes(0x61 if chr(b) in "-_" or chr(b).isascii() and chr(b).isalnum() else 0x0A if b == 0x0A
                             else 0x20 for b in range(256)))
_LONG_TOKEN = b"a" * 20  # `LONG_RUN` in the mapped bytes


def may_hold_secret_many(texts: Sequence[str]) -> list[int]:
    """`[i for i, text in enumerate(texts) if may_hold_secret(text)]`, each literal and long
    token of the pre-filter looked for once in all the texts joined, as UTF-8 (a C search): a
    text holding a literal or a long token is asked `may_hold_secret`, one holding only one of
    `_WORDS` whether it holds a sign, as `may_hold_secret` then does; the others hold none."""
    lowered = "\n".join(map(str.lower, texts)).encode("utf-8", "surrogatepass")
    if lowered.count(b"\n") != len(texts) - 1:  # (a text of several lines: one at a time)
        return [at for at, text in enumerate(texts) if may_hold_secret(text)]
    strong = _lines_holding(lowered, _LITERALS)
    strong |= _lines_holding("\n".join(texts).encode("utf-8", "surrogatepass").translate(_TOKEN_BYTES), [_LONG_TOKEN])
    weak = [at for at in _lines_holding(lowered, _WORDS_UTF8) - strong if _SIGNS.search(texts[at]) is not None]
    return sorted([at for at in strong if may_hold_secret(texts[at])] + weak)


def _lines_holding(joined: bytes, needles: Iterable[bytes]) -> set[int]:
    """The lines (of `joined`, one a newline) holding one of `needles` (none holds a newline)."""
    found = set()
    for needle in needles:
        at, seen, line = joined.find(needle), 0, 0  # (`line`: the newlines before `seen`)
        while at >= 0:
            line += joined.count(b"\n", seen, at)
            found.add(line)
            seen = joined.find(b"\n", at) + 1
            if not seen:
                break
            line += 1
            at = joined.find(needle, seen)
    return found


# ------------------------------------------------------------------ our own patterns

_TOKEN_CHARS = "A-Za-z0-9_-"
_B64URL_DOTTED = "A-Za-z0-9_=.+/-"

@lru_cache(maxsize=1)
def _own_rules() -> tuple[Rule, ...]:
    """Our rules, compiled on first use (like the library's) to keep the import cheap."""
    return (
        # AWS secret access key: 40 characters of [A-Za-z0-9/+] (AWS IAM "Managing access keys",
        # e.g. wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY), bare, when the line is about AWS (names it
        # or holds an access key id). The library only finds it quoted right after "aws ... key".
        Rule(re.compile(r"(?i:aws|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b).{0,80}?(?<![A-Za-z0-9/+=])"
                         r"((?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[0-9/+])"
                         r"[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"), group=1, needs=("aws", "akia", "asia")),
        # GitHub: fine-grained PATs github_pat_<22>_<59>; classic prefixes ghp_/gho_/ghu_/ghs_/ghr_
        # + 36 base62 ("About authentication to GitHub", token formats) in any case (GHP_...).
        Rule(re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"), extend=_TOKEN_CHARS),
        Rule(re.compile(r"(?i)\bgh[pousr]_[A-Za-z0-9]{30,}"), extend=_TOKEN_CHARS),
        # Stripe secret, restricted and webhook-signing keys, live and test (Stripe "API keys":
        # sk_live_, sk_test_, rk_live_, rk_test_, whsec_). Publishable pk_ keys are public.
        Rule(re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,}|\bwhsec_[0-9A-Za-z]{24,}"), extend=_TOKEN_CHARS),
        # npm access tokens: npm_ + 36 base62 (npm docs "About access tokens").
        Rule(re.compile(r"\bnpm_[A-Za-z0-9]{36}"), extend=_TOKEN_CHARS),
        # Google API keys: AIza + 35 (Google Cloud "API keys" / Firebase config).
        Rule(re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), extend=_TOKEN_CHARS),
        # OpenAI (sk-..., sk-proj-..., sk-svcacct-..., sk-admin-...) and Anthropic (sk-ant-api03-...,
        # sk-ant-admin01-...) API keys; the library only knows OpenAI's legacy T3BlbkFJ form.
        # Random base62 of that length holds a digit; "sk-fading-circle-animation" (a CSS class) does not.
        Rule(re.compile(r"\bsk-(?:proj-|svcacct-|admin-|ant-[a-z]+\d*-)?(?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{20,}"),
              extend=_TOKEN_CHARS),
        # Hugging Face user access tokens: hf_ + 34 letters and digits (no "_": hf_hub_download).
        Rule(re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
        # Google OAuth client secrets: GOCSPX- + 28 (Google Cloud console, since 2021).
        Rule(re.compile(r"\bGOCSPX-[A-Za-z0-9_-]{24,}"), extend=_TOKEN_CHARS),
        # DigitalOcean personal access, OAuth and refresh tokens: dop_v1_ / doo_v1_ / dor_v1_ + 64 hex.
        Rule(re.compile(r"\bdo[por]_v1_[a-f0-9]{64}\b")),
        # Shopify admin API access tokens, shared secrets, custom and private app tokens: + 32 hex.
        Rule(re.compile(r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b")),
        # A Twilio auth token is 32 bare hex characters: taken when the line says Twilio and auth
        # or token, or holds an Account SID (AC + 32 hex) before it.
        Rule(re.compile(r"(?i:twilio.{0,60}?(?:auth|token)|\bAC[0-9a-f]{32}\b).{0,80}?(?<![0-9A-Za-z])([0-9a-f]{32})"
                         r"(?![0-9A-Za-z])"), group=1, needs=("twilio", "ac")),
        # PyPI API tokens: pypi- + a macaroon whose base64 starts with its header (AgEIcHlwaS5vcmc:
        # pypi.org, AgENdGVzdC5weXBpLm9yZw: test.pypi.org). The library wants 70+ characters after
        # the header; a project-scoped token can be much shorter.
        Rule(re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{16,}"), extend=_TOKEN_CHARS),
        # HashiCorp Vault tokens (Vault 1.10+ "Token prefixes"): hvs. service, hvb. batch, hvr.
        # recovery, then at least 24 base62 characters (the short form; batch tokens run to ~100).
        Rule(re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"), extend=_TOKEN_CHARS),
        # PKCS#8 encrypted private keys (RFC 5958), which the library's list lacks.
        Rule(re.compile(r"BEGIN ENCRYPTED PRIVATE KEY"), kind="pem", needs=("private key",)),
        # curl -u / --user user:password (the credential, both halves).
        Rule(re.compile(r"\bcurl\b.*?\s(?:-u|--user)(?:\s+|=)([\"']?)(?P<value>[^\s:\"'$]+:[^\s\"'$]+)\1"),
              group="value", needs=("curl",)),
        # The value of an HTML password input, <input type="password" value="...">, either order.
        Rule(re.compile(r"(?i)<input\b(?=[^>]*\btype\s*=\s*[\"']?password\b)[^>]*?\bvalue\s*=\s*([\"'])(?P<value>[^\"']+)\1"),
              group="value", needs=("<input",)),
        # ... and of any input named for a credential (a hidden `token`, `api_key`, `secret`),
        # checked like an assignment's value (a template such as {{ csrf_token() }} stays).
        Rule(re.compile(r"(?i)<input\b(?=[^>]*\bname\s*=\s*[\"']?[\w.-]*(?:token|secret|passw(?:or)?d|api[_-]?key)"
                         r"[\w.-]*[\"'\s/>])[^>]*?\bvalue\s*=\s*([\"'])(?P<value>[^\"']+)\1"),
              group="value", kind="assignment", needs=("<input",)),
        # Prose: "the password is hunter2", "pwd for the NAS is ...", "密码是 ..." (checked like
        # a password by `_prose_value`: quoted, or holding a digit, a symbol or a capital).
        Rule(re.compile(r"(?i)\b(?:password|passwd|passphrase|pwd|pw)\b[^.;:!?\n]{0,30}?\s(?:is|was)\s*:?\s+(?:now\s+)?"
                         r"(?P<q>[\"'`]?)(?P<value>[^\s\"'`]{3,})(?P=q)"), group="value", kind="prose",
              needs=("pass", "pwd", "pw")),
        # ... or quoted right after the word: `mongo password "r00t"`.
        # (the quote is not taken as a sign here: `the password 'reset' link` is prose)
        Rule(re.compile(r"(?i)\b(?:password|passwd|passphrase)\s+(?P<quote>[\"'`])(?P<value>[^\s\"'`]{3,})(?P=quote)"),
              group="value", kind="prose", needs=("pass",)),
        # mysql -pPASSWORD (the password glued to -p; a bare -p asks for it).
        # (not code around it: `mysql -u{user} -p`)`, `-p{password}`, `-p$PASS`)
        Rule(re.compile(r"\bmysql(?:dump|admin|sh)?\b.*?\s-p(?P<value>[^\s\"'`(){}\[\]<$-][^\s\"'`]*)"), group="value",
              needs=("mysql",)),
        # XML elements: <password>...</password>, <apiKey>...</apiKey>, <secret>, <token>.
        Rule(re.compile(r"(?i)<(?P<tag>[\w.-]*(?:password|passwd|secret|token|api[_-]?key))>(?P<value>[^<\s]+)</(?P=tag)>"),
              group="value", needs=("pass", "secret", "token", "key")),
        Rule(re.compile(r"(?:密码|口令|密钥|パスワード)(?:是|为|為|は)\s*(?P<q>[\"'`「]?)(?P<value>[\x21-\x7e]{3,})"),
              group="value", kind="prose", needs=("密码", "口令", "密钥", "パスワード")),
        # Slack tokens of other shapes than the library's (xoxe-, refresh, app-level xapp-). Every
        # Slack token has a number right after its prefix; "#xoxo-team-channel" is a channel name.
        Rule(re.compile(r"\bxox[abposre]-\d[A-Za-z0-9-]{9,}|\bxapp-\d-[A-Za-z0-9-]{10,}"), extend=_TOKEN_CHARS,
              needs=("xox", "xapp")),
        # Mailgun private API keys: key- + 32 (Mailgun "API keys").
        Rule(re.compile(r"\bkey-[0-9a-zA-Z]{32}\b")),
        # HTTP Authorization headers (RFC 6750 Bearer, RFC 7617 Basic): the credential only. A bare
        # "Bearer <token>" outside a header counts when the token is long and has a digit.
        Rule(re.compile(r"(?i)\bauthorization\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+([A-Za-z0-9._~+/-]+=*)"), group=1,
              needs=("authorization",)),
        Rule(re.compile(r"(?i)\bbearer\s+((?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*)"), group=1,
              needs=("bearer",)),
        # Password in a URL with an empty user name (redis://:password@host); the library's
        # basic-auth pattern needs a user name.
        Rule(re.compile(r"://:([^\s:/?#\[\]@]+)@"), group=1, needs=("://:",)),
        # Azure connection strings (Storage AccountKey=, Service Bus / Event Hubs SharedAccessKey=):
        # the value; the library only knows an 88-character AccountKey and replaces the key name too.
        Rule(re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}=*)"), group=1,
              needs=("accountkey=", "sharedaccesskey=")),
    )

# key=value / key: value assignments for key names the library's keyword list lacks (TOKEN=,
# pass:, x-api-key:). The key must *end* with the word, so counters such as MAX_TOKENS=4096 or
# TOKEN_LIMIT=4096 stay. Found by `_OWN_KEYWORD` in the lower-cased line, then `_OWN_VALUE`.
# (Patterns used only once the library is loaded are compiled with it, in `library()`.)
# Also password, secret and their Chinese and Japanese names, for the forms the library's
# patterns miss: `"password" : "x"`, `password : x`, full-width `＝`/`：`, `PASSWORD: str = "x"`.
# A comparison (`token == expected`) is no assignment.
_OWN_KEYWORD = (r"token|passphrase|password|passwd|pass|secret[_-]?key|secret|api[_-]?key|access[_-]?key"
                r"|密码|口令|密钥|パスワード")
_OWN_VALUE = (r"""(?![\w-])["'\]]{0,2}(?:\s*:\s*[A-Za-z_][\w.]*(?:\[[\w., |]*\])?(?=\s*=))?"""
              r"""\s*(?::=|=>|=(?![=>])|:(?!:)|＝|：)\s*(?P<q>["'`]?)(?P<value>(?(q)[^"'`]+|[^\s"'`,;]+))(?P=q)""")


# Patterns of the value checks, compiled with the library (`library()`).
_INDIRECT = r"^[\w.$-]+[\[(].*[\])]?$"   # a call or subscript: get_password(), env["X"]
# Keys that name, size or locate a secret rather than hold it (secretName, PASSWORD_MIN_LENGTH,
# token_ttl, password_file, SECRET_REF), and plurals, which in a memory head prose
# ("Passwords: never commit them") or a YAML mapping whose values are on other lines.
_REFERENCE_KEY = (r"(?i)(?:name|names|ref|path|file|dir|length|len|min|max|count|limit|size|ttl|timeout"
                  r"|expiry|expires|age|days|type|policy|policies|url|uri|endpoint|header|field|prompt"
                  r"|words|secrets|tokens|keys|manager|arn|id)$")
_PEM_END = r"-----END[A-Z0-9 ]*(?:PRIVATE KEY(?: BLOCK)?|KEY FILE)-----"


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


class Library(NamedTuple):
    rules: tuple[Rule, ...]
    keyword_rules: tuple[Rule, ...]                             # tried where a keyword starts
    gated: tuple[tuple[tuple[str, ...], tuple[Rule, ...]], ...]  # the others, by what they need
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
def library() -> Library:
    """The library's rules (imported on first use: ~0.1 s) followed by ours."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import RegexBasedDetector

    rules: list[Rule] = []
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
            rules.append(Rule(regex, group, extend, kind, _MIN_LEN.get(name, 0), _AFTER.get(name, ""), needs))
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
                rules.append(Rule(regex, group, kind="keyword"))
            else:  # "value" == my_password
                rules.append(Rule(regex, group, kind="assignment", needs=("==", "!=")))
    starts = "|".join(keyword.DENYLIST)
    rules += _own_rules()
    by_needs: dict[tuple[str, ...], list[Rule]] = {}
    for rule in rules:
        if rule.kind != "keyword":
            by_needs.setdefault(rule.needs, []).append(rule)
    gated = tuple((needs, tuple(group)) for needs, group in by_needs.items())
    by_marker: dict[str, list[int]] = {}
    for at, (needs, _) in enumerate(gated):
        for marker in needs:
            by_marker.setdefault(marker, []).append(at)
    return Library(tuple(rules), tuple(r for r in rules if r.kind == "keyword"), gated,
                    tuple(by_marker), {marker: tuple(ats) for marker, ats in by_marker.items()},
                    tuple(at for at, (needs, _) in enumerate(gated) if not needs),
                    re.compile(starts), re.compile(starts, re.IGNORECASE),
                    heuristic.is_templated_secret, heuristic.is_prefixed_with_dollar_sign,
                    re.compile(_OWN_KEYWORD), re.compile(_OWN_KEYWORD, re.IGNORECASE), re.compile(_OWN_VALUE),
                    re.compile(_INDIRECT), re.compile(_REFERENCE_KEY),
                    re.compile(_PEM_END))


def rules() -> tuple[Rule, ...]:
    """Every rule, the library's first (imports it)."""
    return library().rules


def load_rules() -> None:
    """Import detect-secrets and compile every rule now (otherwise done on the first line
    that passes the pre-filter)."""
    library()
