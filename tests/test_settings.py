"""Settings come from the environment with working development defaults."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

PROBE = (
    "import json, django; from django.conf import settings; django.setup(); "
    "print(json.dumps({'engine': settings.DATABASES['default']['ENGINE'], "
    "'name': str(settings.DATABASES['default']['NAME']), "
    "'layer': settings.CHANNEL_LAYERS['default']['BACKEND'], "
    "'layer_url': settings.CHANNEL_LAYERS['default'].get('CONFIG', {}).get('url'), "
    "'debug': settings.DEBUG}))"
)

VARS = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "DAILY_SECRET")


def _settings(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in VARS}
    env["DJANGO_SETTINGS_MODULE"] = "patience_site.settings"
    env.update(extra)
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_default_database_is_sqlite() -> None:
    s = _settings()
    assert s["engine"] == "django.db.backends.sqlite3"
    assert s["name"] == str(REPO_ROOT / "db.sqlite3")
    assert s["debug"] is True


def test_database_url_selects_postgres() -> None:
    s = _settings(DATABASE_URL="postgres://u:p@db.example:5432/patience")
    assert s["engine"] == "django.db.backends.postgresql"


def test_redis_url_selects_redis_for_the_fan_out_layer() -> None:
    s = _settings(REDIS_URL="redis://127.0.0.1:6379/0")
    assert s["layer"] == "core.fanout.FanoutChannelLayer"
    assert s["layer_url"] == "redis://127.0.0.1:6379/0"


def test_no_redis_url_keeps_the_fan_out_layer_in_process() -> None:
    s = _settings()
    assert s["layer"] == "core.fanout.FanoutChannelLayer"
    assert s["layer_url"] is None


def test_production_requires_secret_key() -> None:
    env = {k: v for k, v in os.environ.items() if k not in VARS}
    env.update(DJANGO_SETTINGS_MODULE="patience_site.settings", DEBUG="False")
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode != 0
    assert "SECRET_KEY" in out.stderr


def test_production_deploy_check_passes() -> None:
    env = {k: v for k, v in os.environ.items() if k not in VARS}
    env.update(
        DJANGO_SETTINGS_MODULE="patience_site.settings",
        DEBUG="False",
        SECRET_KEY="x" * 30 + "-prod-like-secret-key-for-the-deploy-check-only",
        DAILY_SECRET="prod-daily-secret",
        ALLOWED_HOSTS="patience.example",
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


LOG_PROBE = (
    "import django, logging; django.setup(); "
    "logging.getLogger('patience.request').info('GET / 200', extra={'status': 200})"
)


def _log_line(log_format: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in VARS}
    env.update(DJANGO_SETTINGS_MODULE="patience_site.settings", LOG_FORMAT=log_format)
    return subprocess.run(
        [sys.executable, "-c", LOG_PROBE], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )


def test_json_logs_are_one_object_a_line() -> None:
    line = json.loads(_log_line("json").stderr.strip().splitlines()[-1])
    assert line["level"] == "INFO" and line["logger"] == "patience.request"
    assert line["message"] == "GET / 200" and line["status"] == 200
    assert "request_id" in line and "time" in line


def test_text_logs_are_for_people_and_other_formats_refused() -> None:
    assert _log_line("text").stderr.strip().endswith("patience.request [None]: GET / 200")
    refused = _log_line("xml")
    assert refused.returncode != 0 and "LOG_FORMAT" in refused.stderr
