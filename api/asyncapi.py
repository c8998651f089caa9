"""``GET /api/v1/asyncapi/``: the WebSocket API as data (AsyncAPI 3), beside the OpenAPI schema.

The document is ``api/asyncapi.yaml``, kept next to the consumers it describes
(``api.consumers``). Its payloads name the OpenAPI schema's components for the shapes
inside the frames, so each public shape keeps its one definition (``api.shapes``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import View

DOCUMENT = Path(__file__).with_name("asyncapi.yaml")


@cache
def asyncapi_document() -> dict[str, Any]:
    """The document as data (read once per process)."""
    return yaml.safe_load(DOCUMENT.read_text())


class AsyncApiView(View):
    """The AsyncAPI 3 document of the WebSockets (YAML; `?format=json` for JSON)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if request.GET.get("format") == "json":
            return JsonResponse(asyncapi_document())
        return HttpResponse(DOCUMENT.read_bytes(), content_type="application/yaml")
