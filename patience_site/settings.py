"""Django settings for the patience service.

Every deployment-specific value is read from the environment (see README.md,
"Environment variables"). The defaults give a working development setup:
SQLite database and in-memory channel layer.
"""

from datetime import date
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEV_SECRET_KEY = "django-insecure-dev-only-patience-secret-key-change-me"
DEV_DAILY_SECRET = "dev-daily-secret-change-me"

DEBUG = env.bool("DEBUG", default=True)

SECRET_KEY = env("SECRET_KEY", default=DEV_SECRET_KEY)
if not DEBUG and SECRET_KEY == DEV_SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is False")

# Secret used to derive the daily challenge deals.
DAILY_SECRET = env("DAILY_SECRET", default=DEV_DAILY_SECRET)
# Daily deals are certified winnable by the solver: each candidate seed gets this
# many solver nodes (0 turns certification off), at most this many candidates.
DAILY_SOLVER_NODES = env.int("DAILY_SOLVER_NODES", default=50_000)
DAILY_MAX_CANDIDATES = env.int("DAILY_MAX_CANDIDATES", default=200)
# Races (games.services.races): the job ``manage.py races`` keeps RACE_POOL_SIZE unused deals
# per variant, each proven winnable within RACE_SOLVER_NODES solver nodes (0: unchecked).
RACE_POOL_SIZE = env.int("RACE_POOL_SIZE", default=10)
RACE_SOLVER_NODES = env.int("RACE_SOLVER_NODES", default=50_000)
# Guests (accounts.services): a visitor plays practice games without an account; one
# address makes at most GUEST_GAMES_PER_HOUR guests and their games an hour; a guest
# account unused for GUEST_KEEP_DAYS days is deleted with its games.
GUEST_GAMES_PER_HOUR = env.int("GUEST_GAMES_PER_HOUR", default=10)
GUEST_KEEP_DAYS = env.int("GUEST_KEEP_DAYS", default=7)
# Hints (games.hints): solved in HINT_WORKERS solver processes per server process, at
# most HINT_QUEUE waiting or running there at once; a solve stops after HINT_SOLVER_NODES
# positions or HINT_SOLVER_SECONDS, a hint answers hint_timeout HINT_DEADLINE_SECONDS after
# it was asked (no thread waits for it). Lines
# are cached per position for HINT_CACHE_SECONDS, unknown verdicts for a shorter while.
HINT_SOLVER_NODES = env.int("HINT_SOLVER_NODES", default=50_000)
# The first day that has dailies: earlier days (down to 0001-01-01) are not found.
DAILY_FIRST_DAY = date.fromisoformat(env("DAILY_FIRST_DAY", default="2000-01-01"))
HINT_SOLVER_SECONDS = env.float("HINT_SOLVER_SECONDS", default=1.0)
HINT_WORKERS = env.int("HINT_WORKERS", default=1)
HINT_WORKER_NICE = env.int("HINT_WORKER_NICE", default=19)  # os.nice() of the workers
HINT_QUEUE = env.int("HINT_QUEUE", default=2)
# Hint requests one server process takes a second, from all players together (a burst
# of as many); the rest are refused with hint_busy before any work (games.hints).
HINT_RATE = env.float("HINT_RATE", default=10.0)
HINT_DEADLINE_SECONDS = env.float("HINT_DEADLINE_SECONDS", default=5.0)
# A player's next solve comes no sooner than this after the last one (cached answers
# are not held up).
HINT_PLAYER_INTERVAL_SECONDS = env.int("HINT_PLAYER_INTERVAL_SECONDS", default=5)
HINT_CACHE_SECONDS = env.int("HINT_CACHE_SECONDS", default=24 * 3600)
HINT_UNKNOWN_CACHE_SECONDS = env.int("HINT_UNKNOWN_CACHE_SECONDS", default=300)
# Analyses of finished games (games.analysis, docs/analysis.md): a solve of one position
# gets ANALYSIS_FIRST_NODES states, up to ANALYSIS_MAX_NODES when asked again; a game at
# most ANALYSIS_GAME_NODES states or ANALYSIS_GAME_SECONDS. At most ANALYSIS_WORKERS run
# at once on the database (all server processes together), each in a job process at the
# idle CPU priority; a running analysis unheard of for ANALYSIS_STALE_SECONDS is run again.
ANALYSIS_FIRST_NODES = env.int("ANALYSIS_FIRST_NODES", default=20_000)
ANALYSIS_MAX_NODES = env.int("ANALYSIS_MAX_NODES", default=320_000)
ANALYSIS_GAME_NODES = env.int("ANALYSIS_GAME_NODES", default=600_000)
ANALYSIS_GAME_SECONDS = env.float("ANALYSIS_GAME_SECONDS", default=30.0)
ANALYSIS_WORKERS = env.int("ANALYSIS_WORKERS", default=1)
ANALYSIS_STALE_SECONDS = env.int("ANALYSIS_STALE_SECONDS", default=300)
# Seconds a client is asked to wait (Retry-After) while an analysis is queued or running.
ANALYSIS_RETRY_AFTER = env.int("ANALYSIS_RETRY_AFTER", default=3)
# A finished day's seeds, decks, pars and replays are published this long after the
# day ended on the database's clock (core.clock).
DAILY_REVEAL_GRACE_SECONDS = env.int("DAILY_REVEAL_GRACE_SECONDS", default=60)
# Where that clock is read: "database" (PostgreSQL's now(), one clock for all server
# processes; SQLite always uses the process clock) or "process" (this process's clock).
SHARED_CLOCK = env("SHARED_CLOCK", default="database")
if SHARED_CLOCK not in {"database", "process"}:
    raise ImproperlyConfigured("SHARED_CLOCK must be 'database' or 'process'")
if not DEBUG and DAILY_SECRET == DEV_DAILY_SECRET:
    raise ImproperlyConfigured("DAILY_SECRET must be set when DEBUG is False")

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])

# Request bodies are small JSON documents: a larger one is refused (413 in the API).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=64 * 1024)
# Frames a WebSocket may send: a burst of this many, refilled at this rate per second
# (a frame beyond is refused with the error "throttled"; see api.consumers).
WS_MESSAGE_BURST = env.int("WS_MESSAGE_BURST", default=200)
WS_MESSAGE_RATE = env.float("WS_MESSAGE_RATE", default=100.0)
# Log entries (moves and undos) a game may have: the entry that reaches it ends the game
# with the status "move_limit" (a ranked daily then counts as not won).
GAME_MAX_LOG = env.int("GAME_MAX_LOG", default=5000)
# Game sockets one player may hold open on one server process (more are closed with 4429).
WS_GAME_SOCKETS_PER_PLAYER = env.int("WS_GAME_SOCKETS_PER_PLAYER", default=20)

INSTALLED_APPS = [
    "daphne",
    "patience_site.apps.PatienceAdminConfig",  # django.contrib.admin, log-in limited
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc as static files: no CDN
    "channels",
    "accounts",
    "games",
    "api",
    "web",
]

MIDDLEWARE = [
    # First: the request id, the HTTP metrics and the log line see every answer, and
    # /metrics is answered before the host check (patience_site/observability.py).
    "patience_site.observability.ObservedMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "patience_site.middleware.DatabaseUnavailableMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "patience_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "patience_site.wsgi.application"
ASGI_APPLICATION = "patience_site.asgi.application"

# Database: DATABASE_URL, e.g. postgres://user:pass@host:5432/patience
DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default serves several writers (socket threads, a second server
    # process, the background jobs). A deferred transaction that turns into a write
    # fails at once with "database is locked" when another process writes; IMMEDIATE
    # takes the write lock at BEGIN, where SQLite waits up to ``timeout`` seconds for it.
    # WAL lets readers go on while one writes.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        transaction_mode="IMMEDIATE",
        timeout=20,
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    )
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # By default (CONN_MAX_AGE=0) the threads of a server process (gunicorn's
    # request threads, the sockets' worker threads) share psycopg's connection
    # pool, each handing its connection back after every request or socket call;
    # a positive CONN_MAX_AGE keeps one persistent connection per thread instead.
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)
    if DATABASES["default"]["CONN_MAX_AGE"] == 0:
        # No check on checkout: after each dead connection it finds, psycopg's pool
        # sleeps with backoff (1 s, 2 s, 4 s, ...) before the next, which stalled
        # requests for about 15 s after PostgreSQL terminated the backends
        # (bench/faults.py database). A dead connection fails its request instead
        # (503 unavailable; a read is tried once more) and the pool drops it.
        #
        # The pool's bound: a process never holds more than DB_POOL_MAX_SIZE connections,
        # which is its number of threads that can use one at once (gunicorn's --threads;
        # daphne's ASGI_THREADS plus Channels' one thread for thread-sensitive calls): a
        # thread beyond it waits for one to come back. Idle connections above
        # DB_POOL_MIN_SIZE are closed one every DB_POOL_MAX_IDLE seconds, so a pool that
        # grew under a burst shrinks back (docs/scaling.md, "Database connections").
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": env.int("DB_POOL_MIN_SIZE", default=2),
            "max_size": env.int("DB_POOL_MAX_SIZE", default=8),
            "max_idle": env.float("DB_POOL_MAX_IDLE", default=60.0),
        }
    else:
        # A persistent connection is checked before reuse after an error or a pause.
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Server-side binding with psycopg's prepared statements (Django's PostgreSQL notes):
    # a statement run PG_PREPARE_THRESHOLD times on a connection is prepared there, then
    # parsed and planned once per connection instead of on every run. The connections
    # live long (pooled), so the move's statement is prepared on each: about a quarter
    # less PostgreSQL CPU per move (bench/README.md). A pooler in transaction mode needs
    # prepared-statement support (pgbouncer >= 1.21, max_prepared_statements), or "off".
    _prepare = env("PG_PREPARE_THRESHOLD", default="5")
    if _prepare != "off":
        DATABASES["default"].setdefault("OPTIONS", {}).update(
            server_side_binding=True, prepare_threshold=int(_prepare)
        )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Channels: the fan-out layer (core/fanout.py): sockets' channels in their process, one
# Redis pub/sub subscription per group per process when REDIS_URL is set (otherwise
# in-process only: a single server). Events are notifications (clients resync by ply
# from the database), so at-most-once delivery is enough (docs/scaling.md).
REDIS_URL = env("REDIS_URL", default="")
# Redis is a helper (core.redis_guard): a call waits at most REDIS_TIMEOUT seconds, and
# after a failure Redis is left alone for REDIS_RETRY_AFTER seconds (fallbacks are used).
REDIS_TIMEOUT = env.float("REDIS_TIMEOUT", default=0.5)
REDIS_RETRY_AFTER = env.float("REDIS_RETRY_AFTER", default=5.0)
# Each process answers a REST request's token from its own memory, kept exact by a
# Redis subscription (accounts/token_cache.py); off, each look-up reads Redis.
TOKEN_PROCESS_CACHE = env.bool("TOKEN_PROCESS_CACHE", default=True)
# Redis keys of this deployment carry the database's name, so several databases
# (test runs, benchmarks, staging) can share one Redis without seeing each other.
REDIS_PREFIX = f"patience:{Path(str(DATABASES['default']['NAME'])).stem}"
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "core.fanout.FanoutChannelLayer",
            "CONFIG": {
                "url": REDIS_URL,
                # Short timeouts: a stalled Redis delays events, never the server's loop.
                "timeout": REDIS_TIMEOUT,
                "retry": REDIS_RETRY_AFTER,
                "prefix": f"{REDIS_PREFIX}:asgi",
            },
        }
    }
else:
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "core.fanout.FanoutChannelLayer", "CONFIG": {"url": None}}
    }

# Database sessions whose cookie keys are checked before the lookup (see accounts/sessions.py).
SESSION_ENGINE = "accounts.sessions"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Internationalisation
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
FORMAT_MODULE_PATH = ["web.formats"]  # one date style per language, as the scripts print
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True

# Static files (served by whitenoise)
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# Cache: shared by all server processes through Redis when REDIS_URL is set (rate limits).
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": REDIS_PREFIX,
            "OPTIONS": {"socket_timeout": REDIS_TIMEOUT, "socket_connect_timeout": REDIS_TIMEOUT},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "api.schema.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: unauthenticated requests then get 401 with WWW-Authenticate.
        "api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.negotiation.ContentNegotiation",
    "DEFAULT_PARSER_CLASSES": ["api.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
    "DEFAULT_METADATA_CLASS": "api.metadata.Metadata",  # OPTIONS: inputs are in the schema
    # Every unbounded list pages the same way (docs/api.md, "Every list pages the same way").
    "DEFAULT_PAGINATION_CLASS": "api.pagination.CursorPage",
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.RequestThrottle"],  # per account and per IP
    "DEFAULT_THROTTLE_RATES": {
        "user": env("THROTTLE_RATE_USER", default="1200/min"),
        "ip": env("THROTTLE_RATE_IP", default="3000/min"),
        "auth": env("THROTTLE_RATE_AUTH", default="30/min"),
    },
    "NUM_PROXIES": env.int("NUM_PROXIES", default=0),
}

SPECTACULAR_SETTINGS = {
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",  # the default, kept
        "api.schema.retry_after_headers",
    ],
    "TITLE": "Patience API",
    "DESCRIPTION": "Bristol and Picture Gallery patience with daily challenges, "
    "server-validated moves and leaderboards. The WebSockets (`/ws/v1/`) are described "
    "in the AsyncAPI document [/api/v1/asyncapi/](/api/v1/asyncapi/).",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The docs pages load their scripts from this server (drf-spectacular-sidecar), pinned
    # by that package's version, so they work offline and change only with an upgrade.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Races' choice sets share field names (kind, status) with the games': named apart.
    "ENUM_NAME_OVERRIDES": {
        "KindEnum": "games.models.Deal.Kind",
        "StatusEnum": "api.serializers.GAME_STATUSES",
        "RaceKindEnum": "games.models.Race.Kind",
        "RaceStatusEnum": "games.models.Race.Status",
        "RaceProgressStatusEnum": ["waiting", "playing", "won", "lost", "resigned", "expired"],
    },
}

# Metrics (core.metrics): GET /metrics answers a bearer of this token; empty: no endpoint
# (404). Under gunicorn, PROMETHEUS_MULTIPROC_DIR (read by prometheus-client) adds up the
# workers' values (patience_site/gunicorn.py).
METRICS_TOKEN = env("METRICS_TOKEN", default="")

# Logs: "json" (one JSON object a line: the request and socket lines, with their fields and
# request id, for a log collector) or "text" (for people, the default).
LOG_FORMAT = env("LOG_FORMAT", default="text")
if LOG_FORMAT not in {"json", "text"}:
    raise ImproperlyConfigured("LOG_FORMAT must be 'json' or 'text'")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.tracing.RequestIdFilter"}},
    # Every field written with its control characters escaped: a client's %0A in a path
    # cannot start a line of its own (patience_site/logformat.py).
    "formatters": {
        "text": {
            "class": "patience_site.logformat.TextFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s",
        },
        "json": {
            "()": "patience_site.logformat.JsonFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        },
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# Production security (DEBUG=False); `manage.py check --deploy` should pass.
if not DEBUG:
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    # Probes come over plain HTTP from inside the cluster, not through the proxy (/metrics
    # is answered before this middleware: patience_site/observability.py).
    SECURE_REDIRECT_EXEMPT = [r"^api/v1/health/"]
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
    X_FRAME_OPTIONS = "DENY"
    CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
