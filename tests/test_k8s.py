"""deploy/k8s (kustomize) describes the compose layout on Kubernetes, checked statically:
every manifest is valid for Kubernetes (kubernetes-validate's schemas, offline), its
probes ask paths the URLconf serves, and its images, commands and settings agree with
docker-compose.yml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from django.urls import resolve

from tests import db_budget

REPO_ROOT = Path(__file__).resolve().parent.parent
K8S = REPO_ROOT / "deploy" / "k8s"
KUBERNETES = "1.33"  # a version whose schemas kubernetes-validate ships
IMAGE = "patience"
#: What compose's servers and jobs get that a pod must get too (ConfigMap or Secret).
SETTINGS = {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "DAILY_SECRET"}
SETTINGS |= {"METRICS_TOKEN", "LOG_FORMAT", "NUM_PROXIES"}


def _kustomization() -> dict[str, Any]:
    return yaml.safe_load((K8S / "kustomization.yaml").read_text())


def _documents(name: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((K8S / name).read_text()) if doc]


def _resources() -> list[dict[str, Any]]:
    return [doc for name in _kustomization()["resources"] for doc in _documents(name)]


def _by_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in _resources() if doc["kind"] == kind}


def _pod(doc: dict[str, Any]) -> dict[str, Any]:
    spec = doc["spec"]
    if doc["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    return dict(spec["template"])


def _containers() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    workloads = ("Deployment", "Job", "CronJob")
    return [
        (doc, container)
        for doc in _resources()
        if doc["kind"] in workloads
        for container in _pod(doc)["spec"]["containers"]
    ]


def _compose() -> dict[str, Any]:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())["services"]


def _joined(command: list[str] | str) -> str:
    return " ".join(command) if isinstance(command, list) else command


def test_kustomize_lists_every_manifest() -> None:
    listed = set(_kustomization()["resources"])
    present = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
    assert listed == present
    assert {image["name"] for image in _kustomization()["images"]} == {IMAGE}


@pytest.mark.parametrize("name", sorted(p.name for p in K8S.glob("*.yaml")))
def test_every_manifest_is_valid_kubernetes(name: str) -> None:
    if name == "kustomization.yaml":
        pytest.skip("kustomize's own file, no Kubernetes object")
    for doc in _documents(name):
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)


def test_the_layout_is_compose_s() -> None:
    deployments = _by_kind("Deployment")
    assert set(deployments) == {"patience-http", "patience-ws"}
    assert set(_by_kind("Job")) == {"patience-migrate"}
    cronjobs = {"patience-dailies", "patience-races", "patience-guests", "patience-analysis"}
    assert set(_by_kind("CronJob")) == cronjobs
    compose = _compose()
    commands = {doc["metadata"]["name"]: _joined(c["command"]) for doc, c in _containers()}
    assert commands["patience-http"] == _joined(compose["http"]["command"])
    assert commands["patience-ws"] == _joined(compose["ws"]["command"])
    assert commands["patience-migrate"] == "sh -c " + compose["migrate"]["command"][2]
    assert "create_dailies --days 2" in commands["patience-dailies"]
    assert commands["patience-guests"] == "python manage.py guests_purge"
    assert "analyse_games --queue-days --idle 60" in _joined(compose["analysis"]["command"])
    assert commands["patience-analysis"].endswith("analyse_games --queue-days --idle 60")
    assert commands["patience-races"].startswith(_joined(compose["races"]["command"]))
    assert deployments["patience-http"]["spec"]["replicas"] >= 2
    assert deployments["patience-ws"]["spec"]["replicas"] >= 2


def test_every_container_runs_the_one_image_with_the_settings() -> None:
    config = _by_kind("ConfigMap")["patience-config"]["data"]
    secret = yaml.safe_load((K8S / "secret.example.yaml").read_text())["stringData"]
    for doc, container in _containers():
        assert container["image"] == IMAGE, doc["metadata"]["name"]
        sources = container["envFrom"]
        assert {"configMapRef": {"name": "patience-config"}} in sources
        assert {"secretRef": {"name": "patience-secrets"}} in sources
    assert set(config) | set(secret) >= SETTINGS
    assert not set(config) & set(secret)


def test_servers_probe_liveness_and_readiness_at_served_paths() -> None:
    for name, deployment in _by_kind("Deployment").items():
        (container,) = _pod(deployment)["spec"]["containers"]
        ports = {port["name"]: port["containerPort"] for port in container["ports"]}
        assert ports == {"http": 8000}
        probes = {kind: container[f"{kind}Probe"]["httpGet"] for kind in ("liveness", "readiness")}
        assert probes["liveness"]["path"] == "/api/v1/health/live/"
        assert probes["readiness"]["path"] == "/api/v1/health/ready/"
        for probe in probes.values():
            assert str(resolve(probe["path"]).url_name).startswith("health-"), name
            assert probe["port"] == "http"
            # The kubelet's Host is the pod's address: an allowed host is sent instead.
            (host,) = probe["httpHeaders"]
            allowed = _by_kind("ConfigMap")["patience-config"]["data"]["ALLOWED_HOSTS"]
            assert host["name"] == "Host" and host["value"] in allowed.split(",")


def test_disruption_budgets_and_services_select_the_servers() -> None:
    budgets, services = _by_kind("PodDisruptionBudget"), _by_kind("Service")
    for name, deployment in _by_kind("Deployment").items():
        labels = _pod(deployment)["metadata"]["labels"]
        assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert budgets[name]["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert budgets[name]["spec"]["maxUnavailable"] < deployment["spec"]["replicas"]
        assert services[name]["spec"]["selector"].items() <= labels.items()


def test_gunicorn_pods_add_up_their_workers_metrics() -> None:
    http = _by_kind("Deployment")["patience-http"]
    (container,) = _pod(http)["spec"]["containers"]
    env = {item["name"]: item["value"] for item in container["env"]}
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert env["PROMETHEUS_MULTIPROC_DIR"] in mounts
    assert "python:patience_site.gunicorn" in container["command"]


def test_the_jobs_never_overlap_themselves() -> None:
    for cronjob in _by_kind("CronJob").values():
        assert cronjob["spec"]["concurrencyPolicy"] == "Forbid"


def test_database_connections_fit_postgres_with_a_reserve() -> None:
    """Every server pod at once, one more of each during a rolling update, and every job."""
    config = _by_kind("ConfigMap")["patience-config"]["data"]
    budget = {}
    for doc, container in _containers():
        env = {**config, **{item["name"]: item["value"] for item in container.get("env", [])}}
        pods = 1
        if doc["kind"] == "Deployment":
            pods = doc["spec"]["replicas"] + doc["spec"]["strategy"]["rollingUpdate"]["maxSurge"]
        budget[doc["metadata"]["name"]] = pods * db_budget.connections(
            _joined(container["command"]), env
        )
    assert sum(budget.values()) <= db_budget.MAX_CONNECTIONS - db_budget.RESERVE, budget
