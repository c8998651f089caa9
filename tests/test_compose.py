"""docker-compose.yml must wire up the services and pass every setting the app reads."""

import ast
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
REQUIRED_ENV = {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "DAILY_SECRET"}
# Tuning knobs read by settings.py that have safe defaults and need not be set in compose.
OPTIONAL_ENV = {
    "CONN_MAX_AGE",
    "LOG_LEVEL",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_PRELOAD",
    "CSRF_TRUSTED_ORIGINS",
    "THROTTLE_RATE_USER",
    "THROTTLE_RATE_IP",
    "THROTTLE_RATE_AUTH",
    "NUM_PROXIES",
}


def _compose() -> dict:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())


def _env_names(service: dict) -> set[str]:
    environment = service.get("environment", {})
    if isinstance(environment, dict):
        return set(environment)
    return {item.split("=", 1)[0] for item in environment}


def _settings_env_names() -> set[str]:
    """Names passed as first argument to env(...), env.bool(...), env.db(...) etc."""
    tree = ast.parse((REPO_ROOT / "patience_site" / "settings.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        is_env_call = (isinstance(func, ast.Name) and func.id == "env") or (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "env"
        )
        first = node.args[0]
        if is_env_call and isinstance(first, ast.Constant) and isinstance(first.value, str):
            names.add(first.value)
    return names


def test_services_exist():
    services = _compose()["services"]
    assert {"postgres", "redis", "web"} <= set(services)


def test_web_depends_on_healthy_postgres_and_redis():
    depends = _compose()["services"]["web"]["depends_on"]
    assert {"postgres", "redis"} <= set(depends)
    if isinstance(depends, dict):
        for name in ("postgres", "redis"):
            assert depends[name]["condition"] == "service_healthy"


def test_web_environment_names_required_settings():
    assert _env_names(_compose()["services"]["web"]) >= REQUIRED_ENV


def test_required_env_matches_settings():
    read = _settings_env_names()
    assert read >= REQUIRED_ENV, f"settings.py does not read {REQUIRED_ENV - read}"
    unexpected = read - REQUIRED_ENV - OPTIONAL_ENV
    assert not unexpected, f"settings.py reads {unexpected}: add them to compose and this test"
