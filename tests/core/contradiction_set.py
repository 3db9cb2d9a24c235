"""A labelled set for the doctor's `contradiction` finding (SPEC §17): pairs of memories as
people and assistants write them, each labelled by whether the two state different values for
the same thing. Used by tests/core/test_contradictions.py and by

    python -m tests.benchmarks.contradictions

which prints precision and recall on it.

CONTRADICTS: (kind, a, b) — the two cannot both be true (a port, version, tool, day, person,
duration, path, command, number that changed or was written down twice differently).
LOOK_ALIKES: (shape, a, b) — they look alike but do not disagree: the same subject seen from
another facet, one template over different subjects, repeated labels, lists of rules, events
at different times, the same value said twice."""

from __future__ import annotations

CONTRADICTS: list[tuple[str, str, str]] = [
    # ports
    ("port", "The API server listens on port 8080", "The API server listens on port 9090"),
    ("port", "The dev server runs on `localhost:3000`", "The dev server runs on `localhost:5173`"),
    ("port", "Postgres in docker-compose is exposed on port 5432", "Postgres in docker-compose is exposed on port 5433"),
    ("port", "Redis for the job queue listens on 6379", "Redis for the job queue now listens on 6380"),
    ("port", "Grafana dashboard: http://localhost:3001", "Grafana dashboard: http://localhost:3002"),
    ("port", "The admin UI is served at 127.0.0.1:8000", "The admin UI is served at 127.0.0.1:8001"),
    # versions
    ("version", "The backend targets Python 3.11", "The backend targets Python 3.12"),
    ("version", "We use Node 18 for the frontend build", "We use Node 20 for the frontend build"),
    ("version", "CI pins ruff to 0.4.2", "CI pins ruff to 0.6.9"),
    ("version", "The mobile app supports iOS 15 and later", "The mobile app supports iOS 16 and later"),
    ("version", "Production runs PostgreSQL 14", "Production runs PostgreSQL 16"),
    ("version", "The public API is v2; v1 is retired", "The public API is v3; v2 is retired"),
    ("version", "Minimum supported Go version is 1.21", "Minimum supported Go version is 1.22"),
    # tools
    ("tool", "Use pnpm for installing dependencies", "Use yarn for installing dependencies"),
    ("tool", "Unit tests are written with vitest", "Unit tests are written with jest"),
    ("tool", "Use vitest, not jest", "Use jest, not vitest"),
    ("tool", "Format Python code with black", "Format Python code with ruff"),
    ("tool", "The job queue is backed by Redis", "The job queue is backed by RabbitMQ"),
    ("tool", "Deploys go through GitHub Actions", "Deploys go through CircleCI"),
    ("tool", "The docs site is built with MkDocs", "The docs site is built with Docusaurus"),
    ("tool", "Type checking uses mypy in strict mode", "Type checking uses pyright in strict mode"),
    ("tool", "Error tracking goes to Sentry", "Error tracking goes to Datadog"),
    # days and dates
    ("day", "Release day is Thursday", "Release day is Tuesday"),
    ("day", "Never deploy on Fridays", "Never deploy on Mondays"),
    ("day", "The team standup is on Monday at 10:00", "The team standup is on Wednesday at 10:00"),
    ("day", "The code freeze for 4.0 starts 2025-03-14", "The code freeze for 4.0 starts 2025-03-21"),
    ("day", "Database backups run nightly", "Database backups run weekly"),
    # people
    ("person", "Alice owns the billing service", "Bob owns the billing service"),
    ("person", "Ask @marta before changing the auth flow", "Ask @devin before changing the auth flow"),
    ("person", "Security reviews go to Priya", "Security reviews go to Tomasz"),
    ("person", "The on-call lead for payments is Chen", "The on-call lead for payments is Ravi"),
    ("person", "Design questions go to Lena in #design", "Design questions go to Omar in #design"),
    # durations
    ("duration", "Sessions expire after 30 minutes", "Sessions expire after 2 hours"),
    ("duration", "The HTTP client timeout is 10s", "The HTTP client timeout is 30s"),
    ("duration", "Access tokens are valid for 15 min", "Access tokens are valid for 60 min"),
    ("duration", "Logs are kept for 14 days", "Logs are kept for 90 days"),
    ("duration", "Retry failed webhooks with a 5 second backoff", "Retry failed webhooks with a 30 second backoff"),
    # paths
    ("path", "The database pool is configured in `src/db/pool.ts`", "The database pool is configured in `src/database/pool.ts`"),
    ("path", "Migrations live in db/migrations/", "Migrations live in backend/migrations/"),
    ("path", "Feature flags are defined in config/flags.yaml", "Feature flags are defined in config/features.yaml"),
    ("path", "The OpenAPI spec is at `docs/api/openapi.yaml`", "The OpenAPI spec is at `api/openapi.json`"),
    # commands
    ("command", "Run tests locally with `uv run pytest`", "Run tests locally with `pnpm test`"),
    ("command", "Start the dev server with `npm run dev`", "Start the dev server with `make serve`"),
    ("command", "Regenerate the GraphQL types with `pnpm codegen`", "Regenerate the GraphQL types with `yarn generate:types`"),
    ("command", "Lint the whole repo with `make lint`", "Lint the whole repo with `pre-commit run --all-files`"),
    ("command", "Build the Docker image with `docker build -t app .`", "Build the Docker image with `docker buildx bake`"),
    # numbers and amounts
    ("number", "The connection pool size is 20", "The connection pool size is 50"),
    ("number", "Rate limit for the public API is 100 requests per minute", "Rate limit for the public API is 600 requests per minute"),
    ("number", "Keep test coverage above 80%", "Keep test coverage above 90%"),
    ("number", "Max upload size is 10 MB", "Max upload size is 25 MB"),
    ("number", "Line length limit is 88", "Line length limit is 120"),
]

LOOK_ALIKES: list[tuple[str, str, str]] = [
    # the same subject, another facet
    ("facet", "The API server listens on port 8080", "The API server logs to stdout in JSON"),
    ("facet", "The API server listens on port 8080", "The API server is written in Go 1.22"),
    ("facet", "Postgres runs on port 5432", "Postgres runs in Docker for local development"),
    ("facet", "The backend targets Python 3.11", "The backend uses FastAPI with SQLAlchemy 2"),
    ("facet", "Use pnpm for installing dependencies", "pnpm workspaces hold the frontend packages"),
    ("facet", "Sessions expire after 30 minutes", "Sessions are stored in Redis"),
    ("facet", "Release day is Thursday", "Release notes are written by the PM"),
    ("facet", "Alice owns the billing service", "Alice prefers small pull requests"),
    ("facet", "The connection pool size is 20", "The connection pool is created in `src/db/pool.ts`"),
    ("facet", "Logs are kept for 14 days", "Logs are shipped to Loki"),
    ("facet", "Max upload size is 10 MB", "Uploads go to the S3 bucket `acme-uploads`"),
    ("facet", "The HTTP client timeout is 10s", "The HTTP client retries 3 times"),
    ("facet", "Run tests locally with `uv run pytest`", "Tests need a running Postgres"),
    ("facet", "The dev server runs on `localhost:3000`", "The dev server hot-reloads on save"),
    ("facet", "CI pins ruff to 0.4.2", "CI runs on ubuntu-latest"),
    ("facet", "Migrations live in db/migrations/", "Migrations are applied with `alembic upgrade head`"),
    ("facet", "The team standup is on Monday at 10:00", "The team standup is in the #eng-standup channel"),
    ("facet", "Error tracking goes to Sentry", "Sentry alerts page the on-call engineer"),
    ("facet", "Access tokens are valid for 15 min", "Refresh tokens are valid for 30 days"),
    ("facet", "The API server listens on port 8080 in production", "The API server listens on port 3000 in development"),
    # one template, different subjects
    ("template", "Run backend tests with `uv run pytest`", "Run frontend tests with `pnpm test`"),
    ("template", "The API server listens on port 8080", "The metrics server listens on port 9090"),
    ("template", "Use vitest for unit tests", "Use playwright for end-to-end tests"),
    ("template", "Security reviews go to Priya", "Accessibility reviews go to Tomasz"),
    ("template", "Logs are kept for 14 days", "Backups are kept for 90 days"),
    ("template", "Sessions expire after 30 minutes", "Invitations expire after 7 days"),
    ("template", "The web app is deployed to Vercel", "The API is deployed to Fly.io"),
    ("template", "Format Python code with ruff", "Format TypeScript code with prettier"),
    ("template", "Start the dev server with `npm run dev`", "Start the worker with `npm run worker`"),
    ("template", "Migrations live in db/migrations/", "Seeds live in db/seeds/"),
    ("template", "Alice owns the billing service", "Bob owns the search service"),
    ("template", "The frontend targets Node 20", "The backend targets Python 3.12"),
    ("template", "Staging deploys on Tuesday", "Production deploys on Thursday"),
    ("template", "Lint Python with `ruff check .`", "Lint shell scripts with `shellcheck`"),
    ("template", "The user service listens on port 8001", "The order service listens on port 8002"),
    ("template", "Ask @marta before changing the auth flow", "Ask @devin before changing the billing flow"),
    ("template", "Payments config is in config/payments.yaml", "Search config is in config/search.yaml"),
    ("template", "The orders table is partitioned by month", "The events table is partitioned by day"),
    ("template", "Upload limit for avatars is 2 MB", "Upload limit for attachments is 25 MB"),
    ("template", "Cache product pages for 5 minutes", "Cache category pages for 1 hour"),
    ("template", "The iOS app supports iOS 16 and later", "The Android app supports Android 10 and later"),
    ("template", "Use `httpx` for HTTP calls in the backend", "Use `ky` for HTTP calls in the frontend"),
    ("template", "Redis db 0 holds sessions", "Redis db 1 holds the rate limiter"),
    ("template", "Run the linter with `pnpm lint`", "Run the type checker with `pnpm typecheck`"),
    ("template", "The staging database is `app_staging`", "The test database is `app_test`"),
    ("template", "Build the docs with `mkdocs build`", "Serve the docs with `mkdocs serve`"),
    ("template", "Rotate the Stripe keys every 90 days", "Rotate the AWS keys every 180 days"),
    ("template", "Retry failed webhooks 5 times", "Retry failed emails 3 times"),
    # labels and rule lists
    ("label", "**NEVER**:", "**NEVER**:"),
    ("label", "**ALWAYS**:", "**ALWAYS**:"),
    ("label", "**NEVER**: commit `.env` files", "**NEVER**: push directly to `main`"),
    ("label", "**ALWAYS**: run `pnpm lint` before pushing", "**ALWAYS**: add a test for every bug fix"),
    ("label", "**NEVER**: use `any` in TypeScript", "**NEVER**: use `var` in JavaScript"),
    ("label", "Rules:", "Rules:"),
    ("label", "IMPORTANT: keep PRs under 400 lines", "IMPORTANT: squash merge only"),
    ("label", "Gotcha: the CI cache key includes the lockfile", "Gotcha: the staging DB is reset every night"),
    ("label", "TODO: migrate the cron jobs to Temporal", "TODO: drop the legacy v1 endpoints"),
    ("label", "Note: `make dev` needs Docker running", "Note: `make test` needs Postgres running"),
    # events and history at different times
    ("event", "2024-05-01: upgraded Django to 4.2", "2024-11-12: upgraded Django to 5.1"),
    ("event", "Migrated from CRA to Vite in March 2024", "Migrated from Jest to Vitest in May 2024"),
    ("event", "Incident 2024-06-03: the queue stalled for 2 hours", "Incident 2024-09-17: the cache was cold for 20 minutes"),
    ("event", "Fixed the login bug in PR #482", "Fixed the signup bug in PR #517"),
    ("event", "Sprint 14 focused on search", "Sprint 15 focused on billing"),
    # lists, steps, enumerations
    ("list", "Step 1: install dependencies with `pnpm install`", "Step 2: start the database with `docker compose up db`"),
    ("list", "Supported browsers: Chrome, Firefox, Safari", "Supported locales: en, de, fr"),
    ("list", "The monorepo has apps/web, apps/api and packages/ui", "The monorepo uses Turborepo for caching"),
    ("list", "Environments: dev, staging, production", "Regions: eu-west-1, us-east-1"),
    ("list", "Use Python 3.12 and Node 20 locally", "Use Docker Desktop and Colima on macOS"),
    # the same value said again, or in other words
    ("same", "The API server listens on port 8080", "The API server now listens on port 8080"),
    ("same", "Sessions expire after 30 minutes", "Sessions expire after 30 min"),
    ("same", "Access tokens are valid for 1 hour", "Access tokens are valid for 60 minutes"),
    ("same", "Use pnpm for installing dependencies", "Always use pnpm for installing dependencies"),
    ("same", "Run tests locally with `uv run pytest`", "Run the tests locally with `uv run pytest`"),
    ("same", "Release day is Thursday", "Release day is thursday"),
    ("same", "Python 3.11 is the target for the backend", "The backend targets Python 3.11"),
    # preferences and polarity, not values
    ("polarity", "Prefer named exports", "Avoid default exports"),
    ("polarity", "Use type hints everywhere", "Do not use type hints in tests"),
    ("polarity", "Write commit messages in English", "Write code comments in English"),
    ("polarity", "Keep functions small", "Keep modules small"),
    ("polarity", "Prefer composition over inheritance", "Prefer pure functions over classes"),
    # other languages and mixed text
    ("other", "数据库连接池配置过小，高并发时超时", "数据库连接池在 src/db/pool.ts 里配置"),
    ("other", "API 服务监听 8080 端口", "监控服务监听 9100 端口"),
    ("other", "Le serveur de dev écoute sur le port 3000", "Le serveur de dev recharge à chaque sauvegarde"),
    ("other", "Tabs for Go, 4 spaces for Python", "Tabs for Makefiles, 2 spaces for YAML"),
    ("other", "Bump the version in pyproject.toml and CHANGELOG.md", "Bump the version in package.json only"),
    ("other", "Use the `main` branch for releases", "Use the `develop` branch for features"),
]
