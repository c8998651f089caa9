"""REST probes: health, liveness and readiness."""

from __future__ import annotations

from django.db import connection
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from core.errors import NotReady
from games.selectors import health as health_selectors


class HealthView(APIView):
    """The first probe, kept for the probes that use it: answers only when the database is
    reachable (``health/live/`` and ``health/ready/`` tell the two cases apart)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

    @extend_schema(
        responses=inline_serializer("Health", fields={"status": serializers.CharField()}),
    )
    def get(self, request: Request) -> Response:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return Response({"status": "ok"})


#: Seconds a load balancer is asked to wait before probing a process that is not ready.
READY_RETRY_AFTER = 5


class LiveView(APIView):
    """Liveness probe: the process answers. It touches no database, so an outage of
    PostgreSQL gets no process restarted (readiness takes it out of the traffic instead)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

    @extend_schema(
        tags=["health"],
        responses=inline_serializer("Live", fields={"status": serializers.CharField()}),
    )
    def get(self, request: Request) -> Response:
        return Response({"status": "ok"})


class ReadyView(APIView):
    """Readiness probe: the database answers, every migration is applied and today's
    dailies are dealt; else 503 ``not_ready`` with the failing checks in ``details.checks``."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

    @extend_schema(
        tags=["health"],
        responses={
            200: inline_serializer("Ready", fields={"status": serializers.CharField()}),
            503: OpenApiResponse(
                s.ErrorSerializer,
                description="Not ready (`not_ready`): `details.checks` names each failing "
                "check (`database`, `migrations`, `dailies`) with why.",
            ),
        },
    )
    def get(self, request: Request) -> Response:
        if failures := health_selectors.readiness_failures():
            raise NotReady(
                "not ready: " + ", ".join(failures),
                details={"checks": failures, "retry_after": READY_RETRY_AFTER},
            )
        return Response({"status": "ok"})
