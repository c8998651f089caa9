"""deploy/prometheus checked by Prometheus's own promtool (CI installs Debian's
``prometheus``): the alert rules and the compose stack's config load, and the 5xx,
process-down and race-pool alerts fire when docs/operations.md says they do."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
PROMETHEUS = REPO_ROOT / "deploy" / "prometheus"
PROMTOOL = shutil.which("promtool")

pytestmark = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool is not installed (apt-get install prometheus)"
)


def promtool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """promtool's answer; the test fails with its output when it refuses."""
    assert PROMTOOL is not None
    done = subprocess.run(
        [PROMTOOL, *map(str, args)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _compose_mounts() -> dict[str, str]:
    """What compose's prometheus service finds at each path: a file of the repository,
    or the name of a compose config."""
    compose = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
    service = compose["services"]["prometheus"]
    mounts = {}
    for volume in service["volumes"]:
        source, target = volume.split(":")[:2]
        mounts[target] = source
    for config in service["configs"]:
        mounts[config["target"]] = config["source"]
    return mounts


def _files_named(config: dict[str, Any]) -> list[str]:
    """Every file the config reads: rule files and scrape credentials."""
    files = list(config["rule_files"])
    for job in config["scrape_configs"]:
        files.append(job["authorization"]["credentials_file"])
    return files


def test_the_alert_rules_load() -> None:
    rules = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())["groups"][0]["rules"]
    done = promtool("check", "rules", PROMETHEUS / "alerts.yml")
    assert f"SUCCESS: {len(rules)} rules found" in done.stdout


def test_the_compose_config_loads_with_the_files_compose_mounts(tmp_path: Path) -> None:
    """The config names its files at their paths inside compose's container: each must be
    one compose mounts there; promtool then reads a copy pointing at local copies."""
    config_path = "/etc/prometheus/prometheus.yml"
    mounts = _compose_mounts()
    assert mounts[config_path] == "./deploy/prometheus/prometheus.yml"
    text = (PROMETHEUS / "prometheus.yml").read_text()
    for name in _files_named(yaml.safe_load(text)):
        assert name in mounts, f"{name} is not mounted in compose's prometheus service"
        local = tmp_path / Path(name).name
        source = mounts[name]
        if source.startswith("./"):
            shutil.copy(REPO_ROOT / source, local)
        else:  # a compose config: the metrics token
            local.write_text("a-metrics-token")
        text = text.replace(name, str(local))
    (tmp_path / "prometheus.yml").write_text(text)
    done = promtool("check", "config", tmp_path / "prometheus.yml")
    assert "is valid prometheus config file syntax" in done.stdout


def _series(name: str, values: str, **labels: str) -> dict[str, str]:
    matchers = ",".join(f'{key}="{value}"' for key, value in labels.items())
    return {"series": f"{name}{{{matchers}}}", "values": values}


def _annotations(alert: str, labels: dict[str, str]) -> dict[str, str]:
    """The rule's annotations as Prometheus renders them for an alert of these labels."""
    groups = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())["groups"]
    (rule,) = [r for g in groups for r in g["rules"] if r.get("alert") == alert]
    rendered = {}
    for key, template in rule["annotations"].items():
        for name, value in labels.items():
            template = template.replace(f"{{{{ $labels.{name} }}}}", value)
        rendered[key] = template
    return rendered


def _alert_test(
    series: list[dict[str, str]], at: str, alert: str, firing: list[dict[str, str]]
) -> dict[str, Any]:
    """One ``promtool test rules`` case: given the series, ``alert`` fires at ``at`` with
    exactly ``firing``'s labels (none: it does not fire)."""
    expected = [
        {"exp_labels": labels, "exp_annotations": _annotations(alert, labels)} for labels in firing
    ]
    return {
        "interval": "1m",
        "input_series": series,
        "alert_rule_test": [{"eval_time": at, "alertname": alert, "exp_alerts": expected}],
    }


def _responses(
    per_minute_5xx: int, per_minute_2xx: int, route: str = "api/v1/games/"
) -> list[dict[str, str]]:
    """HTTP answers of one route, counted at a steady pace for 20 minutes."""
    return [
        _series("patience_http_responses_total", f"0+{pace}x20", status=status, route=route)
        for status, pace in (("5xx", per_minute_5xx), ("2xx", per_minute_2xx))
    ]


def test_the_alerts_fire_as_documented(tmp_path: Path) -> None:
    """docs/operations.md's table, played on made-up series: 2% of 5xx pages after five
    minutes, 0.5% never does, nor a hint flood shed with 503s; a server down pages after a
    minute; an empty race pool names its variant."""
    page = {"severity": "page"}
    ticket = {"severity": "ticket"}
    down = _series("up", "1 0 0 0", job="patience-http", instance="http-1:8000")
    up = _series("up", "1 1 1 1", job="patience-ws", instance="ws-1:8000")
    race_pool = [
        _series("patience_race_pool_deals", "3 0 0 0 0 0 0 0", variant="bristol", instance="a"),
        _series("patience_race_pool_deals", "3 3 3 3 3 3 3 3", variant="belvedere", instance="a"),
    ]
    tests = [
        _alert_test(_responses(2, 98), "4m", "PatienceHigh5xxRate", []),
        _alert_test(_responses(2, 98), "7m", "PatienceHigh5xxRate", [page]),
        _alert_test(_responses(1, 199), "20m", "PatienceHigh5xxRate", []),
        _alert_test(  # a hint flood shed with 503 hint_busy beside healthy moves: no page
            _responses(900, 100, route="api/v1/games/<int:game_id>/hint/") + _responses(0, 100),
            "10m",
            "PatienceHigh5xxRate",
            [],
        ),
        _alert_test([down, up], "1m", "PatienceProcessDown", []),
        _alert_test(
            [down, up],
            "3m",
            "PatienceProcessDown",
            [{**page, "job": "patience-http", "instance": "http-1:8000"}],
        ),
        _alert_test(race_pool, "7m", "PatienceRacePoolEmpty", [{**ticket, "variant": "bristol"}]),
    ]
    shutil.copy(PROMETHEUS / "alerts.yml", tmp_path / "alerts.yml")
    suite = {"rule_files": ["alerts.yml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "alerts_test.yml").write_text(yaml.safe_dump(suite))
    promtool("test", "rules", tmp_path / "alerts_test.yml")
