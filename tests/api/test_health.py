from typing import Any, NoReturn

import pytest
from django.test import Client

from games.models import Deal


@pytest.mark.django_db
def test_health_ok(client: Client) -> None:
    response = client.get("/api/v1/health/")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_openapi_schema_json(client: Client) -> None:
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "Patience API"
    assert schema["info"]["version"] == "1.0.0"
    assert "/api/v1/health/" in schema["paths"]


def test_openapi_schema_yaml(client: Client) -> None:
    import yaml

    response = client.get("/api/v1/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert str(schema["openapi"]).startswith("3.")


def test_docs_page(client: Client) -> None:
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200


# -- liveness and readiness -----------------------------------------------------------------


def test_live_answers_without_touching_the_database(client: Client) -> None:
    # No database access is allowed here: a query would fail the test.
    response = client.get("/api/v1/health/live/")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.fixture
def dailies_today(db: None) -> list[Deal]:
    from core import clock
    from games.engine import VARIANTS
    from games.services.dailies import daily_create

    return [daily_create(key, clock.today()) for key in VARIANTS]


def test_ready_when_migrated_and_dealt(client: Client, dailies_today: list[Deal]) -> None:
    response = client.get("/api/v1/health/ready/")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def _not_ready(response: Any) -> dict[str, str]:
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "not_ready"
    assert response["Retry-After"] == str(error["details"]["retry_after"])
    return error["details"]["checks"]


@pytest.mark.django_db
def test_not_ready_until_todays_dailies_are_dealt(client: Client) -> None:
    from games.engine import VARIANTS

    checks = _not_ready(client.get("/api/v1/health/ready/"))
    assert set(checks) == {"dailies"}
    assert all(key in checks["dailies"] for key in VARIANTS)


def test_not_ready_with_a_migration_pending(
    client: Client, dailies_today: list[Deal], monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db.migrations.executor import MigrationExecutor

    from games.selectors import health

    monkeypatch.setattr(health, "_migrated", [])
    monkeypatch.setattr(MigrationExecutor, "migration_plan", lambda self, targets: [("x", False)])
    checks = _not_ready(client.get("/api/v1/health/ready/"))
    assert checks == {"migrations": "1 migration(s) not applied"}


def test_not_ready_without_the_database(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    from django.db import OperationalError

    from games.selectors import health

    class Down:
        def cursor(self) -> NoReturn:
            raise OperationalError("connection refused")

    monkeypatch.setattr(health, "connection", Down())
    checks = _not_ready(client.get("/api/v1/health/ready/"))
    assert checks == {"database": "unreachable: OperationalError"}


def test_probes_are_in_the_schema(client: Client) -> None:
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    ready = schema["paths"]["/api/v1/health/ready/"]["get"]["responses"]
    assert {"200", "503"} <= set(ready)
    assert "/api/v1/health/live/" in schema["paths"]
