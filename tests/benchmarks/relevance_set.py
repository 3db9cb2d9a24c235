"""A labelled relevance set for SPEC §13 (keyword vs hybrid retrieval).

Realistic memories of one developer and one project (a billing service), in all three layers,
and queries labelled with the memories they need. Many queries are paraphrases that share no
word (after §5's terms) with the memory they need — the case keyword retrieval cannot serve —
and every layer holds distractors that share words with some query without answering it.
The project and conversation layers hold more than their budgets take, so order matters.
"""

from __future__ import annotations

# key -> (layer, text). Keys are only labels for the benchmark; they are not memtui ids.
USER = {
    "u-concise": "Keep answers short; skip the preamble and get to the code",
    "u-emoji": "No emoji in commit messages or code comments",
    "u-ts-strict": "TypeScript strict mode everywhere; an `any` needs a comment saying why",
    "u-vitest": "Use vitest, not jest, for unit tests",
    "u-editor": "I use Neovim with the LazyVim distribution",
    "u-tz": "I work from Lisbon, UTC+0 in winter and UTC+1 in summer",
    "u-small-pr": "Prefer small pull requests, under 300 changed lines",
    "u-python": "For scripts prefer Python 3.11 with type hints and ruff",
    "u-shell": "Shell snippets should be POSIX sh, not bash-only",
    "u-explain": "When proposing a refactor, list the risks before the steps",
    "u-names": "Descriptive variable names over abbreviations",
    "u-docker": "Run local services with docker compose, never installed system-wide",
}
PROJECT = {
    "p-postgres": "The primary datastore is PostgreSQL 16 behind pgbouncer in transaction mode",
    "p-kenji": "Kenji maintains the PostgreSQL cluster and approves schema migrations",
    "p-migrations": "Schema migrations live in db/migrations and run with sqitch, one change per file",
    "p-redis": "Redis holds user sessions with a 24 hour TTL; keys are prefixed sess:",
    "p-deploy": "Releases go out every Tuesday through the GitHub Actions pipeline; no releases on Fridays",
    "p-canary": "New versions take 5% of traffic for 30 minutes before full rollout",
    "p-stripe": "Stripe webhooks are verified with the signing secret and retried three times with backoff",
    "p-invoices": "Invoices are generated as PDFs by the invoice-renderer worker at 02:00 UTC",
    "p-currency": "Amounts are stored as integer cents with an ISO 4217 currency code, never floats",
    "p-tests": "Integration tests need `make db-up` first; they use a throwaway database per run",
    "p-lint": "CI fails on eslint warnings; run `pnpm lint --fix` before pushing",
    "p-monorepo": "The repository is a pnpm monorepo: apps/ for services, packages/ for shared code",
    "p-api-version": "Public API routes are versioned under /v2; /v1 is frozen and only gets security fixes",
    "p-errors": "Errors returned to clients use the RFC 7807 problem+json format",
    "p-logging": "Structured logs via pino; never log card numbers or full email addresses",
    "p-feature-flags": "Feature flags live in LaunchDarkly; remove a flag within two sprints of full rollout",
    "p-oncall": "The on-call rotation changes on Mondays; pages go to the #billing-oncall channel",
    "p-timeouts": "Outbound HTTP calls use a 5 second timeout and a circuit breaker",
    "p-queue": "Background jobs run on BullMQ; a failed job retries five times then goes to the dead-letter queue",
    "p-auth": "Service-to-service calls authenticate with short-lived JWTs signed by the auth service",
    "p-frontend": "The dashboard is a React app built with Vite; state lives in TanStack Query",
    "p-i18n": "User-facing strings go through i18next; English and Portuguese are required",
    "p-tax": "VAT is computed by the tax-engine package; never round tax per line, round the total",
    "p-accessibility": "Every form control needs a visible label; the dashboard targets WCAG 2.1 AA",
    "p-perf-budget": "Dashboard pages must load in under two seconds on a mid-range phone",
    "p-dependencies": "Renovate opens dependency updates on Mondays; merge patch updates when green",
    "p-secrets": "Secrets come from Vault at start-up; nothing secret goes in environment files",
    "p-backups": "Nightly database backups are kept 35 days and restored monthly as a drill",
    "p-dashboard-index": "The dashboard's revenue query needs the (account_id, created_at) index on invoices",
    "p-docs": "Architecture decisions are recorded as ADRs in docs/adr, numbered in order",
}
CONVERSATION = {
    "c-slow-report": "The monthly revenue report was slow because it scanned invoices without an index",
    "c-pool": "Raised the pgbouncer pool size from 20 to 50 after timeouts under load",
    "c-webhook-dup": "Duplicate Stripe events are ignored by storing processed event ids for 7 days",
    "c-flaky": "The flaky checkout test was fixed by freezing time with vi.useFakeTimers",
    "c-docker-mem": "Docker Desktop needed 6 GB of memory for the full local stack",
    "c-refund": "Partial refunds create a credit note instead of editing the original invoice",
    "c-vite-proxy": "The Vite dev server proxies /api to localhost:8080",
    "c-rename": "Renamed the customer table to accounts in migration 0042",
    "c-cache-bug": "Session cookies were dropped because the cookie domain lacked a leading dot",
    "c-release-notes": "Release notes are drafted from merged PR titles by a GitHub Action",
    "c-vat-bug": "Fixed a one-cent VAT difference by rounding the invoice total instead of each line",
    "c-sentry": "Sentry sampling is 10% for transactions and 100% for errors",
    "c-pnpm": "Use pnpm 9; the lockfile broke with pnpm 8",
    "c-typo": "Fixed a typo in the Portuguese translation of the payment page",
    "c-font": "The dashboard uses Inter for text and JetBrains Mono for numbers",
    "c-colour": "Brand primary colour is #3355FF",
    "c-meeting": "Sprint planning is on Wednesday mornings",
    "c-laptop": "Maria's laptop is the one with the broken trackpad",
    "c-coffee": "The office coffee machine is descaled on Thursdays",
    "c-lunch": "Team lunch is booked for the last Friday of each month",
}

# query -> the memories it needs. "para" marks a paraphrase: it shares no term with what it needs.
QUERIES: list[tuple[str, frozenset[str], bool]] = [
    ("why is the dashboard query slow in postgres", frozenset({"p-dashboard-index", "c-slow-report", "p-postgres"}), False),
    ("who should review my change to the db layout", frozenset({"p-kenji", "p-migrations"}), True),
    ("when can I ship this", frozenset({"p-deploy", "p-canary"}), True),
    ("how are monetary values represented", frozenset({"p-currency"}), True),
    ("our connection limit keeps getting hit during peak hours", frozenset({"c-pool", "p-postgres"}), True),
    ("we got the same payment notification twice", frozenset({"c-webhook-dup", "p-stripe"}), True),
    ("what should a failed request body look like", frozenset({"p-errors"}), True),
    ("can I put the password in .env", frozenset({"p-secrets"}), True),
    ("the test keeps failing randomly around dates", frozenset({"c-flaky"}), False),
    ("customer wants part of their money back", frozenset({"c-refund"}), True),
    ("users get logged out unexpectedly", frozenset({"c-cache-bug", "p-redis"}), True),
    ("tax total is off by a cent", frozenset({"c-vat-bug", "p-tax"}), False),
    ("which translations must every screen have", frozenset({"p-i18n"}), True),
    ("how long do we keep restore points", frozenset({"p-backups"}), True),
    ("where do architecture notes go", frozenset({"p-docs"}), False),
    ("what happens when a background task keeps crashing", frozenset({"p-queue"}), True),
    ("how do services prove who they are to each other", frozenset({"p-auth"}), True),
    ("the local stack runs out of RAM", frozenset({"c-docker-mem"}), True),
    ("write a unit test for the invoice renderer", frozenset({"u-vitest", "p-invoices"}), False),
    ("set up linting before I push", frozenset({"p-lint"}), False),
    ("is it ok to call the partner API without a deadline", frozenset({"p-timeouts"}), True),
    ("which package manager version do we need", frozenset({"c-pnpm", "p-monorepo"}), True),
    ("how often do we upgrade libraries", frozenset({"p-dependencies"}), True),
    ("who gets woken up at night when billing breaks", frozenset({"p-oncall"}), True),
]
