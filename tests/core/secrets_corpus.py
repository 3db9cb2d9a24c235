"""A corpus for secret redaction (SPEC §8): realistic secrets, each marked, and look-alikes
that must stay. Shared by tests/core/test_secrets.py (exact output, recall and false-positive
rate) and anyone measuring the redaction.

Every value is FAKE: made for this file in each issuer's documented format (prefix, alphabet,
length) from a hash of a label, or an obvious made-up password, so nothing here is a working
credential.

In SECRETS, ⟦...⟧ marks each secret: the input is the line without the brackets, the expected
output the line with each bracketed part replaced by [REDACTED].
"""

from __future__ import annotations

import base64
import hashlib
import json

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
    "yaml-word-then-comment": "password: ⟦correcthorse⟧ # the old one",
    "yaml-then-prose": "password: ⟦hunter2⟧ for staging",
    "backticked-value": "TOKEN: `⟦abc123⟧`",
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
    # --- formats the issue found leaking, and more of every family SPEC §8 names
    # JSON and YAML with spaces around the separator
    "json-spaced-password": '{"user": "deploy", "password" : "⟦Tr0ub4dor&3-fake⟧"}',
    "yaml-spaced-password": "password : ⟦hunter2-fake⟧",
    "env-spaced-password": "DB_PASSWORD = ⟦Fake-Pass-2024⟧",
    "json-compact-api-key": '{"apiKey":"⟦' + fake("jcompact", 32) + '⟧"}',
    "yaml-nested-secret-key": '  secret_key: "⟦' + fake("yamlsk", 40) + '⟧"',
    "env-export-api-key": "export API_KEY=⟦" + fake("export", 32) + "⟧",
    "env-quoted-secret-key": 'SECRET_KEY="⟦' + fake("dq", 50, B62 + "!@#%^&*") + '⟧"',
    "env-access-token": "ACCESS_TOKEN=⟦" + fake("access", 40) + "⟧",
    "env-refresh-token": "REFRESH_TOKEN=⟦" + fake("refresh", 40) + "⟧",
    "env-client-secret": "CLIENT_SECRET=⟦" + fake("clientsec", 32) + "⟧",
    "yaml-token": "TOKEN: ⟦" + fake("yamltoken", 24) + "⟧",
    "auth-token-assign": 'auth_token = "⟦' + fake("authtok", 32, HEX) + '⟧"',
    "python-typed": 'DATABASE_PASSWORD: str = "⟦Fake-Db-Pass-99⟧"',
    "java-constant": 'private static final String API_KEY = "⟦' + fake("java", 32) + '⟧";',
    "js-object-key": "const config = { apiKey: '⟦" + fake("jsobj", 39, B62 + "-_") + "⟧', region: 'eu' }",
    "php-password": "$password = '⟦Php-Fake-Pass-1⟧';",
    "docker-env-flag": "docker run -e POSTGRES_PASSWORD=⟦fakepg-2024⟧ postgres:16",
    "cli-password-flag": "mysqldump --password=⟦FakeMy5ql!⟧ shop > dump.sql",
    "aws-json-secret": '"SecretAccessKey": "⟦' + fake("awsjson", 40, B64) + '⟧",',
    "aws-credentials-file": "aws_secret_access_key = ⟦" + fake("awscred", 40, B64) + "⟧",
    # full-width separators (NFKC makes them = and :, but the text keeps them)
    "fullwidth-equals": "password＝⟦Fake-Pass-FW1⟧",
    "fullwidth-colon": "api_key：⟦" + fake("fwcolon", 32) + "⟧",
    "chinese-db-password": "数据库密码:⟦Pg2024-fake⟧",
    "chinese-password-fullwidth": "测试环境的密码：⟦Abc-12345-fake⟧",
    "chinese-password-is": "服务器密码是 ⟦Zz9-fake-pass⟧",
    "chinese-secret-key": "密钥=⟦" + fake("miyao", 32) + "⟧",
    "japanese-password": "パスワード: ⟦Jp-fake-Pass7⟧",
    # HTML
    "html-password-input": '<input type="password" name="pw" value="⟦Sup3r-Fake-Pw⟧">',
    "html-value-first": '<input value="⟦Fake-Value-Pw9⟧" type="password" id="login">',
    # prose
    "prose-password-is": "the staging password is ⟦hunter2-fake⟧ for now",
    "prose-password-was": "My old password was ⟦Qwerty-fake-123⟧, changed it",
    "prose-password-colon": "Wifi password: ⟦CoffeeShop-Fake-42⟧",
    "prose-password-quoted": "the admin password is `⟦swordfish⟧`",
    "prose-pwd-for": "pwd for the NAS is ⟦Nas-Fake-8812⟧",
    "prose-password-is-colon": "The password is: ⟦Hunter-22-fake⟧",
    "prose-pw-is": "wifi pw is ⟦Sunny42Day⟧",
    "prose-password-then-quoted": 'mongo password "⟦r00t-fake⟧"',
    "xml-password": "<password>⟦hunter2-fake⟧</password>",
    "xml-api-key": "<apiKey>⟦" + fake("xmlkey", 32) + "⟧</apiKey>",
    "mysql-p": "mysql -u root -p⟦S3cret-fake⟧ shop",
    "env-dbpass-glued": "DBPASS=⟦abc123-fake⟧",
    # curl and URLs
    "curl-u": "curl -u ⟦admin:Fake-Curl-Pass⟧ https://ci.example.com/api",
    "curl-user-long": "curl --user ⟦deploy:fake-secret-77⟧ -X POST https://example.com/hook",
    "mysql-url": "mysql://root:⟦Fake-Root-Pw1⟧@127.0.0.1:3306/app",
    "mongodb-srv": "mongodb+srv://svc:⟦" + fake("mongo", 20) + "⟧@cluster0.example.mongodb.net/app",
    "amqp-url": "BROKER_URL=amqp://guest:⟦fake-rabbit-9⟧@mq:5672//",
    # issuer prefixes the library lacks
    "huggingface": "HF_TOKEN=⟦hf_" + fake("hf", 34, B62[10:]) + "⟧",
    "huggingface-prose": "pull the model with ⟦hf_" + fake("hf2", 34) + "⟧ (read scope)",
    "google-oauth-secret": '"client_secret": "⟦GOCSPX-' + fake("gocspx", 28, B62 + "-_") + '⟧"',
    "google-oauth-prose": "oauth client secret ⟦GOCSPX-" + fake("gocspx2", 28) + "⟧ from the console",
    "digitalocean-pat": "doctl auth init -t ⟦dop_v1_" + fake("dop", 64, HEX) + "⟧",
    "digitalocean-oauth": "DO token ⟦doo_v1_" + fake("doo", 64, HEX) + "⟧",
    "shopify-admin": "X-Shopify-Access-Token: ⟦shpat_" + fake("shpat", 32, HEX) + "⟧",
    "shopify-shared-secret": "app secret ⟦shpss_" + fake("shpss", 32, HEX) + "⟧",
    "openai-legacy": "old key ⟦sk-" + fake("oail1", 20) + "T3BlbkFJ" + fake("oail2", 20) + "⟧",
    "openai-svcacct": "service account ⟦sk-svcacct-" + fake("svc", 60, B62 + "-_") + "⟧",
    "anthropic-admin": "admin key ⟦sk-ant-admin01-" + fake("antadm", 80, B62 + "-_") + "AA⟧",
    # Twilio auth token as bare hex, said in context
    "twilio-token-prose": "Twilio auth token ⟦" + fake("twprose", 32, HEX) + "⟧ (test account)",
    "twilio-sid-and-token": "twilio: ⟦AC" + fake("twsid", 32, HEX) + "⟧ / ⟦" + fake("twtok", 32, HEX) + "⟧",
    # more GitHub, GitLab, Slack, Stripe, npm
    "github-user-to-server": "ghu token ⟦ghu_" + fake("ghu", 36) + "⟧",
    "github-refresh": "refresh ⟦ghr_" + fake("ghr", 36) + "⟧",
    "gitlab-runner": "runner token ⟦glrt-" + fake("glrt", 20, B62 + "-_") + "⟧",
    "gitlab-deploy": "deploy token ⟦gldt-" + fake("gldt", 20, B62 + "-_") + "⟧",
    "slack-app-token": "SLACK_APP_TOKEN=⟦xapp-1-A" + fake("xapp", 10, B62[:36]) + "-1234567890123-" + fake("xapp2", 64, HEX) + "⟧",
    "slack-refresh": "refresh ⟦xoxe-1-" + fake("xoxe", 40) + "⟧",
    "stripe-json": '{"stripe": {"secret": "⟦sk_live_' + fake("skjson", 32) + '⟧"}}',
    "npm-env": "NPM_TOKEN=⟦npm_" + fake("npmenv", 36) + "⟧",
    # JWT and bearer tokens in other places
    "jwt-cookie": f"Cookie: session=⟦{JWT}⟧",
    "bearer-prose": "call it with Bearer ⟦" + fake("bprose", 32) + "⟧ until Friday",
    # private keys of other kinds
    "pem-ec": f"⟦-----BEGIN EC PRIVATE KEY----- {PEM_BODY} -----END EC PRIVATE KEY-----⟧",
    "pem-pkcs8": f"key.pem: ⟦-----BEGIN PRIVATE KEY----- {PEM_BODY} -----END PRIVATE KEY-----⟧",
    "pem-encrypted": f"⟦-----BEGIN ENCRYPTED PRIVATE KEY----- {PEM_BODY} -----END ENCRYPTED PRIVATE KEY-----⟧ (pass in vault)",
    "pgp-private": f"⟦-----BEGIN PGP PRIVATE KEY BLOCK----- {PEM_BODY} -----END PGP PRIVATE KEY BLOCK-----⟧",
    # Azure, more forms
    "azure-cosmos": "AccountEndpoint=https://fake.documents.azure.com:443/;AccountKey=⟦" + fake("cosmos", 86, B64) + "==⟧;",
    "azure-event-hubs": "Endpoint=sb://fake.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=⟦"
                        + fake("eh", 43, B64) + "=⟧;EntityPath=events",
    # --- the misses of issue 32 (hidden corpora), and their neighbours
    # PyPI API tokens: pypi- + a macaroon, base64 of its header ("AgEIcHlwaS5vcmc": pypi.org;
    # "AgENdGVzdC5weXBpLm9yZw": test.pypi.org); a project-scoped one can be short
    "pypi-short": "upload with ⟦pypi-AgEIcHlwaS5vcmc" + fake("pypi-short", 24, B62 + "-_") + "⟧ from CI",
    "pypi-test-index": "TWINE_PASSWORD=⟦pypi-AgENdGVzdC5weXBpLm9yZw" + fake("testpypi", 40, B62 + "-_") + "⟧",
    # HashiCorp Vault tokens (1.10+): hvs. service, hvb. batch, hvr. recovery + base62
    "vault-service-token": "vault login ⟦hvs." + fake("hvs", 24) + "⟧ then read the db role",
    "vault-batch-token": "the job's batch token ⟦hvb." + fake("hvb", 90, B62 + "_-") + "⟧",
    "vault-env": "export VAULT_TOKEN=⟦hvs." + fake("hvs-env", 91, B62 + "_-") + "⟧",
    # a token in an HTML hidden input, either attribute order
    "html-hidden-token": '<input type="hidden" name="token" value="⟦' + fake("hidden", 32) + '⟧">',
    "html-hidden-api-key": "<input value='⟦" + fake("hidden2", 40, HEX) + "⟧' name=\"api_key\" type=\"hidden\">",
    # a secret that is a call's last argument keeps the call's closing parenthesis
    "assignment-in-call": "connect(host, password=⟦Zebra-Falcon-42⟧)",
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
    # --- look-alikes the issue found redacted, and more
    "slack-channel-name": "post it in #xoxo-team-announcements-channel on Monday",
    "css-class-sk": "the spinner is .sk-fading-circle-animation-wrapper in spinkit",
    "token-comparison": "if token == expected_token: return True",
    "settings-reference": "api_key=settings.API_KEY",
    "secretsmanager-arn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-password-AbCdEf",
    "prose-password-policy": "the password must be at least 12 characters long",
    "prose-password-required": "Password is required for every admin account",
    "prose-password-stored": "the password is stored in 1Password under Stripe prod",
    "prose-token-expires": "the token is refreshed every hour by the worker",
    "header-get": "token = request.headers.get('X-Token')",
    "getenv": 'password=os.getenv("DB_PASSWORD")',
    "actions-secret": "api_key: ${{ secrets.API_KEY }}",
    "none-value": "password = None",
    "null-yaml": "password: null",
    "angle-placeholder": "password=<your-password>",
    "await-call": "const token = await getToken();",
    "attribute-value": "let password = req.body.password;",
    "self-attribute": "self.api_key = api_key",
    "strict-compare": "if (password === confirmPassword) submit()",
    "hf-hub-call": "hf_hub_download(repo_id='bert-base-uncased', filename='config.json')",
    "prefix-prose-new": "Shopify admin tokens start with shpat_, DigitalOcean ones with dop_v1_, Google's with GOCSPX-",
    "curl-variables": "curl -u $USER:$TOKEN https://ci.example.com/api",
    "curl-user-only": "curl -u admin https://ci.example.com/api (it asks for the password)",
    "html-empty-password": '<input type="password" name="pw" value="">',
    "html-placeholder": '<input type="password" placeholder="Password" autocomplete="current-password">',
    "chinese-password-prose": "数据库密码需要每月轮换一次",
    "chinese-ask-admin": "密码：请向管理员索取",
    "token-type": "token_type: bearer, grant_type=client_credentials",
    "token-url": "TOKEN_URL=https://oauth2.googleapis.com/token",
    "twilio-commit": "bumped twilio to 9.0 in commit 9fceb02d0ae598e95dc970b74767f193",
    "sklearn-pipeline": "see sk-learn-pipeline-for-text-classification in the docs",
    "npmrc-template": "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    "bearer-variable": 'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    "password-hash-call": "password_hash = bcrypt.hashpw(pw, salt)",
    "empty-json-password": '{"password": "", "user": "guest"}',
    "secret-true": "secret: true",
    "word-ending-pass": "compass: north, bypass: cache, COMPASS: north",
    "type-annotation": "def check(password: str) -> bool: and token: str",
    "ts-type": "secretKey: string;",
    "prose-pw-weak": "the pw is weak",
    "mysql-prompt": "mysql -u root -p -h db shop",
    "empty-xml-token": "<token></token>",
    "prose-case-sensitive": "Remember the password is case-sensitive",
    "prose-measures": "the password is 128-bit AES-encrypted at rest; the password is 16+ characters",
    "colon-prose-token": "token: the JWT from /login, rotate weekly",
    "colon-prose-auth-token": "Auth token: stored in Vault",
    "colon-prose-password": "Password: never commit it",
    "colon-prose-secret": "secret: see 1Password, it's in the vault",
    "colon-prose-same-as": "password: same as staging",
    "env-name-in-backticks": "token: `GITHUB_TOKEN` from the env",
    "quoted-word-after-password": "click the password 'reset' link, then the \"show\" toggle",
    # --- real code the default export broke (issue 32): punctuation of code is never eaten
    "csharp-cancellation-token": "public async Task RunAsync(CancellationToken cancellationToken = default)",
    "csharp-token-default-null": "void Send(string apiKey = null, CancellationToken token = default);",
    "shell-default-expansion": "${DB_PASS:-password}",
    "compose-default-expansion": "POSTGRES_PASSWORD: ${DB_PASS:-password} in docker-compose.yml",
    "shell-default-assign": 'PGPASSWORD="${PGPASSWORD:=postgres}" psql -h db',
    "mysql-in-backticks": "(connect with `mysql -u{user} -p`)",
    "mysql-prompt-templated": 'cmd = f"mysql -u{user} -p{password} {db}"',
    "kwarg-from-variable": "client = Client(token=token, timeout=30)",
    "html-hidden-csrf-template": '<input type="hidden" name="csrf_token" value="{{ csrf_token() }}">',
    "html-hidden-non-secret": '<input type="hidden" name="page" value="2">',
    "vault-prefix-prose": "Vault service tokens start with hvs. and batch ones with hvb.",
    "pypi-prefix-prose": "PyPI tokens look like pypi-AgEI… and go in TWINE_PASSWORD",
}
