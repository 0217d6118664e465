"""One settings module, read from the environment.

With nothing set, the platform runs embedded: SQLite in ``var/`` and a Celery
broker on the local filesystem, so ``make run`` needs no server. Setting
``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL`` switches to production mode;
the code path is the same.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean, got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DEV_SECRET_KEY = "dev-only-insecure-key-change-me"
# Keys published in this repository (the development key, the placeholders of .env.example):
# anyone can sign cookies with them, so they are refused whenever DEBUG is off.
PUBLISHED_KEYS = frozenset({DEV_SECRET_KEY, "change-me-to-a-long-random-string", "change-me-too"})
# Off unless set: `make run` sets DEBUG=1, production (Dockerfile, compose) never does.
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY") or (DEV_SECRET_KEY if DEBUG else "")
if not DEBUG and (not SECRET_KEY or SECRET_KEY in PUBLISHED_KEYS):
    raise ImproperlyConfigured(
        "Set SECRET_KEY to a long random value: with DEBUG off the development and "
        ".env.example keys are refused (for local work, set DEBUG=1)."
    )
# Django's own check (security.W009) wants 50 characters; a short key signs cookies and entry
# codes that can be brute-forced, so with DEBUG off it is refused at startup, not warned about.
MIN_SECRET_KEY_LENGTH = 50
if not DEBUG and len(SECRET_KEY) < MIN_SECRET_KEY_LENGTH:
    raise ImproperlyConfigured(
        f"SECRET_KEY is {len(SECRET_KEY)} characters; with DEBUG off it must be at least "
        f"{MIN_SECRET_KEY_LENGTH} random characters, e.g. "
        '`python -c "import secrets; print(secrets.token_urlsafe(50))"`.'
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# Worker ids from crowd platforms are stored only as keyed hashes (HMAC-SHA256).
# A separate key lets a study rotate it without invalidating sessions.
PSEUDONYM_KEY = env_str("PSEUDONYM_KEY") or SECRET_KEY
# Encrypts judge API keys stored in the database (Fernet, derived if unset).
FIELD_ENCRYPTION_KEY = env_str("FIELD_ENCRYPTION_KEY") or SECRET_KEY
# Former values of FIELD_ENCRYPTION_KEY, comma-separated: they still decrypt until
# `manage.py rotate_field_key` has re-encrypted every stored key with the current one.
FIELD_ENCRYPTION_OLD_KEYS = env_list("FIELD_ENCRYPTION_OLD_KEYS", [])
if not DEBUG:
    for _name, _key in (("PSEUDONYM_KEY", PSEUDONYM_KEY), ("FIELD_ENCRYPTION_KEY", FIELD_ENCRYPTION_KEY)):
        if _key in PUBLISHED_KEYS:
            raise ImproperlyConfigured(f"Set {_name}: the .env.example placeholder is refused when DEBUG is off.")

# HTTPS (read from the environment; safe production defaults when DEBUG is off). Behind a
# TLS-terminating proxy set SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO,https, and only
# if that proxy overwrites the header on every request.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# The container healthcheck asks over plain http from inside the container.
SECURE_REDIRECT_EXEMPT = env_list("SECURE_REDIRECT_EXEMPT", [r"^healthz$"])
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)  # opt in: hard to undo
# Preload is a deliberate choice, not an oversight: browsers' preload lists take months to leave,
# so it stays off unless set. With it off, check --deploy's reminder (security.W021) is silenced;
# every other deploy check still runs and must pass (tests/foundation/test_security_defaults.py).
SILENCED_SYSTEM_CHECKS: list[str] = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
_proxy_header = env_list("SECURE_PROXY_SSL_HEADER", [])
if _proxy_header and len(_proxy_header) != 2:
    raise ImproperlyConfigured("SECURE_PROXY_SSL_HEADER must be 'HEADER,value', e.g. HTTP_X_FORWARDED_PROTO,https")
SECURE_PROXY_SSL_HEADER = tuple(_proxy_header) if _proxy_header else None
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Error reports (the DEBUG page, mailed reports) hide DATABASE_URL, REDIS_URL, keys and
# the credentials of every URL (cobbler_site.foundation.errors).
DEFAULT_EXCEPTION_REPORTER_FILTER = "cobbler_site.foundation.errors.SafeExceptionReporterFilter"
DEFAULT_EXCEPTION_REPORTER = "cobbler_site.foundation.errors.SafeExceptionReporter"

DATA_DIR = Path(env_str("DATA_DIR", str(BASE_DIR / "var")))
# Folders the process writes to; cobbler_site.apps creates them when Django starts.
RUNTIME_DIRS = [DATA_DIR]

INSTALLED_APPS = [
    "cobbler_site.apps.SiteConfig",  # first: its ready() makes the runtime folders
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "csp",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc assets, served from static/ (no CDN)
    "annotations",
    "judging",
    "analysis",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

# Content Security Policy (django-csp): scripts only from this site (htmx, SortableJS and our
# own files are vendored under static/), no inline or eval'd script. Style attributes stay
# allowed for the progress bars' widths; <style> elements are not (htmx's indicator style is
# switched off in _base.html and lives in site.css). Report plots are data: images.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

ROOT_URLCONF = "cobbler_site.urls"
WSGI_APPLICATION = "cobbler_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env_str("SQLITE_PATH", str(DATA_DIR / "db.sqlite3")),
            # A file (not :memory:) so a real worker process can share the test database.
            "TEST": {"NAME": str(DATA_DIR / "test-db.sqlite3")},
            # WAL + IMMEDIATE: web and worker write concurrently without "database is locked".
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        # Longer than any retry countdown, or Redis redelivers a message still waiting to run.
        "visibility_timeout": 3600,
    }
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    _broker_dir = DATA_DIR / "broker"
    RUNTIME_DIRS += [_broker_dir / _sub for _sub in ("queue", "processed", "control")]
    # A hostname the transport ignores: without one kombu warns "No hostname was supplied" on
    # every connection (each run_judges, seed_demo, worker start).
    CELERY_BROKER_URL = "filesystem://localhost/"
    # kombu's filesystem transport with whole-file writes (a worker could read a half-written one).
    CELERY_BROKER_TRANSPORT = "cobbler_site.filesystem_broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        # kombu's exchange tables; unset, it writes control/*.exchange into the working directory.
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        # How often an idle worker looks for a message file (kombu's default is 1 s). Each hop
        # of a job (chunk, next chunk, finish) and each shutdown waited for it; a directory
        # listing five times a second costs nothing measurable.
        "polling_interval": 0.2,
    }
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(DATA_DIR / "cache"),
        }
    }

# Progress and results live in database rows, never in a result backend.
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
# Redeliver work whose worker died mid-task; safe because every task is idempotent.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# One message at a time per process, so a slow judge call never hoards queued work.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {"judging.tasks.*": {"queue": "llm"}}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
RUNTIME_DIRS.append(STATIC_ROOT)  # whitenoise warns on every request without it
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
MEDIA_ROOT = DATA_DIR / "media"

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/dashboard/"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["cobbler_site.foundation.access.ResearcherOnly"],
    # JSON bodies parsed strictly: NUL, lone surrogates, duplicate keys, huge integers are a 400.
    # JSON only (a form body is a 415): a form cannot say null, an empty list or a number, so
    # DRF guesses ("" is "not sent"), and the schema could not describe what it accepts.
    # /api/token/ keeps DRF's form and JSON parsers (its own parser_classes).
    "DEFAULT_PARSER_CLASSES": ["cobbler_site.foundation.text_safety.StrictJSONParser"],
    # ?page= only as a whole number from 1 (an empty one is a 404 like ?page=x).
    "DEFAULT_PAGINATION_CLASS": "cobbler_site.foundation.api_input.StrictPageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # DRF's per-user rate, counted so that a Redis outage allows (and logs) instead of a 500.
    "DEFAULT_THROTTLE_CLASSES": ["cobbler_site.foundation.throttle.FailOpenUserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"user": env_str("API_THROTTLE_RATE", "6000/min")},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "CoBBLEr platform API",
    "DESCRIPTION": "Studies, crowd submissions, judge jobs and agreement reports.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies get their own components (FooRequest), so a field that may not be blank
    # says minLength 1 where it is sent, without claiming it of the responses.
    "COMPONENT_SPLIT_REQUEST": True,
    # Judge and generation jobs share one status and one mode vocabulary (judging.models.work),
    # and their rows another status: one named enum each instead of hash-suffixed names.
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "judging.models.work.LLMJob.Status",
        "JobModeEnum": "judging.models.work.LLMJob.Mode",
        "CallStatusEnum": "judging.models.work.WorkRow.Status",
        "RejectReasonEnum": "annotations.models.crowd.RejectReason",  # review reason: API input and output
        "ReviewStateEnum": "annotations.models.crowd.Assignment.Review",  # review history: from and to
        "VerdictFormatEnum": "judging.vocabulary.VerdictFormat",  # templates, judges and jobs
    },
    # Every status code DRF itself can answer (401, 403, 429, 400, 404), added to each operation.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "cobbler_site.foundation.api_schema.add_common_responses",
    ],
    # The staff-only /api/docs/ (Swagger UI) and /api/redoc/ pages load their assets from
    # static/ (drf-spectacular-sidecar): the CSP allows scripts from this site only.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "persistAuthorization": False, "validatorUrl": None},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        # Django's own format for the development server's access lines (django.utils.log).
        "django.server": {
            "()": "django.utils.log.ServerFormatter",
            "format": "[{server_time}] {message}",
            "style": "{",
        },
    },
    "filters": {"quiet_simulator": {"()": "cobbler_site.foundation.log_filters.QuietSimulatorRequests"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
        "django.server": {
            "class": "logging.StreamHandler",
            "formatter": "django.server",
            "filters": ["quiet_simulator"],
        },
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # httpx logs every request line; keep it quiet so nothing sensitive ends up in logs.
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        "openai": {"level": "WARNING"},
        # `make run`: the demo judge's simulator calls would bury every other access line.
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
    },
}

# Crowd-work defaults (each study sets its own lease: Study.lease_minutes).
# How many batches one worker identity (platform id) may hold in one study, whatever the
# session id (annotations.services.crowd.claim_batch); 1 keeps raters independent across conditions.
CROWD_MAX_BATCHES_PER_WORKER = env_int("CROWD_MAX_BATCHES_PER_WORKER", 1)
# Live leases one client address (and one /24 or /64 network) may hold per study, whatever the
# worker ids it brings (annotations.services.lease_caps; stored as keyed hashes); 0: no cap.
# Behind a proxy set TRUSTED_PROXY_COUNT, or every worker shares the proxy's address.
CROWD_MAX_LEASES_PER_IP = env_int("CROWD_MAX_LEASES_PER_IP", 3)
CROWD_MAX_LEASES_PER_NETWORK = env_int("CROWD_MAX_LEASES_PER_NETWORK", 10)

CELERY_BEAT_SCHEDULE = {
    # Leases are also checked when a worker asks for work; this catches quiet periods.
    "expire-stale-leases": {"task": "annotations.tasks.expire_stale_leases", "schedule": 60.0},
    # Re-enqueues judge work lost with a killed worker (see judging.services.requeue_stale_work).
    "sweep-stale-judge-work": {"task": "judging.tasks.sweep_stale_judge_work", "schedule": 60.0},
    # Polls submitted batches whose poller was lost with a worker (judging.batch.tasks).
    "sweep-batches": {"task": "judging.tasks.sweep_batches", "schedule": 60.0},
}

# Judge jobs (judging/). The simulator mounted in this site serves the demo judge.
# Where the demo judge calls the simulator: `make run` and `runstack` set it to the port they serve
# (judging.services.local_simulator_url); the default matches `make run` on port 8000.
SIMULATOR_BASE_URL = env_str("SIMULATOR_BASE_URL", "http://127.0.0.1:8000/sim/v1")
# /sim/v1 is mounted only when enabled (by default only with DEBUG on). With DEBUG off it
# answers logged-in staff, a staff API token, or `Authorization: Bearer $SIMULATOR_TOKEN`.
SIMULATOR_ENABLED = env_bool("SIMULATOR_ENABLED", DEBUG)
SIMULATOR_TOKEN = env_str("SIMULATOR_TOKEN")
# A judge's api_key_env may only name variables with this prefix (keys typed into the judge
# form are stored encrypted instead), so a judge can never read PATH or DATABASE_URL.
JUDGE_KEY_ENV_PREFIX = env_str("JUDGE_KEY_ENV_PREFIX", "JUDGE_KEY_")
if not JUDGE_KEY_ENV_PREFIX:
    raise ImproperlyConfigured("JUDGE_KEY_ENV_PREFIX must not be empty")
# Where judges may send requests (see judging.endpoints): "public-https" = any https host
# whose addresses are all public; "loopback" = 127.0.0.0/8, ::1 (any scheme); explicit
# entries "host", "host:port", "*.domain", "http://host:port" or a CIDR "10.0.0.0/24" allow
# that host even on a private address, e.g. JUDGE_ALLOWED_HOSTS=public-https,10.0.0.5:8000.
JUDGE_ALLOWED_HOSTS = env_list("JUDGE_ALLOWED_HOSTS", ["public-https", *(["loopback"] if DEBUG else [])])
JUDGING_CHUNK_SIZE = env_int("JUDGING_CHUNK_SIZE", 50)  # judgments per Celery message
JUDGING_LEASE_SECONDS = env_int("JUDGING_LEASE_SECONDS", 120)  # claim lease, renewed at 1/3
JUDGING_STALE_SECONDS = env_int("JUDGING_STALE_SECONDS", 180)  # sweeper: silent job threshold
JUDGING_MAX_ATTEMPTS = env_int("JUDGING_MAX_ATTEMPTS", 6)  # per call, transient errors only
JUDGING_BACKOFF_BASE = float(env_int("JUDGING_BACKOFF_BASE_MS", 1000)) / 1000
JUDGING_BACKOFF_CAP = float(env_int("JUDGING_BACKOFF_CAP_MS", 60000)) / 1000
# Chunks of one model running at once per worker process, so one model never takes every
# worker slot; a chunk beyond that is offered again after this many seconds (jittered x1-2).
JUDGING_CHUNKS_PER_MODEL = max(1, env_int("JUDGING_CHUNKS_PER_MODEL", 2))
JUDGING_BUSY_COUNTDOWN = float(env_str("JUDGING_BUSY_COUNTDOWN", "2.0"))
# Batch mode (judging/batch, docs/batch-mode.md): seconds between polls of a submitted batch,
# and the most requests / bytes one uploaded batch file carries (OpenAI allows 50k / 200 MB;
# the simulator reads at most 4 MB a request body). Larger jobs become several batches.
BATCH_POLL_SECONDS = float(env_str("BATCH_POLL_SECONDS", "30"))
BATCH_MAX_REQUESTS = env_int("BATCH_MAX_REQUESTS", 50_000)
BATCH_MAX_BYTES = env_int("BATCH_MAX_BYTES", 3_500_000)

# Importers (annotations/importers): the longest JSONL line read, in bytes; a longer line is a
# one-line error after reading at most this much, so memory stays bounded.
IMPORT_MAX_LINE_BYTES = env_int("IMPORT_MAX_LINE_BYTES", 8 * 1024 * 1024)
# Design files the web form and the API may name (the CLI takes any path): DATA_DIR/designs.
DESIGNS_DIR = Path(env_str("DESIGNS_DIR", str(DATA_DIR / "designs")))

# Per-client-IP rate limits (cobbler_site.foundation.throttle), counted in the cache; they fail open
# (allow, log a warning) when the cache is down. "N/s", "N/min", "N/hour", "N/day"; empty: off.
THROTTLE_START = env_str("THROTTLE_START", "30/min")  # crowd entry /s/<slug>/start
THROTTLE_LOGIN = env_str("THROTTLE_LOGIN", "10/min")  # POSTs to accounts/login/ and the admin login
THROTTLE_TOKEN = env_str("THROTTLE_TOKEN", "10/min")  # POST /api/token/
# Per account, whatever the address (cobbler_site.foundation.throttle.AccountLockoutBackend): after this many
# failed logins within the window, every password is refused for the lockout; 0 failures: off.
LOGIN_ACCOUNT_MAX_FAILURES = env_int("LOGIN_ACCOUNT_MAX_FAILURES", 10)
LOGIN_ACCOUNT_WINDOW_MINUTES = env_int("LOGIN_ACCOUNT_WINDOW_MINUTES", 15)
LOGIN_ACCOUNT_LOCKOUT_MINUTES = env_int("LOGIN_ACCOUNT_LOCKOUT_MINUTES", 15)
AUTHENTICATION_BACKENDS = [
    "cobbler_site.foundation.throttle.AccountLockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
THROTTLE_CONNECTION_TEST = env_str("THROTTLE_CONNECTION_TEST", "12/min")  # a model's "Test connection"
# Behind N reverse proxies that set X-Forwarded-For, the client is its first hop; 0 trusts
# only REMOTE_ADDR (a client can forge X-Forwarded-For).
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
# A leased batch whose worker never opened a task page expires after this many minutes
# (the study's lease_minutes applies once a task page has been shown).
CROWD_UNOPENED_LEASE_MINUTES = env_int("CROWD_UNOPENED_LEASE_MINUTES", 10)
