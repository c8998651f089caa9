"""OpenAPI generation: every operation documents every error status it can answer.

The views document the errors of their own logic (``api.openapi.errors``); this
adds the ones DRF and Django give around them, which any client can meet:

- 401 where credentials are read: a bad or revoked token is refused even on a
  public endpoint;
- 403 on writes: a session without its CSRF token;
- 404 where a path names an object;
- 400 on a paged list: a cursor that is not one of the list's;
- 406 always: an ``Accept`` header without JSON;
- 400, 413 and 415 where a body is read: not JSON, over
  ``DATA_UPLOAD_MAX_MEMORY_SIZE``, or of another media type (413 on every write:
  the CSRF check of a session reads a form body);
- 429 where a rate limit applies.

Every answer that invites a retry (429, 503) carries ``Retry-After`` and the
same seconds in ``error.details.retry_after`` (``retry_after_headers``).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework.authentication import SessionAuthentication

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
WITH_BODY = {"POST", "PUT", "PATCH"}


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's schema of a view, with the implicit error answers added."""

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        # Not get_response_serializers(): @extend_schema(responses=...) replaces that one.
        from api.openapi import errors  # the views use this class through the settings

        responses = super()._get_response_bodies(direction)
        for code, response in errors(*self.implicit_errors()).items():
            if str(code) not in responses:
                responses[str(code)] = self._get_response_for_code(
                    response, str(code), direction=direction
                )
        return dict(sorted(responses.items(), key=lambda item: int(item[0])))

    def implicit_errors(self) -> list[int]:
        view, method = self.view, self.method.upper()
        authenticators = view.get_authenticators()
        codes = {406}
        if authenticators:
            codes.add(401)
        if method in WRITES and any(isinstance(a, SessionAuthentication) for a in authenticators):
            codes.add(403)
        if "{" in self.path:
            codes.add(404)
        if method == "GET" and getattr(view, "pagination_class", None) is not None:
            codes.add(400)  # a cursor that is not one of the list's
        if method in WITH_BODY:
            codes.add(413)
            if self.get_request_serializer() is not None:
                codes.update((400, 415))
        if view.get_throttles():
            codes.add(429)
        return sorted(codes)


#: Statuses that invite a retry: the answer says when.
RETRY_STATUSES = ("429", "503")


def retry_after_headers(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: every 429 and 503 answer declares ``Retry-After``
    (seconds), which ``api.errors`` sets from ``error.details.retry_after``."""
    header = {
        "Retry-After": {
            "schema": {"type": "integer", "minimum": 0},
            "required": True,
            "description": "Seconds to wait before trying again; the same number is in "
            "`error.details.retry_after`.",
        }
    }
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                if status in RETRY_STATUSES:
                    response["headers"] = {**response.get("headers", {}), **header}
    return result
