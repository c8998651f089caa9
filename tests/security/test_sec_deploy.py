"""Production settings: ``manage.py check --deploy`` is silent, and the limits are in place.

Each check runs the settings in a fresh process with a production-like
environment (DEBUG=False, long random secrets, real host names, PostgreSQL and
Redis URLs; nothing connects), as the server would start.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VARS = (
    "DATABASE_URL",
    "REDIS_URL",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "DAILY_SECRET",
    "CSRF_TRUSTED_ORIGINS",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_PRELOAD",
    "NUM_PROXIES",
    "DATA_UPLOAD_MAX_MEMORY_SIZE",
    "WS_MESSAGE_BURST",
    "WS_MESSAGE_RATE",
)


def production_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in VARS}
    env.update(
        DJANGO_SETTINGS_MODULE="patience_site.settings",
        DEBUG="False",
        SECRET_KEY=secrets.token_urlsafe(50),
        DAILY_SECRET=secrets.token_hex(32),
        ALLOWED_HOSTS="patience.example,www.patience.example",
        CSRF_TRUSTED_ORIGINS="https://patience.example,https://www.patience.example",
        DATABASE_URL="postgres://patience:secret@db.internal:5432/patience",
        REDIS_URL="redis://redis.internal:6379/0",
    )
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_reports_nothing_at_all() -> None:
    out = run(["manage.py", "check", "--deploy", "--fail-level", "DEBUG"], production_env())
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "System check identified no issues (0 silenced)." in out.stdout, text
    assert not re.search(r"\b[A-Za-z_.]+\.[WEI]\d{3}\b", text), text  # no W0xx, E0xx, I0xx
    assert "WARNINGS" not in text and "ERRORS" not in text


PROBE = """
import json, django
from django.conf import settings as s
django.setup()
print(json.dumps({
    "debug": s.DEBUG,
    "ssl_redirect": s.SECURE_SSL_REDIRECT,
    "hsts": s.SECURE_HSTS_SECONDS,
    "hsts_sub": s.SECURE_HSTS_INCLUDE_SUBDOMAINS,
    "session_secure": s.SESSION_COOKIE_SECURE,
    "session_httponly": s.SESSION_COOKIE_HTTPONLY,
    "csrf_secure": s.CSRF_COOKIE_SECURE,
    "frames": s.X_FRAME_OPTIONS,
    "nosniff": s.SECURE_CONTENT_TYPE_NOSNIFF,
    "silenced": s.SILENCED_SYSTEM_CHECKS,
    "body": s.DATA_UPLOAD_MAX_MEMORY_SIZE,
    "ws": [s.WS_MESSAGE_BURST, s.WS_MESSAGE_RATE],
    "proxies": s.REST_FRAMEWORK["NUM_PROXIES"],
    "renderers": s.REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"],
    "hashers": s.PASSWORD_HASHERS[0],
}))
"""


def test_production_settings_are_the_secure_ones() -> None:
    out = run(["-c", PROBE], production_env())
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout.strip().splitlines()[-1])
    assert s["debug"] is False
    assert s["ssl_redirect"] is True and s["hsts"] >= 31536000 and s["hsts_sub"] is True
    assert s["session_secure"] and s["session_httponly"] and s["csrf_secure"]
    assert s["frames"] == "DENY" and s["nosniff"] is True
    assert s["silenced"] == []
    assert s["body"] == 64 * 1024
    assert s["ws"] == [200, 100.0]
    assert s["proxies"] == 0  # X-Forwarded-For is ignored unless a proxy is declared
    assert s["renderers"] == ["rest_framework.renderers.JSONRenderer"]  # no browsable API
    assert "PBKDF2" in s["hashers"] or "Argon2" in s["hashers"] or "Scrypt" in s["hashers"]


@pytest.mark.parametrize("missing", ["SECRET_KEY", "DAILY_SECRET"])
def test_production_refuses_to_start_on_a_development_secret(missing: str) -> None:
    env = production_env()
    del env[missing]
    out = run(["-c", PROBE], env)
    assert out.returncode != 0
    assert missing in out.stderr


def test_the_compose_stack_runs_with_debug_off() -> None:
    compose = (REPO / "docker-compose.yml").read_text()
    assert re.search(r"DEBUG: (False|\$\{DEBUG:-False\})\n", compose), "compose: DEBUG=False"


def test_the_servers_keep_daphnes_websocket_frame_limit() -> None:
    """daphne closes a socket with 1009 on a message over 1 MiB (its default); no server
    command of the project lifts that limit (0 would let one frame fill the memory)."""
    from daphne.cli import CommandLineInterface

    args = CommandLineInterface().parser.parse_args(["patience_site.asgi:application"])
    assert args.websocket_max_message_size == args.websocket_max_frame_size == 1024 * 1024
    for path in ("Dockerfile", "docker-compose.yml", "scripts/serve.sh"):
        text = (REPO / path).read_text()
        assert "daphne" in text, path
        assert "websocket-max" not in text and "websocket_max" not in text, path
