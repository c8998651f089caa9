"""What ``OPTIONS`` answers on every API route."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rest_framework.metadata import SimpleMetadata
from rest_framework.request import Request

if TYPE_CHECKING:  # DRF's views import this module through the settings
    from rest_framework.views import APIView


class Metadata(SimpleMetadata):
    """The route's name, description, renderers and parsers (and the ``Allow`` header).

    DRF's default also describes the input of each write method by asking a generic
    view for its serializer. This API's views declare their inputs to the OpenAPI
    schema instead (``/api/v1/schema/``, one definition of each shape), and a list view
    has no serializer to give: asked, it failed with a 500. The schema is where the
    inputs are described.
    """

    def determine_actions(self, request: Request, view: APIView) -> dict[str, Any]:
        return {}
