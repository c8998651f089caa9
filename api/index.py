"""``GET /api/v1/``: an index of the API's parts, with links, for people and programs.

It is read from the URL routes themselves (REST and WebSocket), so it lists
every part there is and no other: each route's name, its address (path
parameters as ``{name}``, URI-template style), its methods and the first
sentence of its view's docstring (a sentence may run over several lines).
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.urls import URLPattern
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

#: Methods a client calls (``options`` and ``head`` come with every view).
METHODS = ("get", "post", "put", "patch", "delete")

#: What the routes of drf-spectacular's views are (they have no docstring of ours).
ABOUT = {
    "schema": "The OpenAPI 3 schema of this API (YAML; `?format=json` for JSON).",
    "docs": "Swagger UI: the API's interactive documentation.",
    "redoc": "Redoc: the API's documentation on one page.",
}


class LinkSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The route's name.")
    href = serializers.CharField(help_text="Absolute address; `{name}` marks a path parameter.")
    methods = serializers.ListField(child=serializers.CharField())
    description = serializers.CharField()


class SocketSerializer(serializers.Serializer):
    href = serializers.CharField(help_text="Absolute `ws:` or `wss:` address.")
    description = serializers.CharField()


class IndexSerializer(serializers.Serializer):
    title = serializers.CharField()
    version = serializers.CharField()
    links = LinkSerializer(many=True, help_text="Every REST route, docs and schema included.")
    sockets = SocketSerializer(many=True, help_text="The WebSocket routes.")


def _template(route: str) -> str:
    """A Django route in URI-template form: ``games/<int:game_id>/`` -> ``games/{game_id}/``."""
    return re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


#: A sentence: up to the first ".", "!" or "?" followed by a space or the end.
_SENTENCE = re.compile(r"(.+?[.!?])(?=\s|$)")


def _summary(view: Any) -> str:
    """The first sentence of a docstring, whose lines are wrapped: joined, it is whole."""
    paragraph = " ".join((view.__doc__ or "").strip().split("\n\n")[0].split())
    found = _SENTENCE.match(paragraph)
    return found.group(1) if found else paragraph


def _routes(patterns: list[Any]) -> list[tuple[URLPattern, str]]:
    """The named routes (the catch-alls are regular expressions: left out)."""
    return [(p, _template(str(p.pattern))) for p in patterns if not str(p.pattern).startswith("^")]


class IndexView(APIView):
    """This index: every part of the API with its address, methods and purpose."""

    permission_classes = [AllowAny]

    @extend_schema(operation_id="index", tags=["about"], responses={200: IndexSerializer})
    def get(self, request: Request) -> Response:
        from api.routing import websocket_urlpatterns
        from api.urls import urlpatterns  # they import this module

        base = request.build_absolute_uri("/api/v1/")
        ws_base = f"{'wss' if request.is_secure() else 'ws'}://{request.get_host()}/"
        links = []
        for pattern, path in _routes(urlpatterns):
            # as_view() sets view_class (as_asgi() consumer_class): the stubs see a plain callable.
            view = pattern.callback.view_class  # type: ignore[attr-defined]
            links.append(
                {
                    "name": pattern.name,
                    "href": base + path,
                    "methods": [m.upper() for m in METHODS if hasattr(view, m)],
                    "description": ABOUT.get(pattern.name or "") or _summary(view),
                }
            )
        sockets = [
            {"href": ws_base + path, "description": _summary(pattern.callback.consumer_class)}  # type: ignore[attr-defined]
            for pattern, path in _routes(websocket_urlpatterns)
        ]
        conf = settings.SPECTACULAR_SETTINGS
        return Response(
            {"title": conf["TITLE"], "version": conf["VERSION"], "links": links, "sockets": sockets}
        )
