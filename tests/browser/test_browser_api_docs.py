"""The API's docs pages render in a browser that can reach nothing but this server."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def only_this_server(page: Any, base: str) -> list[str]:
    """Refuse every request to another host; returns the list of refused addresses."""
    refused: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(base):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return refused


def test_swagger_ui_and_redoc_work_offline(live_server_url: str, page: Any) -> None:
    refused = only_this_server(page, live_server_url)
    page.goto(live_server_url + "/api/v1/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Patience API")
    expect(page.locator(".opblock-summary-path").first).to_be_visible()
    assert page.locator("text=/api/v1/auth/token/").count() >= 1
    expect(page.locator('.swagger-ui .info a[href="/api/v1/asyncapi/"]')).to_be_visible()

    page.goto(live_server_url + "/api/v1/redoc/")
    expect(page.locator("h1").first).to_contain_text("Patience API")
    expect(page.get_by_text("/api/v1/auth/token/").first).to_be_attached()
    expect(page.locator('a[href="/api/v1/asyncapi/"]').first).to_be_attached()
    # Redoc's "API docs by Redocly" footer shows its logo from Redocly's server; the
    # page does not need it (no Redoc setting hides it). Nothing else may leave.
    assert [url for url in refused if not url.startswith("https://cdn.redoc.ly/")] == []
