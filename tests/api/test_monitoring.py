"""deploy/prometheus and deploy/grafana: the alert rules and the dashboard parse, and every
metric they name is one a scrape of /metrics exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from django.test import Client
from pytest_django import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
ALERTS = REPO_ROOT / "deploy/prometheus/alerts.yml"
DASHBOARD = REPO_ROOT / "deploy/grafana/patience.json"
TOKEN = "monitoring-test-token"

#: Series Prometheus makes itself, not the service.
PROMETHEUS_OWN = {"up"}
#: The alerts the operator was promised (docs/operations.md).
PROMISED = {
    "PatienceProcessDown",
    "PatienceDailyNotDealt",
    "PatienceHigh5xxRate",
    "PatienceRedisBreakerOpen",
    "PatienceHintPoolBroken",
    "PatienceRacePoolEmpty",
}
_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and"}
_KEYWORDS |= {"or", "unless", "offset"}


def metric_names(expr: str) -> set[str]:
    """The series a PromQL expression reads: its names, without label matchers, ranges,
    grouping labels, functions, keywords and numbers."""
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\"[^\"]*\"", " ", expr)
    expr = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", " ", expr)
    names = set(re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", expr))
    return {n for n in names if n not in _KEYWORDS and not re.fullmatch(r"\d+\w*", n)}


@pytest.fixture
def exported(client: Client, settings: Settings) -> set[str]:
    """The names of every sample series a live scrape of /metrics can carry."""
    settings.METRICS_TOKEN = TOKEN
    scrape = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert scrape.status_code == 200
    names = set()
    for line in scrape.content.decode().splitlines():
        if found := re.fullmatch(r"# TYPE (\S+) (\w+)", line):
            name, kind = found.groups()
            suffixes = {"histogram": ("_bucket", "_count", "_sum"), "counter": ("", "_total")}
            names |= {name.removesuffix("_total") + s for s in suffixes.get(kind, ("",))}
    return names


def _alert_rules() -> list[dict]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def _dashboard_exprs() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel["targets"]]


def test_metric_names_are_read_from_promql() -> None:
    expr = 'sum by (route) (rate(patience_x_total{status="5xx"}[5m])) / up > 0.01'
    assert metric_names(expr) == {"patience_x_total", "up"}


def test_the_promised_alerts_are_there() -> None:
    rules = _alert_rules()
    assert {rule["alert"] for rule in rules} >= PROMISED
    assert all(rule["expr"].strip() and rule["annotations"]["summary"] for rule in rules)


@pytest.mark.django_db
def test_every_alert_names_an_exported_metric(exported: set[str]) -> None:
    for rule in _alert_rules():
        names = metric_names(rule["expr"])
        assert names, rule["alert"]
        assert names <= exported | PROMETHEUS_OWN, (rule["alert"], names - exported)


@pytest.mark.django_db
def test_every_dashboard_panel_names_an_exported_metric(exported: set[str]) -> None:
    exprs = _dashboard_exprs()
    assert len(exprs) >= 10
    for expr in exprs:
        names = metric_names(expr)
        assert names and names <= exported | PROMETHEUS_OWN, (expr, names - exported)


def test_the_dashboard_shows_what_the_issue_asks() -> None:
    text = " ".join(_dashboard_exprs())
    for metric in (
        "patience_moves_total",
        "patience_move_seconds_bucket",
        "patience_open_sockets",
        "patience_hint_workers",
        "patience_redis_breaker_open",
        "patience_db_pool_connections",
        "patience_race_pool_deals",
        "patience_daily_last_dealt_timestamp_seconds",
        "patience_http_responses_total",
    ):
        assert metric in text, metric


def test_grafana_provisions_the_dashboard_from_prometheus() -> None:
    provisioning = REPO_ROOT / "deploy/grafana/provisioning"
    sources = yaml.safe_load((provisioning / "datasources/prometheus.yml").read_text())
    (source,) = sources["datasources"]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090"
    panels = json.loads(DASHBOARD.read_text())["panels"]
    assert {p["datasource"]["uid"] for p in panels} == {source["uid"]}
    providers = yaml.safe_load((provisioning / "dashboards/patience.yml").read_text())
    assert providers["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"
