"""docker-compose.yml must wire up the services and pass every setting the app reads."""

import ast
import re
from pathlib import Path

import yaml

from tests import db_budget

REPO_ROOT = Path(__file__).resolve().parent.parent
REQUIRED_ENV = {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "DAILY_SECRET"}
# Tuning knobs read by settings.py that have safe defaults and need not be set in compose.
OPTIONAL_ENV = {
    "CONN_MAX_AGE",
    "PG_PREPARE_THRESHOLD",
    "DAILY_FIRST_DAY",
    "GAME_MAX_LOG",
    "REDIS_TIMEOUT",
    "REDIS_RETRY_AFTER",
    "TOKEN_PROCESS_CACHE",
    "LOG_LEVEL",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_PRELOAD",
    "CSRF_TRUSTED_ORIGINS",
    "THROTTLE_RATE_USER",
    "THROTTLE_RATE_IP",
    "THROTTLE_RATE_AUTH",
    "NUM_PROXIES",
    "DAILY_SOLVER_NODES",
    "DAILY_MAX_CANDIDATES",
    "RACE_POOL_SIZE",
    "RACE_SOLVER_NODES",
    "GUEST_GAMES_PER_HOUR",
    "GUEST_KEEP_DAYS",
    "ANALYSIS_FIRST_NODES",
    "ANALYSIS_MAX_NODES",
    "ANALYSIS_GAME_NODES",
    "ANALYSIS_GAME_SECONDS",
    "ANALYSIS_WORKERS",
    "ANALYSIS_STALE_SECONDS",
    "ANALYSIS_RETRY_AFTER",
    "HINT_SOLVER_NODES",
    "HINT_SOLVER_SECONDS",
    "HINT_WORKERS",
    "HINT_WORKER_NICE",
    "HINT_QUEUE",
    "HINT_RATE",
    "HINT_DEADLINE_SECONDS",
    "HINT_PLAYER_INTERVAL_SECONDS",
    "HINT_CACHE_SECONDS",
    "HINT_UNKNOWN_CACHE_SECONDS",
    "DAILY_REVEAL_GRACE_SECONDS",
    "SHARED_CLOCK",
    "DATA_UPLOAD_MAX_MEMORY_SIZE",
    "WS_MESSAGE_BURST",
    "WS_MESSAGE_RATE",
    "WS_GAME_SOCKETS_PER_PLAYER",
    "METRICS_TOKEN",
    "LOG_FORMAT",
    "DB_POOL_MIN_SIZE",
    "DB_POOL_MAX_SIZE",
    "DB_POOL_MAX_IDLE",
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


SERVERS = ("http", "ws")


def test_services_exist() -> None:
    services = _compose()["services"]
    assert {"postgres", "redis", "http", "ws", "proxy", "migrate", "dailies"} <= set(services)
    assert "web" not in services


def test_servers_depend_on_healthy_postgres_and_redis() -> None:
    for name in SERVERS:
        depends = _compose()["services"][name]["depends_on"]
        assert {"postgres", "redis"} <= set(depends)
        for dep in ("postgres", "redis"):
            assert depends[dep]["condition"] == "service_healthy"


def test_dailies_are_dealt_ahead_every_hour_after_the_migration() -> None:
    dailies = _compose()["services"]["dailies"]
    command = " ".join(dailies["command"])
    assert "create_dailies --days 2" in command and "sleep 3600" in command
    assert "manage.py guests_purge" in command  # guest accounts do not pile up
    assert dailies["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert _env_names(dailies) >= REQUIRED_ENV
    assert dailies["restart"] == "unless-stopped"


def test_server_environments_name_required_settings() -> None:
    for name in SERVERS:
        assert _env_names(_compose()["services"][name]) >= REQUIRED_ENV


def test_required_env_matches_settings() -> None:
    read = _settings_env_names()
    assert read >= REQUIRED_ENV, f"settings.py does not read {REQUIRED_ENV - read}"
    unexpected = read - REQUIRED_ENV - OPTIONAL_ENV
    assert not unexpected, f"settings.py reads {unexpected}: add them to compose and this test"


def test_database_connections_fit_postgres_with_a_reserve() -> None:
    services = _compose()["services"]
    assert _command(services["postgres"]).endswith(
        f"-c max_connections={db_budget.MAX_CONNECTIONS}"
    )
    budget = {
        name: _replicas(service) * db_budget.connections(_command(service), service["environment"])
        for name, service in services.items()
        if "DATABASE_URL" in service.get("environment", {})
    }
    assert {"http", "ws", "migrate", "dailies", "races", "backup"} <= set(budget)
    assert sum(budget.values()) <= db_budget.MAX_CONNECTIONS - db_budget.RESERVE, budget


# -- several web replicas behind one entry point -----------------------------------------

NGINX_CONF = REPO_ROOT / "deploy" / "nginx.conf"


def _proxy() -> dict:
    services = _compose()["services"]
    assert "proxy" in services, "an entry point (nginx) must sit in front of the web replicas"
    return services["proxy"]


def _nginx_conf() -> str:
    lines = NGINX_CONF.read_text().splitlines()
    return "\n".join(line.split("#", 1)[0] for line in lines)


def _command(service: dict) -> str:
    command = service.get("command")
    return " ".join(command) if isinstance(command, list) else command or ""


def _replicas(service: dict) -> int:
    return service.get("deploy", {}).get("replicas", service.get("scale", 1))


def test_http_runs_gunicorn_threaded_replicas_with_the_wsgi_handler() -> None:
    http = _compose()["services"]["http"]
    assert _replicas(http) > 1
    command = _command(http)
    assert command.startswith("gunicorn ") and "patience_site.wsgi:application" in command
    assert "--worker-class gthread" in command and "--threads" in command


def test_ws_runs_daphne_replicas_with_channels() -> None:
    ws = _compose()["services"]["ws"]
    assert _replicas(ws) > 1
    command = _command(ws)
    assert command.startswith("daphne ") and "patience_site.asgi:application" in command
    assert "--proxy-headers" in command


def test_replicas_publish_no_host_port_and_share_redis() -> None:
    for name in SERVERS:
        service = _compose()["services"][name]
        # Several replicas cannot all bind one host port: only the proxy publishes one.
        assert not service.get("ports")
        env = service["environment"]
        assert env["REDIS_URL"].startswith("redis://redis:")
        assert env["DATABASE_URL"].startswith("postgres://")
        assert env["NUM_PROXIES"] == "1"


def test_proxy_is_the_one_entry_point() -> None:
    proxy = _proxy()
    assert proxy["image"].startswith("nginx")
    assert any(str(p).endswith(":80") for p in proxy["ports"])
    assert set(SERVERS) <= set(proxy["depends_on"])
    mounts = [str(v) for v in proxy["volumes"]]
    assert any(m.startswith("./deploy/nginx.conf:") for m in mounts)
    assert NGINX_CONF.is_file()
    services = _compose()["services"]
    published = [s for s, conf in services.items() if conf.get("ports")]
    # Besides the proxy, only the monitoring profile's Grafana, on the host's loopback.
    assert published == ["proxy", "grafana"]
    assert all(str(p).startswith("127.0.0.1:") for p in services["grafana"]["ports"])


def test_nginx_routes_ws_to_daphne_and_the_rest_to_gunicorn_by_docker_dns() -> None:
    conf = _nginx_conf()
    assert "resolver 127.0.0.11" in conf
    assert "server http:8000 resolve;" in conf and "server ws:8000 resolve;" in conf
    ws = conf.split("location /ws/", 1)[1].split("}", 1)[0]
    rest = conf.split("location / ", 1)[1].split("}", 1)[0]
    assert "proxy_pass http://patience_ws;" in ws
    assert "proxy_pass http://patience_http;" in rest


def test_nginx_drops_idle_upstream_connections_before_gunicorn_does() -> None:
    """Else a request can go out on a connection gunicorn is closing: 502 for a POST."""
    conf = _nginx_conf()
    upstream = conf[conf.index("upstream patience_http") :].split("}", 1)[0]
    nginx_idle = re.search(r"keepalive_timeout (\d+)s;", upstream)
    assert nginx_idle is not None, "the upstream keeps idle connections for nginx's 60 s"
    command = _command(_compose()["services"]["http"]).split()
    gunicorn_idle = (
        int(command[command.index("--keep-alive") + 1]) if "--keep-alive" in command else 2
    )
    assert int(nginx_idle.group(1)) < gunicorn_idle


def test_nginx_passes_websocket_upgrades() -> None:
    conf = _nginx_conf()
    assert "proxy_http_version 1.1;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert "proxy_set_header Connection $connection_upgrade;" in conf
    assert "map $http_upgrade $connection_upgrade" in conf
    ws = conf.split("location /ws/", 1)[1].split("}", 1)[0]
    assert "Upgrade" in ws and "proxy_read_timeout" in ws


def test_every_nginx_location_forwards_host_and_client_address() -> None:
    """A location that sets any proxy header inherits none: each must set them all."""
    conf = _nginx_conf()
    locations = conf.split("location ")[1:]
    assert len(locations) >= 2
    for block in locations:
        block = block.split("}", 1)[0]
        assert "proxy_set_header Host $http_host;" in block, block
        assert "X-Forwarded-For $proxy_add_x_forwarded_for" in block, block


def _directive(conf: str, name: str) -> str:
    found = re.findall(rf"^\s*{name}\s+([^;]+);", conf, flags=re.M)
    assert found, f"nginx.conf sets no {name}"
    return found[0].strip()


def _seconds(value: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(ms|s|m)?", value).groups()  # type: ignore[union-attr]
    return int(number) * {"ms": 0.001, "s": 1, "m": 60, None: 1}[unit]


def test_nginx_cuts_off_slow_clients_before_gunicorn_sees_them() -> None:
    """gunicorn's threads would each wait on one slow sender (bench/slowloris.py): nginx
    must time out slow headers and bodies, cap bodies and connections per address."""
    conf = _nginx_conf()
    assert _seconds(_directive(conf, "client_header_timeout")) <= 15
    assert _seconds(_directive(conf, "client_body_timeout")) <= 15
    assert _seconds(_directive(conf, "send_timeout")) <= 60
    assert "off" not in _directive(conf, "limit_conn per_address")
    assert re.search(r"limit_conn_zone \$binary_remote_addr zone=per_address:", conf)
    assert "proxy_request_buffering off" not in conf  # whole requests reach gunicorn
    size = _directive(conf, "client_max_body_size")
    assert size.endswith("k") and int(size[:-1]) * 1024 >= 64 * 1024  # above the API's limit


# -- health -----------------------------------------------------------------------------


def test_servers_are_healthy_when_ready_and_restarted_when_dead() -> None:
    """The healthcheck asks readiness (the proxy waits for it) through the probe module
    (no curl in the image); a dead server's container exits and is restarted."""
    for name in SERVERS:
        service = _compose()["services"][name]
        assert service["healthcheck"]["test"] == [
            "CMD",
            "python",
            "-m",
            "patience_site.probe",
            "ready",
        ]
        assert service["restart"] == "unless-stopped"
    proxy_waits = _proxy()["depends_on"]
    assert all(proxy_waits[name]["condition"] == "service_healthy" for name in SERVERS)


def test_probe_paths_exist() -> None:
    from django.urls import resolve

    from patience_site.probe import KINDS

    for kind in KINDS:
        assert resolve(f"/api/v1/health/{kind}/").url_name == f"health-{kind}"


# -- monitoring ---------------------------------------------------------------------------


def test_monitoring_runs_behind_a_profile_with_its_files() -> None:
    services = _compose()["services"]
    for name in ("prometheus", "grafana"):
        assert services[name]["profiles"] == ["monitoring"]
        for volume in services[name]["volumes"]:
            source = str(volume).split(":", 1)[0]
            if source.startswith("./"):
                assert (REPO_ROOT / source).exists(), source


def test_prometheus_scrapes_every_server_with_the_metrics_token() -> None:
    compose = _compose()
    prometheus = compose["services"]["prometheus"]
    config = yaml.safe_load((REPO_ROOT / "deploy/prometheus/prometheus.yml").read_text())
    token_file = "/etc/prometheus/metrics_token"
    assert {"source": "metrics_token", "target": token_file} in prometheus["configs"]
    # The file holds the same token (and default) as the servers' METRICS_TOKEN.
    server_token = compose["services"]["http"]["environment"]["METRICS_TOKEN"]
    assert compose["configs"]["metrics_token"]["content"] == server_token
    scraped = set()
    for job in config["scrape_configs"]:
        assert job["metrics_path"] == "/metrics"
        assert job["authorization"]["credentials_file"] == token_file
        for sd in job["dns_sd_configs"]:
            assert sd["port"] == 8000
            scraped.update(sd["names"])
    assert scraped == set(SERVERS)
    assert config["rule_files"] == ["/etc/prometheus/alerts.yml"]


def test_gunicorn_adds_up_its_workers_metrics() -> None:
    http = _compose()["services"]["http"]
    assert "--config python:patience_site.gunicorn" in _command(http)
    assert http["environment"]["PROMETHEUS_MULTIPROC_DIR"]


# -- backups ------------------------------------------------------------------------------


def test_backups_dump_the_database_with_retention() -> None:
    compose = _compose()
    backup = compose["services"]["backup"]
    assert backup["image"] == compose["services"]["postgres"]["image"]  # pg_dump of its version
    mounts = {str(v).split(":")[0]: str(v).split(":")[1] for v in backup["volumes"]}
    assert mounts["./deploy/backup.sh"] == "/usr/local/bin/patience-backup.sh"
    assert mounts["backups"] == "/backups" and "backups" in compose["volumes"]
    assert _command(backup) == "sh /usr/local/bin/patience-backup.sh"
    env = backup["environment"]
    assert env["DATABASE_URL"] == compose["services"]["http"]["environment"]["DATABASE_URL"]
    script = (REPO_ROOT / "deploy/backup.sh").read_text()
    for name in ("BACKUP_DIR", "BACKUP_KEEP", "BACKUP_KEEP_DAYS", "BACKUP_INTERVAL_SECONDS"):
        assert name in env and "${" + name in script
    assert "pg_dump --format=custom" in script
    assert backup["restart"] == "unless-stopped"
