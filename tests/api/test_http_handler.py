"""api.http: Django's HTTP requests under daphne, one hop onto the fixed HTTP threads."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any
from unittest import mock

import pytest
from channels.testing import HttpCommunicator

from api import threads
from api.http import ThreadPoolASGIHandler
from api.views import VariantListView

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

HOST = [(b"host", b"testserver")]


@pytest.fixture
def handler() -> Any:
    yield ThreadPoolASGIHandler()
    threads.close_db_connections()


async def test_the_middleware_chain_is_synchronous(handler):
    # Async mode would hop to a thread and back twice per middleware.
    assert not asyncio.iscoroutinefunction(handler._middleware_chain)


async def test_a_request_is_served_on_an_http_thread(handler):
    seen: list[str] = []
    real_get = VariantListView.get

    def spy(view: Any, request: Any) -> Any:
        seen.append(threading.current_thread().name)
        return real_get(view, request)

    with mock.patch.object(VariantListView, "get", spy):
        response = await HttpCommunicator(
            handler, "GET", "/api/v1/variants/", headers=HOST
        ).get_response()
    assert response["status"] == 200
    assert "bristol" in [v["key"] for v in json.loads(response["body"])]
    assert len(seen) == 1 and seen[0].startswith("http")


async def test_errors_keep_the_envelope_and_middleware_headers(handler):
    response = await HttpCommunicator(
        handler, "GET", "/api/v1/no-such-thing/", headers=HOST
    ).get_response()
    assert response["status"] == 404
    assert json.loads(response["body"])["error"]["code"] == "not_found"
    headers = {k.decode().lower(): v for k, v in response["headers"]}
    assert headers["x-frame-options"] == b"DENY"  # the sync chain ran the middleware


async def test_other_scopes_are_refused(handler):
    with pytest.raises(ValueError):
        await handler({"type": "websocket"}, None, None)
