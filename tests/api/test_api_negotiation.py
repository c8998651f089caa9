"""Content negotiation: the common headers take the first renderer without parsing; any
other header is negotiated by DRF as before."""

from __future__ import annotations

from typing import Any, NoReturn

import pytest
from django.test import RequestFactory
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request

from api.negotiation import ContentNegotiation

pytestmark = pytest.mark.django_db

ME = "/api/v1/auth/me/"

HEADERS = [
    None,
    "",
    "*/*",
    "application/json",
    "text/html",
    "application/json; indent=4",
    "text/html, application/json;q=0.9",
    "application/*",
    "image/png",
]


@pytest.mark.parametrize("accept", HEADERS)
@pytest.mark.parametrize("renderers", [[JSONRenderer()], [JSONRenderer(), BrowsableAPIRenderer()]])
def test_it_chooses_as_drf_does(
    accept: str | None, renderers: list[JSONRenderer | BrowsableAPIRenderer]
) -> None:
    extra: dict[str, Any] = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(RequestFactory().get("/x/", **extra))
    try:
        expected = DefaultContentNegotiation().select_renderer(request, renderers)
    except Exception as exc:  # 406: both refuse alike
        with pytest.raises(type(exc)):
            ContentNegotiation().select_renderer(request, renderers)
        return
    renderer, media_type = ContentNegotiation().select_renderer(request, renderers)
    assert (renderer, media_type) == expected


@pytest.mark.parametrize("accept", ["*/*", "application/json"])
def test_a_common_header_is_not_parsed(accept: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def parsed(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("the header was parsed")

    monkeypatch.setattr(DefaultContentNegotiation, "_get_parsed_accept_list", parsed)
    request = Request(RequestFactory().get("/x/", HTTP_ACCEPT=accept))
    renderer, media_type = ContentNegotiation().select_renderer(request, [JSONRenderer()])
    assert media_type == "application/json"


def test_the_api_answers_json_and_still_negotiates(api: Any) -> None:
    assert api.get(ME)["Content-Type"] == "application/json"
    assert api.get(ME, HTTP_ACCEPT="*/*")["Content-Type"] == "application/json"
    indented = api.get(ME, HTTP_ACCEPT="application/json; indent=4")
    assert indented.status_code == 200 and b'\n    "id"' in indented.content
    refused = api.get(ME, HTTP_ACCEPT="text/html")
    assert refused.status_code == 406 and refused.json()["error"]["code"] == "not_acceptable"
    assert api.get(ME + "?format=json").status_code == 200
    assert api.get(ME + "?format=html").status_code == 404  # no such renderer, as in DRF
