import pytest


@pytest.mark.django_db
def test_health_ok(client):
    response = client.get("/api/v1/health/")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_openapi_schema_json(client):
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "Patience API"
    assert schema["info"]["version"] == "1.0.0"
    assert "/api/v1/health/" in schema["paths"]


def test_openapi_schema_yaml(client):
    import yaml

    response = client.get("/api/v1/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert str(schema["openapi"]).startswith("3.")


def test_docs_page(client):
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
