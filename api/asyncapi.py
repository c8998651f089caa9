"""``GET /api/v1/asyncapi/``: the WebSocket API as data (AsyncAPI 3), beside the OpenAPI schema.

The document is ``api/asyncapi.yaml``, kept next to the consumers it describes
(``api.consumers``). Its payloads name the OpenAPI schema's components for the shapes
inside the frames, so each public shape keeps its one definition (``api.shapes``).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from django.http import HttpResponse, JsonResponse
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from api.negotiation import JSON

DOCUMENT = Path(__file__).with_name("asyncapi.yaml")


@cache
def asyncapi_document() -> dict[str, Any]:
    """The document as data (read once per process)."""
    return yaml.safe_load(DOCUMENT.read_text())


class _Fixed(BaseContentNegotiation):
    """The document picks its own type (``?format=``); errors are the JSON envelope."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        return JSON, JSON.media_type

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> None:
        return None


class AsyncApiView(APIView):
    """The AsyncAPI 3 document of the WebSockets (YAML; `?format=json` for JSON).

    A DRF view, with no authentication, so that every other method answers the error
    envelope like the rest of the API."""

    authentication_classes: list = []
    permission_classes: list = []
    content_negotiation_class = _Fixed
    schema = None  # documented by the OpenAPI description, not as an operation

    def get(self, request: Request) -> HttpResponse:
        if request.GET.get("format") == "json":
            return JsonResponse(asyncapi_document())
        return HttpResponse(DOCUMENT.read_bytes(), content_type="application/yaml")
