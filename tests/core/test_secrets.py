"""Secret redaction (SPEC §8, §5 step 8): a corpus of real-format secrets and of look-alikes.

Every value below is FAKE: made for this file in each issuer's documented format (prefix,
alphabet, length), from a hash of a label, so nothing here is a working credential.

    python -m tests.core.test_secrets     # recall, false positives and per-line cost
"""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.core import secrets
from memtui.core.secrets import REDACTED, redact

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
B64 = B62 + "+/"
HEX = "0123456789abcdef"


def fake(label: str, n: int, alphabet: str = B62) -> str:
    """n characters of `alphabet`, derived from `label` (the same every run)."""
    out, block = [], label.encode()
    while len(out) < n:
        block = hashlib.sha256(block).digest()
        out += [alphabet[b % len(alphabet)] for b in block]
    return "".join(out[:n])


def b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


JWT = f"{b64url({'alg': 'HS256', 'typ': 'JWT'})}.{b64url({'sub': 'fake-user', 'iat': 1700000000})}." + fake("jwt", 43, B62 + "-_")
AWS_ID = "AKIA" + fake("aws-id", 16, B62[:36])
AWS_SECRET = fake("aws-secret", 38, B64) + "/Q"
PEM_BODY = fake("pem", 64, B64)

# ⟦...⟧ marks each secret: the input is the line without the brackets, the expected output the
# line with each bracketed part replaced by [REDACTED].
SECRETS = {
    # AWS (IAM "Managing access keys": AKIA + 16 upper-case/digits; secret 40 of base64)
    "aws-access-key-id-env": f"AWS_ACCESS_KEY_ID=⟦{AWS_ID}⟧",
    "aws-access-key-id-prose": f"the CI user key id is ⟦{AWS_ID}⟧ (rotated monthly)",
    "aws-sts-key-id": "temporary id ⟦ASIA" + fake("asia", 16, B62[:36]) + "⟧ from sts",
    "aws-secret-env": f"AWS_SECRET_ACCESS_KEY=⟦{AWS_SECRET}⟧",
    "aws-secret-yaml": f"aws_secret_access_key: ⟦{AWS_SECRET}⟧",
    "aws-secret-bare-pair": f"deploy keys: ⟦{AWS_ID}⟧ / ⟦{AWS_SECRET}⟧",
    # GitHub ("About authentication": ghp_/gho_/ghu_/ghs_/ghr_ + 36; github_pat_ + 22 + _ + 59)
    "github-classic-pat": "use ⟦ghp_" + fake("ghp", 36) + "⟧ for the release job",
    "github-oauth": "oauth token ⟦gho_" + fake("gho", 36) + "⟧ expired",
    "github-app-server": "GITHUB_TOKEN=⟦ghs_" + fake("ghs", 36) + "⟧",
    "github-uppercase": "pasted as ⟦GHP_" + fake("GHP", 36) + "⟧ by mistake",
    "github-fine-grained": "fine-grained ⟦github_pat_" + fake("fg1", 22) + "_" + fake("fg2", 59) + "⟧ read-only",
    # GitLab (personal access token: glpat- + 20)
    "gitlab-pat": "GitLab ⟦glpat-" + fake("glpat", 20, B62 + "-_") + "⟧ for the mirror",
    # Slack (xoxb- bot, xoxp- user tokens; incoming webhooks)
    "slack-bot": "SLACK_BOT_TOKEN=⟦xoxb-1234567890123-1234567890123-" + fake("xoxb", 24).lower() + "⟧",
    "slack-user": "user token ⟦xoxp-1234567890123-1234567890123-1234567890123-" + fake("xoxp", 32, HEX) + "⟧",
    "slack-webhook": "alerts go to ⟦https://hooks.slack.com/services/T" + fake("T", 8, B62[:36]) + "/B"
                     + fake("B", 10, B62[:36]) + "/" + fake("hook", 24) + "⟧ now",
    # Stripe ("API keys": sk_live_/sk_test_ secret, rk_live_ restricted, whsec_ webhook secret)
    "stripe-live-secret": "charge with ⟦sk_live_" + fake("skl", 99) + "⟧",
    "stripe-test-secret": "test mode ⟦sk_test_" + fake("skt", 24) + "⟧",
    "stripe-restricted": "read-only ⟦rk_live_" + fake("rkl", 24) + "⟧",
    "stripe-env": "STRIPE_SECRET_KEY=⟦sk_live_" + fake("ske", 24) + "⟧",
    "stripe-webhook-secret": "webhook signing ⟦whsec_" + fake("whsec", 32) + "⟧",
    # npm ("About access tokens": npm_ + 36; .npmrc _authToken)
    "npm-token": "publish with ⟦npm_" + fake("npm", 36) + "⟧",
    "npmrc-auth-token": "//registry.npmjs.org/:_authToken=⟦npm_" + fake("npmrc", 36) + "⟧",
    # Twilio (API key SID SK + 32 hex, Account SID AC + 32 hex, auth token 32 hex)
    "twilio-api-key-sid": "api key ⟦SK" + fake("SK", 32, HEX) + "⟧",
    "twilio-account-sid": "account ⟦AC" + fake("AC", 32, HEX) + "⟧",
    "twilio-auth-token": "TWILIO_AUTH_TOKEN=⟦" + fake("twilio", 32, HEX) + "⟧",
    # SendGrid (SG. + 22 + . + 43), Mailgun (key- + 32)
    "sendgrid": "mail via ⟦SG." + fake("sg1", 22, B62 + "-_") + "." + fake("sg2", 43, B62 + "-_") + "⟧",
    "mailgun": "mailgun ⟦key-" + fake("mailgun", 32, HEX) + "⟧",
    # OpenAI (sk-proj-...), Anthropic (sk-ant-api03-...), Google (AIza + 35)
    "openai-project": "OPENAI_API_KEY=⟦sk-proj-" + fake("oai", 48, B62 + "-_") + "⟧",
    "openai-in-prose": "the old key ⟦sk-proj-" + fake("oai2", 40) + "⟧ was revoked",
    "anthropic": "claude key ⟦sk-ant-api03-" + fake("ant", 93, B62 + "-_") + "AA⟧",
    "google-api-key": "maps key ⟦AIza" + fake("gapi", 35, B62 + "-_") + "⟧",
    # JWT (RFC 7519: base64url header.payload.signature) and HTTP Authorization (RFC 6750/7617)
    "jwt-bare": f"session cookie ⟦{JWT}⟧ expires tomorrow",
    "bearer-jwt-header": f"Authorization: Bearer ⟦{JWT}⟧",
    "bearer-opaque-header": "curl -H 'Authorization: Bearer ⟦" + fake("bearer", 40) + "⟧' https://api.example.com",
    "basic-auth-header": "Authorization: Basic ⟦" + base64.b64encode(b"deploy:" + fake("basic", 12).encode()).decode() + "⟧",
    # passwords in URLs (RFC 3986 userinfo): only the password
    "postgres-url": "DATABASE_URL=postgres://app:⟦" + fake("pg", 16) + "⟧@db.internal:5432/prod",
    "https-userinfo": "clone https://deploy:⟦" + fake("https", 12) + "⟧@git.example.com/team/repo.git",
    "redis-empty-user": "cache at redis://:⟦" + fake("redis", 20) + "⟧@cache:6379/0",
    # Azure Storage / Service Bus connection strings
    "azure-storage": "DefaultEndpointsProtocol=https;AccountName=fakeacct;AccountKey=⟦" + fake("az", 86, B64)
                     + "==⟧;EndpointSuffix=core.windows.net",
    "azure-service-bus": "Endpoint=sb://fake.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                         "SharedAccessKey=⟦" + fake("sb", 43, B64) + "=⟧",
    # PEM private keys (RFC 7468), joined onto one line, and one cut off
    "pem-rsa": f"server key ⟦-----BEGIN RSA PRIVATE KEY----- {PEM_BODY} -----END RSA PRIVATE KEY-----⟧ keep safe",
    "pem-openssh-cut": f"id_ed25519: ⟦-----BEGIN OPENSSH PRIVATE KEY----- {PEM_BODY}⟧",
    # assignments: .env, YAML, JSON, code
    "env-secret-key": "SECRET_KEY=⟦" + fake("django", 50, B62 + "!@#%^&*(-_=+)") + "⟧",
    "env-db-password": "DB_PASSWORD=⟦hunter2⟧",
    "env-token": "TOKEN=⟦" + fake("token", 32) + "⟧",
    "yaml-pass-short": "pass: ⟦x⟧",
    "yaml-password-quoted": 'password: "⟦correct horse battery staple⟧"',
    "json-api-key": '{"api_key": "⟦' + fake("json", 32, HEX) + '⟧", "region": "eu"}',
    "json-client-secret": '"client_secret": "⟦' + fake("cs", 40) + '⟧",',
    "python-password": 'password = "⟦s3cr3t-P@ss⟧"',
    "js-api-key": "const apiKey = '⟦" + fake("js", 32) + "⟧';",
    "go-assign": 'dbPassword := "⟦' + fake("go", 16) + '⟧"',
    "header-x-api-key": "x-api-key: ⟦" + fake("xapi", 32) + "⟧",
    "mixed-assignments": "DB_PASSWORD=⟦hunter2⟧, Api-Key: '⟦abc123⟧' token = ⟦xyz⟧",
    "two-in-one-line": "PASSWORD=⟦hunter2⟧ and GITHUB_TOKEN=⟦ghp_" + fake("ghp2", 36) + "⟧ both leaked",
    # others the library knows
    "telegram-bot": "bot ⟦123456789:AA" + fake("tg", 33, B62 + "-_") + "⟧",
    "pypi-token": "upload with ⟦pypi-AgEIcHlwaS5vcmc" + fake("pypi", 80, B62 + "-_") + "⟧",
}

LOOK_ALIKES = {
    "git-sha": "fixed in 9fceb02d0ae598e95dc970b74767f19372d61af8 on main",
    "short-sha": "revert 9fceb02 and a1b2c3d",
    "uuid": "conversation 123e4567-e89b-12d3-a456-426614174000 was archived",
    "sha256-digest": "image sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "md5": "checksum d41d8cd98f00b204e9800998ecf8427e matches",
    "version": "upgrade textual 8.2.8 -> 8.3.0, python 3.11.9, v2.0.0-rc.1",
    "file-path": "edit /usr/local/lib/python3.11/site-packages/detect_secrets/plugins/keyword.py",
    "windows-path": r"C:\Users\dev\AppData\Local\Programs\Muse\settings.json",
    "password-prose": "reset the password flow sends an email",
    "password-reset-prose": "password reset emails go through SES in eu-west-1",
    "secret-prose": "the secret sauce is aggressive caching",
    "token-prose": "keep the token budget under 2000 for the memory section",
    "token-limit": "TOKEN_LIMIT=4096",
    "max-tokens": "MAX_TOKENS=4096 and max_tokens: 1024",
    "password-min-length": "PASSWORD_MIN_LENGTH=12",
    "secret-ttl": "SESSION_SECRET_TTL=3600",
    "redact-setting-off": "memory.redactSecrets: false",
    "secret-name-ref": "secretName: db-credentials",
    "password-file": "password_file: /run/secrets/db",
    "masked-password": "password: ********",
    "templated-env": "DB_PASSWORD=${DB_PASSWORD}",
    "templated-jinja": "password: {{ vault_db_password }}",
    "dollar-reference": "api_key=$API_KEY",
    "indirect-reference": 'api_key = os.environ["API_KEY"]',
    "function-call": "password = get_password()",
    "already-redacted": "password=[REDACTED]",
    "url-no-credentials": "docs at https://github.com/Yelp/detect-secrets#quickstart",
    "url-user-only": "clone https://deploy@git.example.com/team/repo.git",
    "ssh-remote": "git@github.com:acme/memtui.git is the remote",
    "email-and-url": "mail dev@example.com or see https://example.com/team",
    "localhost-url": "http://localhost:3000/api?user=bob&page=2",
    "base64-words": "base64 of hello world is aGVsbG8gd29ybGQ= and " + base64.b64encode(b"the quick brown fox").decode(),
    "css-colours": "primary #1e90ff, danger #FF5733, text #333",
    "long-identifier": "test_prefilter_never_changes_the_result lives in ConfigurationManagerFactoryBean",
    "upper-identifier": "ACCOUNT_SERVICE_CONFIGURATION_TIMEOUT and APPLICATION_DEFAULTS",
    "chinese": "密钥轮换每月一次，数据库连接池配置过小",
    "chinese-password-word": "密码重置流程要发邮件，令牌预算两千",
    "prefix-mentions": "ghp_ tokens are classic PATs; sk_live_ keys never go in git; AKIA means long-term",
    "bearer-prose": "we use Bearer token auth for the API",
    "bearer-placeholder": "send `Authorization: Bearer <token>` on every call",
    "authorization-prose": "Authorization is handled by OPA policies",
    "ip-addresses": "the NAT is 203.0.113.7, internal 10.0.0.12",
    "timestamps": "started 2026-11-23T09:36:32Z, port 5432:5432",
    "ssh-public-key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPbZ3vJf8Zm1g2ZQq3mYt0kq7a4s4sJq5Lh7d1b2c3d4 dev@laptop",
    "jwt-prose": "a JWT header always starts with eyJ",
    "key-value-prose": "key=value pairs are separated by semicolons",
    "primary-key": "primary_key: id, sort_key: created_at",
    "tokenizer": "tokenizer: cl100k_base",
    "numbers": "p95 latency 120 ms, 3 retries, 4096 tokens",
    "password-mention-vault": "the password is in the vault; keys rotate monthly",
    "gh-and-token-words": "through high thoughts, ghosts and tokens",
    "plural-heading-passwords": "Passwords: never commit them, use the vault",
    "plural-heading-secrets": "Secrets: rotate quarterly",
    "setting-enabled": "PASSWORD_AUTH=enabled",
    "public-stripe-key": "publishable key pk_test_ is fine in the browser",
}

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
    assert len(SECRETS) >= 40 and len(LOOK_ALIKES) >= 40


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


@pytest.mark.parametrize("line", ["TOKEN=c " * 10_000, "password=a " * 10_000, '"a" == password ' * 5_000,
                                  "password=" + "z" * 100_000 + " tail"], ids=["token", "password", "compared", "long-value"])
def test_long_lines_full_of_keywords_cost_linear_time(line):
    # each assignment is matched within a window, not to the end of the line: ~0.2 s here,
    # where matching to the end of the line took 20 s for the first one
    import time

    started = time.perf_counter()
    out, n = redact(line)
    assert time.perf_counter() - started < 5
    assert n == line.count("=") - line.count("==") and "z" not in out


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


def test_ordinary_lines_do_not_import_the_library():
    import subprocess
    import sys

    code = ("import sys; from memtui.core.secrets import redact; "
            "assert redact('Use vitest, not jest; 数据库连接池配置过小') == ('Use vitest, not jest; 数据库连接池配置过小', 0); "
            "print('detect_secrets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_declared_dependency_matches_the_plugins_used():
    # the redaction relies on these library objects; a detect-secrets that drops them must fail here
    from detect_secrets.plugins import keyword

    rules = secrets._rules()
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
    passing = [x for x in lines if secrets._may_hold_secret(x)]
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
                             ("pre-filter only", secrets._may_hold_secret, lines)):
        med, mean = per_line(fn, sample)
        print(f"{name}: median {med:.2f} µs/line, mean {mean:.2f} µs/line ({len(sample)} lines)")


if __name__ == "__main__":  # pragma: no cover
    main()
