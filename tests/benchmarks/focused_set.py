"""A realistic labelled store for SPEC §15 (focused injection), seeded and written out in full.

One developer (Aiko) working on `harbor`, a shipping-rates service (Python API, Postgres, a
React dashboard), after a year of use:
- 18 Markdown files of user and project memories (sections, tags, importance, dates; one
  file `alwaysApply: true`, one Claude-Code-style single-memory file), 156 entries: written
  ones, and a runbook and command habits generated from templates, so the layers hold more
  than their budgets;
- Muse's conversation rows: 40 conversations of this workspace and 6 of another project,
  1,600+ rows, most of them generated from the project's own vocabulary so they share
  surface words ("pool", "server", "test", "deploy", "cache") with the messages;
- 88 messages labelled with the memories they need: exact-term ones, paraphrases that share
  no content word with what they need (checked by `check()`), and messages about nothing
  stored (need nothing). Each message has a split, `dev` or `held` (pairs alternate): tune on
  `dev`, report both.

Keys (`u-…`, `p-…`, `c-…`) are labels of this benchmark only, found back by the entry's text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

SEED = 33

# file -> (frontmatter lines, [(section, key, text)]); a section "" keeps the previous one
USER_FILES: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "preferences.md": ("type: preference\nimportance: high\ntags: [style]\nupdatedAt: 2026-03-02", [
        ("Communication", "u-concise", "Keep answers short; skip the preamble and get to the code"),
        ("", "u-risks", "When proposing a refactor, list the risks before the steps"),
        ("", "u-english", "Answer in English even when I write a word in Japanese"),
        ("", "u-no-apology", "Do not apologise; say what went wrong and the fix"),
        ("Code style", "u-names", "Descriptive variable names over abbreviations"),
        ("", "u-comments", "Comments explain why, never what the next line does"),
        ("", "u-early-return", "Prefer early returns to nested if/else ladders"),
        ("", "u-small-functions", "Functions longer than forty lines should be split"),
    ]),
    "testing.md": ("type: preference\ntags: [testing]\nupdatedAt: 2026-01-20", [
        ("Testing", "u-pytest", "Use pytest with plain assert statements, never unittest classes"),
        ("", "u-fixtures", "Build test data with factory functions rather than shared JSON fixtures"),
        ("", "u-hypothesis", "Property-based tests with Hypothesis for every parser"),
        ("", "u-no-mocks-db", "Integration tests hit a real Postgres in Docker, not a mocked driver"),
        ("", "u-vitest", "Frontend unit tests use Vitest and Testing Library"),
        ("", "u-coverage", "Coverage below 85% on changed files blocks the merge"),
    ]),
    "git.md": ("type: preference\nimportance: normal\ntags: [git]\nupdatedAt: 2025-11-14", [
        ("Git", "u-conventional", "Commit messages follow Conventional Commits: feat:, fix:, chore:"),
        ("", "u-rebase", "Rebase feature branches on main; never merge main into a feature branch"),
        ("", "u-small-pr", "Keep pull requests under 400 changed lines"),
        ("", "u-signed", "Sign every commit with the SSH key registered on GitHub"),
        ("", "u-no-force", "Never force-push to a branch someone else has checked out"),
    ]),
    "editor.md": ("name: Editor\ndescription: my editor setup\ntype: preference\nupdatedAt: 2025-09-30", [
        ("", "u-editor", "I use Neovim with LazyVim; give keybindings for it, not for VS Code"),
    ]),
    "languages.md": ("type: knowledge\nimportance: low\ntags: [languages]\nupdatedAt: 2025-06-11", [
        ("Python", "u-py-version", "Scripts target Python 3.12 with type hints checked by mypy --strict"),
        ("", "u-uv", "Manage Python environments with uv, not pip and virtualenv by hand"),
        ("", "u-ruff", "Format and lint Python with ruff; no black, no isort"),
        ("TypeScript", "u-ts-strict", "TypeScript strict mode everywhere; an any needs a comment"),
        ("", "u-pnpm", "Use pnpm for JavaScript packages"),
        ("Shell", "u-posix", "Shell snippets should be POSIX sh, not bash-only"),
        ("", "u-shellcheck", "Run shellcheck on every script before committing it"),
        ("Rust", "u-clippy", "Rust code must pass cargo clippy with warnings denied"),
        ("", "u-rust-errors", "Use thiserror for library errors and anyhow only in binaries"),
    ]),
    "personal.md": ("type: knowledge\nupdatedAt: 2026-02-27", [
        ("About me", "u-tz", "I live in Osaka; my working hours are 09:00-18:00 JST"),
        ("", "u-laptop", "My machine is a MacBook Pro M3 with 36 GB of RAM"),
        ("", "u-keyboard", "I type on a split keyboard with a Colemak layout"),
        ("", "u-friday", "I take Friday afternoons off for my daughter's swimming lessons"),
        ("", "u-coffee", "Aiko's coffee order is a flat white with oat milk"),
    ]),
}

PROJECT_FILES: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "conventions.md": ("type: pattern\nalwaysApply: true\nupdatedAt: 2026-03-10", [
        ("Always", "p-repo-layout", "harbor is a monorepo: api/ is the Python service, web/ the React dashboard"),
        ("", "p-make", "Every task has a make target; run make help to list them"),
    ]),
    "architecture.md": ("type: knowledge\nimportance: high\ntags: [architecture]\nupdatedAt: 2026-02-14", [
        ("Services", "p-fastapi", "The API is FastAPI on Python 3.12, served by uvicorn behind nginx"),
        ("", "p-workers", "Background work runs on Celery workers with RabbitMQ as the broker"),
        ("", "p-rates-engine", "Carrier rates are computed by the rates-engine package, which is pure and has no I/O"),
        ("", "p-carriers", "Each carrier integration lives in api/carriers/<name>.py and implements CarrierClient"),
        ("", "p-cache-rates", "Quoted rates are cached in Redis for 15 minutes, keyed by origin, destination and weight"),
        ("", "p-geocoding", "Addresses are geocoded through Mapbox; results are stored to avoid paying twice"),
        ("Decisions", "p-adr", "Architecture decisions are written as ADRs in docs/adr, numbered in order"),
        ("", "p-no-orm", "Queries are written in SQL with asyncpg; the project chose not to use an ORM"),
        ("", "p-monolith", "We stay a modular monolith until a module needs its own scaling"),
        ("", "p-events", "Domain events are written to an outbox table and relayed to RabbitMQ"),
    ]),
    "database.md": ("type: knowledge\ntags: [database, postgres]\nupdatedAt: 2026-01-08", [
        ("Postgres", "p-postgres", "The database is PostgreSQL 16 on RDS, reached through pgbouncer"),
        ("", "p-pgbouncer", "pgbouncer runs in transaction mode, so session-level prepared statements are off"),
        ("", "p-migrations", "Migrations are Alembic revisions in api/migrations, one change per revision"),
        ("", "p-kenji", "Kenji owns the database and must approve every migration"),
        ("", "p-money", "Prices are stored as integer minor units with an ISO 4217 currency code, never floats"),
        ("", "p-timestamps", "Every table has created_at and updated_at as timestamptz in UTC"),
        ("", "p-soft-delete", "Shipments are never deleted; they get a cancelled_at timestamp"),
        ("Performance", "p-quotes-index", "The quotes table needs its (account_id, created_at) index for the history page"),
        ("", "p-vacuum", "The shipments table is vacuumed nightly; autovacuum alone fell behind"),
        ("", "p-replica", "Reports read from the read replica, never from the primary"),
    ]),
    "deploy.md": ("type: knowledge\ntags: [deploy, ci]\nupdatedAt: 2025-12-02", [
        ("Releases", "p-release-day", "Releases go out Tuesdays and Thursdays; nothing ships on Fridays"),
        ("", "p-canary", "A release first takes 5% of traffic for 30 minutes before full rollout"),
        ("", "p-rollback", "Roll back with make rollback, which redeploys the previous image tag"),
        ("", "p-ci", "CI runs on GitHub Actions; the required checks are lint, types and tests"),
        ("", "p-images", "Container images are built once and promoted from staging to production by tag"),
        ("Infrastructure", "p-k8s", "Production runs on EKS; manifests are Helm charts in deploy/charts"),
        ("", "p-terraform", "Cloud resources are managed by Terraform in infra/, applied only from CI"),
        ("", "p-staging", "Staging is reset from anonymised production data every Sunday"),
        ("", "p-feature-flags", "Feature flags live in Unleash; remove a flag two sprints after full rollout"),
    ]),
    "api.md": ("type: knowledge\ntags: [api]\nupdatedAt: 2026-02-01", [
        ("Public API", "p-versioning", "Public routes are versioned under /v3; /v2 is frozen and only gets security fixes"),
        ("", "p-errors", "Error responses use the RFC 9457 problem+json format"),
        ("", "p-pagination", "Lists paginate with opaque cursors, never page numbers"),
        ("", "p-rate-limit", "Clients are throttled at 100 requests per minute per API key"),
        ("", "p-idempotency", "POST endpoints accept an Idempotency-Key header and store the reply for 24 hours"),
        ("", "p-openapi", "The OpenAPI document is generated from the code and published at /docs"),
        ("Webhooks", "p-webhooks", "Outgoing webhooks are signed with HMAC-SHA256 and retried with exponential backoff"),
        ("", "p-timeouts", "Calls to carriers use a 4 second timeout and a circuit breaker per carrier"),
    ]),
    "frontend.md": ("type: knowledge\ntags: [frontend, react]\nupdatedAt: 2026-01-25", [
        ("Dashboard", "p-react", "The dashboard is React 18 with Vite; server state lives in TanStack Query"),
        ("", "p-styling", "Styling uses Tailwind; no CSS-in-JS"),
        ("", "p-i18n", "User-facing strings go through i18next; English and Japanese are required"),
        ("", "p-a11y", "Every form control needs a visible label; the dashboard targets WCAG 2.2 AA"),
        ("", "p-charts", "Charts are drawn with Recharts; do not add another charting library"),
        ("", "p-perf-budget", "Dashboard pages must load in under two seconds on a mid-range phone"),
        ("", "p-storybook", "New components get a Storybook story before review"),
    ]),
    "team.md": ("type: knowledge\nupdatedAt: 2025-10-19", [
        ("People", "p-priya", "Priya leads the product and signs off on anything customers see"),
        ("", "p-tomas", "Tomás maintains the carrier integrations and knows the DHL quirks"),
        ("", "p-oncall", "The on-call rotation changes on Mondays; pages go to #harbor-oncall"),
        ("", "p-standup", "Standup is at 10:00 JST on weekdays, written in the #harbor channel"),
        ("", "p-review", "Every pull request needs one approving review from outside its author's pod"),
        ("", "p-holidays", "The team observes Japanese public holidays; nobody is on call during Obon"),
    ]),
    "security.md": ("type: knowledge\nimportance: high\ntags: [security]\nupdatedAt: 2026-02-20", [
        ("Secrets", "p-vault", "Secrets come from AWS Secrets Manager at start-up; nothing secret goes in .env files"),
        ("", "p-pii", "Never log full addresses or phone numbers; mask them with the redact() helper"),
        ("", "p-auth", "Dashboard users sign in with OIDC through Auth0; API clients use API keys"),
        ("", "p-service-auth", "Services call each other with short-lived JWTs signed by the auth service"),
        ("", "p-dependabot", "Dependabot security updates are merged within two working days"),
        ("", "p-pentest", "An external penetration test runs every March"),
    ]),
    "incidents.md": ("type: decision\nimportance: low\ntags: [incidents]\nupdatedAt: 2025-04-03", [
        ("Postmortems", "p-inc-dns", "The March outage was a DNS TTL of one day on the carriers' endpoint; it is now 60 seconds"),
        ("", "p-inc-clock", "Label printing broke when a worker's clock drifted; hosts now run chrony"),
        ("", "p-inc-disk", "The queue filled the disk in June; RabbitMQ now has a 20 GB disk alarm"),
        ("", "p-inc-cert", "An expired TLS certificate took the webhook endpoint down; cert-manager renews it now"),
    ]),
    "glossary.md": ("type: knowledge\nimportance: low\ntags: [glossary]\nupdatedAt: 2025-08-08", [
        ("Terms", "p-lane", "A lane is an origin-destination pair with a carrier and a service level"),
        ("", "p-dim-weight", "Dimensional weight is length x width x height divided by the carrier's divisor"),
        ("", "p-accessorial", "Accessorials are surcharges such as liftgate or residential delivery"),
        ("", "p-manifest", "A manifest is the end-of-day list of parcels handed to a carrier"),
        ("", "p-zone", "A zone is the carrier's distance band between two postcodes"),
        ("", "p-pod", "A POD is the proof of delivery: a signature or a photo from the driver"),
    ]),
}

# Conversation memories that messages need, or that are close to one that is: conversation -> rows
CONVERSATION_FACTS: dict[str, list[tuple[str, str]]] = {
    "c01": [("c-pool-size", "Raised the pgbouncer default_pool_size from 20 to 60 after timeouts during the Monday peak"),
            ("c-pool-idle", "The asyncpg connection pool now closes idle connections after 300 seconds")],
    "c02": [("c-dhl-dates", "DHL returns delivery dates in the warehouse's local time zone, not UTC; convert before comparing")],
    "c03": [("c-flaky-label", "The flaky label-printing test was fixed by freezing time with freezegun")],
    "c04": [("c-docker-ram", "Docker Desktop needed 8 GB of memory for the full local stack with RabbitMQ")],
    "c05": [("c-refund", "Partial refunds of a shipment create a credit note instead of editing the original invoice")],
    "c06": [("c-vite-proxy", "The Vite dev server proxies /api to localhost:8000")],
    "c07": [("c-rename", "Renamed the customer table to accounts in migration 0042")],
    "c08": [("c-cookie", "Dashboard sessions dropped because the cookie domain lacked a leading dot")],
    "c09": [("c-fedex-sandbox", "The FedEx sandbox rejects weights above 68 kg even though production accepts them")],
    "c10": [("c-rounding", "Fixed a one-yen difference by rounding the quote total instead of each surcharge")],
    "c11": [("c-sentry", "Sentry samples 10% of transactions and 100% of errors")],
    "c12": [("c-ups-oauth", "UPS moved to OAuth client credentials; the token lasts four hours and is cached in Redis")],
    "c13": [("c-celery-ack", "Celery tasks use acks_late so a worker crash re-queues the task instead of losing it")],
    "c14": [("c-uv-lock", "uv.lock must be committed; CI installs with uv sync --frozen")],
    "c15": [("c-mapbox-quota", "The Mapbox geocoding quota is 100,000 requests a month; we hit 80% in November")],
    "c16": [("c-i18n-plural", "Japanese strings do not need plural forms; i18next's _one/_other keys can stay identical")],
    "c17": [("c-helm-values", "Per-environment Helm values live in deploy/charts/harbor/values-<env>.yaml")],
    "c18": [("c-alembic-branch", "Two Alembic heads after a merge are fixed with alembic merge heads, never by editing revisions")],
    "c19": [("c-csv-export", "The shipments CSV export streams rows so large accounts do not time out")],
    "c20": [("c-lighthouse", "The quotes page scored 62 on Lighthouse mobile until the carrier logos were lazy-loaded")],
}

OTHER_PROJECT_FACTS = [  # another workspace's conversations: never candidates here
    "The kiln controller firmware is flashed over USB with the dfu-util tool",
    "Pottery glaze temperatures are logged every 30 seconds to an SD card",
    "The pgbouncer pool in the ceramics shop's inventory app is set to 10",
    "Deploys of the ceramics shop go to a single Hetzner box with Docker Compose",
]

# the vocabulary the generated conversation rows are made of: the project's own surface words
_ACTIONS = ["Fixed", "Investigated", "Refactored", "Renamed", "Documented", "Reverted", "Reviewed", "Tested",
            "Removed", "Added logging to", "Sped up", "Simplified", "Split", "Cleaned up", "Profiled"]
_THINGS = ["the quote form", "the carrier client", "the rates cache", "the label printer job", "the address parser",
           "the shipment list", "the tracking poller", "the invoice exporter", "the webhook sender", "the pool of workers",
           "the search box", "the settings page", "the pickup scheduler", "the manifest builder", "the surcharge table",
           "the account switcher", "the retry helper", "the login page", "the health check", "the admin panel",
           "the test server", "the deploy script", "the cache warmer", "the metrics exporter", "the date picker"]
_DETAILS = ["after a review comment", "because a customer reported it", "to unblock the release", "during the sprint",
            "for the staging environment", "before the demo", "while pairing with Tomás", "as part of the cleanup",
            "after the test failed twice", "so the logs are readable", "to match the design", "for the new carrier",
            "behind a feature flag", "without changing the API", "in a follow-up pull request", "on the server side",
            "for accounts with many shipments", "in the pool of background jobs", "with a unit test", "for the mobile layout"]
_NOTES = [
    "Discussed whether {thing} should move to its own module; decided to wait",
    "{thing} now logs its duration at debug level",
    "A typo in {thing} showed the wrong label on the dashboard",
    "{thing} had an off-by-one error on the last page",
    "The README now explains how {thing} is configured",
    "Asked Priya whether {thing} needs a product review; she said no",
    "{thing} is covered by a test that used to be skipped",
    "Moved the constants of {thing} into settings",
]
_TOPICS = ["quotes", "labels", "tracking", "carriers", "dashboard", "billing", "pickups", "webhooks", "search", "admin",
           "exports", "onboarding", "accounts", "manifests", "surcharges", "metrics", "settings", "alerts", "login", "deploys"]


# Generated memories that fill the layers past their budgets (a year of notes): runbook steps in
# the project, command habits of the user. They share surface words with the messages.
_SERVICES = ["api", "worker", "scheduler", "tracker", "renderer", "gateway", "importer", "notifier", "exporter",
             "billing job", "label service", "rates service"]
_RUNBOOK = [
    "To restart the {s}, run make restart-{k} and watch its health check for two minutes",
    "The {s} logs go to Loki under the app={k} label",
    "When the {s} is slow, check its queue depth on the Grafana board named {k}",
    "The {s} reads its settings from the {k}.toml file in deploy/config",
    "Scale the {s} with kubectl scale deployment/{k}; never above eight replicas",
    "The {s} exposes Prometheus metrics on port 9{n:03d}",
]
_HABITS = [
    "For {s} changes, open the pull request as a draft first",
    "When touching the {s}, update its section of the runbook in the same pull request",
    "Ask before renaming anything public in the {s}",
]


def _generated(rng: random.Random) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    runbook, habits = [], []
    for i, service in enumerate(_SERVICES):
        key = service.replace(" ", "-")
        for j, template in enumerate(rng.sample(_RUNBOOK, 4)):
            runbook.append((service.capitalize() if j == 0 else "", f"p-run-{key}-{j}",
                            template.format(s=service, k=key, n=i)))
        if i % 2 == 0:
            habits.append(("", f"u-habit-{key}", rng.choice(_HABITS).format(s=service)))
    return runbook, habits


@dataclass
class Message:
    text: str
    needed: frozenset[str]
    kind: str  # exact | paraphrase | nothing
    split: str = "dev"


@dataclass
class ConversationRow:
    key: str  # the label, or "" for a row no message needs
    conversation: str
    text: str
    tags: tuple[str, ...] = ()


@dataclass
class FocusedSet:
    user_files: dict[str, str] = field(default_factory=dict)  # relative path -> file text
    project_files: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # key -> entry text
    context: dict[str, str] = field(default_factory=dict)  # key -> its section, file name, description, tags
    conversations: dict[str, tuple[str, bool]] = field(default_factory=dict)  # id -> (title, this workspace)
    rows: list[ConversationRow] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)


def _file_text(front: str, entries: list[tuple[str, str, str]]) -> str:
    out = [f"---\n{front}\n---\n"]
    if "name:" in front:
        return out[0] + "\n" + entries[0][2] + "\n"
    for section, _, text in entries:
        if section:
            out.append(f"\n## {section}\n\n")
        out.append(f"- {text}\n")
    return "".join(out)


E, P, N = "exact", "paraphrase", "nothing"
# (message, needed keys, kind). Paraphrases share no content word with what they need (check()).
MESSAGES: list[tuple[str, tuple[str, ...], str]] = [
    ("what pool size does pgbouncer use now?", ("c-pool-size", "p-pgbouncer"), E),
    ("our database keeps refusing new clients at the start of the week", ("c-pool-size",), P),
    ("DHL delivery dates look wrong by several hours", ("c-dhl-dates",), E),
    ("a shipping partner hands us arrival days in its own clock", ("c-dhl-dates",), P),
    ("the label-printing test is flaky again", ("c-flaky-label",), E),
    ("a check that prints stickers passes or fails at random", ("c-flaky-label", "p-inc-clock"), P),
    ("how much memory does Docker Desktop need for the stack?", ("c-docker-ram",), E),
    ("my laptop containers run out of RAM when everything starts", ("c-docker-ram",), P),
    ("how do we handle a partial refund?", ("c-refund",), E),
    ("customer wants some of their money back for one parcel", ("c-refund",), P),
    ("which port does the Vite proxy send /api to?", ("c-vite-proxy",), E),
    ("browser-side calls to the backend fail on my machine", ("c-vite-proxy",), P),
    ("what was the customer table renamed to?", ("c-rename",), E),
    ("where did the clients relation go in the schema", ("c-rename",), P),
    ("dashboard cookie domain problem", ("c-cookie",), E),
    ("people get logged out of the web app unexpectedly", ("c-cookie",), P),
    ("FedEx sandbox rejects a heavy parcel", ("c-fedex-sandbox",), E),
    ("a test carrier environment refuses big packages", ("c-fedex-sandbox",), P),
    ("quote total off by one yen after surcharges", ("c-rounding", "p-money"), E),
    ("the figure we show differs by a tiny amount from the sum", ("c-rounding", "p-money"), P),
    ("what is the Sentry sampling rate?", ("c-sentry",), E),
    ("how many traces does our crash tracker keep", ("c-sentry",), P),
    ("UPS OAuth token keeps expiring", ("c-ups-oauth",), E),
    ("the brown trucks' auth secret goes stale", ("c-ups-oauth",), P),
    ("a Celery worker crash lost a task", ("c-celery-ack", "p-workers"), E),
    ("if an async runner dies mid-job do we lose that job", ("c-celery-ack", "p-workers"), P),
    ("CI fails installing with uv sync --frozen", ("c-uv-lock", "u-uv"), E),
    ("pipeline can't reproduce my installed libraries", ("c-uv-lock", "u-uv"), P),
    ("how close are we to the Mapbox quota?", ("c-mapbox-quota", "p-geocoding"), E),
    ("will we run over our monthly map lookup allowance", ("c-mapbox-quota", "p-geocoding"), P),
    ("do Japanese strings need plural forms in i18next?", ("c-i18n-plural", "p-i18n"), E),
    ("translating counts like '1 item' vs '2 items' into our second locale", ("c-i18n-plural", "p-i18n"), P),
    ("where are the Helm values for staging?", ("c-helm-values", "p-k8s"), E),
    ("which file sets the cluster config of each stage", ("c-helm-values", "p-k8s"), P),
    ("Alembic says there are two heads", ("c-alembic-branch", "p-migrations"), E),
    ("the schema history forked after combining parallel lines of work", ("c-alembic-branch", "p-migrations"), P),
    ("CSV export of shipments times out", ("c-csv-export",), E),
    ("big customers can't download their parcel list as a spreadsheet", ("c-csv-export",), P),
    ("Lighthouse mobile score of the quotes page", ("c-lighthouse", "p-perf-budget"), E),
    ("the pricing screen feels sluggish on handsets", ("c-lighthouse", "p-perf-budget"), P),
    ("which Postgres version are we on?", ("p-postgres",), E),
    ("who has to approve a migration?", ("p-kenji", "p-migrations"), E),
    ("can I alter a db column without asking anyone", ("p-kenji", "p-migrations"), P),
    ("are prices stored as floats?", ("p-money",), E),
    ("how should I represent an amount like 12.50 yen in a record", ("p-money",), P),
    ("which day can I release this?", ("p-release-day", "p-canary"), E),
    ("when is it ok to put my change in front of production users", ("p-release-day", "p-canary"), P),
    ("how do I roll back a bad release?", ("p-rollback",), E),
    ("undo the last version we put live", ("p-rollback",), P),
    ("what format do error responses use?", ("p-errors",), E),
    ("what should a failed request body look like", ("p-errors",), P),
    ("how do we paginate lists in the API?", ("p-pagination",), E),
    ("return the next batch of items after a long listing", ("p-pagination",), P),
    ("rate limit per API key", ("p-rate-limit",), E),
    ("how many calls in sixty seconds may one integrator make", ("p-rate-limit",), P),
    ("can I put the database password in .env?", ("p-vault",), E),
    ("where are credentials loaded from when the app boots", ("p-vault",), P),
    ("is it ok to log a customer's phone number?", ("p-pii",), E),
    ("may I print someone's street and mobile in diagnostics", ("p-pii",), P),
    ("how do services authenticate to each other?", ("p-service-auth",), E),
    ("how does one internal component prove its identity to another", ("p-service-auth",), P),
    ("who maintains the carrier integrations?", ("p-tomas",), E),
    ("who understands the German parcel firm's oddities", ("p-tomas",), P),
    ("which charting library should I use?", ("p-charts",), E),
    ("I want to draw a graph of monthly volume on a screen", ("p-charts",), P),
    ("write a pytest for the rates engine", ("u-pytest", "p-rates-engine"), E),
    ("add a unit check for the pricing calculator", ("u-pytest", "p-rates-engine"), P),
    ("how should I write the commit message?", ("u-conventional",), E),
    ("what prefix goes at the start of my change summary", ("u-conventional",), P),
    ("should I merge main into my feature branch?", ("u-rebase",), E),
    ("my topic work is behind trunk, how do I catch up", ("u-rebase",), P),
    ("what is the outbox table for?", ("p-events",), E),
    ("how do business happenings reach the message bus reliably", ("p-events",), P),
    ("what does dimensional weight mean?", ("p-dim-weight",), E),
    ("how is a box's billable heaviness computed from its size", ("p-dim-weight",), P),
    ("when is the next penetration test?", ("p-pentest",), E),
    ("when do outside hackers audit us", ("p-pentest",), P),
    ("what keybindings for Neovim?", ("u-editor",), E),
    ("how do I jump to where a function is defined in my text program", ("u-editor",), P),
    ("what time is standup?", ("p-standup",), E),
    ("when is the daily team sync", ("p-standup",), P),
    ("how do I center a div with flexbox?", (), N),
    ("explain the difference between a monad and a functor", (), N),
    ("what's a good recipe for banana bread?", (), N),
    ("translate 'good morning' to Spanish", (), N),
    ("write a haiku about autumn leaves", (), N),
    ("what's the capital of Australia?", (), N),
    ("how does garbage collection work in the JVM?", (), N),
    ("summarise the plot of Hamlet", (), N),
]


def build(seed: int = SEED, rows: int = 1620) -> FocusedSet:
    """The whole set; the same seed gives the same set."""
    rng = random.Random(seed)
    out = FocusedSet()
    runbook, habits = _generated(rng)
    user_files = {**USER_FILES, "habits.md": ("type: preference\nimportance: low\nupdatedAt: 2025-07-07", habits)}
    project_files = {**PROJECT_FILES, "runbook.md": ("type: knowledge\ntags: [ops]\nupdatedAt: 2026-01-30", runbook)}
    for files, target in ((user_files, out.user_files), (project_files, out.project_files)):
        for name, (front, entries) in files.items():
            target[name] = _file_text(front, entries)
            about = [line.split(":", 1)[1].strip(" []") for line in front.splitlines()
                     if line.startswith(("name:", "description:", "tags:"))]
            section = ""
            for heading, key, text in entries:
                section = heading or section
                out.texts[key] = text
                out.context[key] = " ".join([section, *about])
    topics = list(_TOPICS)
    for i in range(40):
        out.conversations[f"c{i + 1:02d}"] = (f"{topics[i % len(topics)]} work {i // len(topics) + 1}", True)
    for i in range(6):
        out.conversations[f"x{i + 1:02d}"] = ("ceramics shop", False)
    for conv, facts in CONVERSATION_FACTS.items():
        for key, text in facts:
            out.rows.append(ConversationRow(key, conv, text))
            out.texts[key] = text
    for i, text in enumerate(OTHER_PROJECT_FACTS):
        out.rows.append(ConversationRow("", f"x{i % 6 + 1:02d}", text))
    seen: set[str] = set(out.texts.values())
    conv_ids = [c for c, (_, here) in out.conversations.items() if here]
    other_ids = [c for c, (_, here) in out.conversations.items() if not here]
    while len(out.rows) < rows:
        thing = rng.choice(_THINGS)
        if rng.random() < 0.6:
            text = f"{rng.choice(_ACTIONS)} {thing} {rng.choice(_DETAILS)}"
        else:
            text = rng.choice(_NOTES).format(thing=thing)
            text = text[0].upper() + text[1:]
        if text in seen:
            continue
        seen.add(text)
        conv = rng.choice(other_ids) if rng.random() < 0.08 else rng.choice(conv_ids)
        out.rows.append(ConversationRow("", conv, text, (rng.choice(_TOPICS),)))
    for i, (text, needed, kind) in enumerate(MESSAGES):
        out.messages.append(Message(text, frozenset(needed), kind, "dev" if (i // 2) % 2 == 0 else "held"))
    return out


def check(data: FocusedSet) -> list[str]:
    """What is wrong with the set: a paraphrase that shares a content word with a memory it
    needs (§15's terms: §5's less one-letter ones and the common words; the memory's words are
    all that F3's M holds: its text, section, file name, description and tags), a label
    without a memory."""
    from memtui.core.focused import content_terms

    problems = []
    for m in data.messages:
        for key in m.needed:
            if key not in data.texts:
                problems.append(f"{m.text!r}: no memory {key}")
            elif m.kind == P:
                shared = content_terms(m.text) & (content_terms(data.texts[key])
                                                  | content_terms(data.context.get(key, "")))
                if shared:
                    problems.append(f"{m.text!r} shares {sorted(shared)} with {key}")
    return problems
