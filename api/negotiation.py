"""Content negotiation of the REST API."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request

#: The renderer of metadata and errors (DRF's renderers keep no state between responses).
JSON = JSONRenderer()


class ContentNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, with the common case answered before any header is parsed.

    Programs send no ``Accept``, ``*/*`` or exactly the first renderer's type (JSON):
    parsing and ranking those headers was about 5 % of a REST move's server CPU, for the
    answer every such request gets. Any other header, and a ``?format=``, is negotiated
    by DRF as before (a header that allows no JSON is still 406).

    ``OPTIONS`` answers JSON on every route, the HTML pages of the API's documentation
    included (``api.metadata``): their renderer has no page for it.
    """

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, Any]:
        if request.method == "OPTIONS":
            return JSON, JSON.media_type
        renderers = list(renderers)
        accept = request.META.get("HTTP_ACCEPT", "*/*")  # none: anything, as in DRF
        if (
            renderers
            and format_suffix is None
            and self.settings.URL_FORMAT_OVERRIDE not in request.query_params
            and accept in ("*/*", renderers[0].media_type)
        ):
            return renderers[0], renderers[0].media_type
        return super().select_renderer(request, renderers, format_suffix)
